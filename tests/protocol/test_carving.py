"""A body's long base64 strings cut out before json.loads, read as slices of the body:
the document is the one json.loads makes, a file's base64 a slice where `keep` says a
file's is, and a body json.loads refuses is refused the same way."""

from __future__ import annotations

import json
import random
from typing import Any

import pytest

from n8n_a2a.protocol import carving
from n8n_a2a.protocol.carving import Carved
from n8n_a2a.protocol.errors import NotJSON
from n8n_a2a.protocol.strict import loads as strict_loads
from tests.support.documents import replaced

FILES: tuple[carving.Path, ...] = (("parts", None, "raw"),)
BASE64 = "QUJD" * 20_000  # 80,000 characters: past CARVE_AT


def texts(document: Any) -> Any:
    """The document with each Carved as the string json.loads would have made."""
    return replaced(document, Carved, lambda value: value.text())


def test_a_files_long_base64_is_a_slice_of_the_body() -> None:
    body = bytearray(json.dumps({"parts": [{"text": "hi"}, {"raw": BASE64}]}).encode())
    parsed = carving.loads(body, FILES, strict_loads)
    raw = parsed.document["parts"][1]["raw"]
    assert isinstance(raw, Carved) and raw.view.obj is body and not raw.url_safe
    assert raw.text() == BASE64
    assert parsed.rest == b'{"parts": [{"text": "hi"}, {"raw": NaN}]}'


def test_a_long_base64_elsewhere_is_put_back_as_its_string() -> None:
    document = {"parts": [{"text": BASE64, "metadata": {"raw": BASE64}}], "raw": BASE64}
    parsed = carving.loads(json.dumps(document).encode(), FILES, strict_loads)
    assert parsed.document == document
    assert len(parsed.rest) < 100


def test_url_safe_base64_is_said_so_and_padding_stays_with_the_string() -> None:
    body = json.dumps({"parts": [{"raw": BASE64 + "-_=="}]}).encode()
    raw = carving.loads(body, FILES, strict_loads).document["parts"][0]["raw"]
    assert isinstance(raw, Carved) and raw.url_safe and raw.text().endswith("-_==")


@pytest.mark.parametrize(
    "long_string",
    [
        BASE64[:-1] + " ",  # a space: no base64
        BASE64[:-1] + "\\u0041",  # an escape
        "QQ==" + BASE64,  # padding before the end
        BASE64[:-1] + "é",  # past ASCII
        "QUJD" * 100,  # short: not worth a cut
    ],
)
def test_what_is_not_a_long_base64_string_is_read_by_json_loads(long_string: str) -> None:
    body = ('{"parts": [{"raw": "' + long_string + '"}]}').encode()
    parsed = carving.loads(body, FILES, strict_loads)
    assert parsed.rest is body and parsed.document == json.loads(body)


@pytest.mark.parametrize(
    ("body", "error"),
    [
        ('{"parts": [{"raw": "' + BASE64 + '"}], "n": NaN}', NotJSON),
        ('{"parts": [{"raw": "' + BASE64 + '"}], "n": Infinity}', NotJSON),
        ('{"parts": [{"raw": "' + BASE64 + '"}], "n": -Infinity}', NotJSON),
        ('{"parts": [{"raw": "' + BASE64 + '"}], "n": 1', json.JSONDecodeError),
        ('{"' + BASE64 + '": 1}', None),  # a long key: read whole
        ('{"parts": [{"raw": "' + BASE64 + '" "x"}]}', json.JSONDecodeError),
        ('{"parts": [{"raw": -"' + BASE64 + '"}]}', json.JSONDecodeError),
    ],
)
def test_a_body_is_refused_as_json_loads_refuses_it(body: str, error: type | None) -> None:
    if error is None:
        assert carving.loads(body.encode(), FILES, strict_loads).document == json.loads(body)
        return
    with pytest.raises(error) as cut:
        carving.loads(body.encode(), FILES, strict_loads)
    with pytest.raises(error) as whole:
        strict_loads(body.encode())
    assert str(cut.value) == str(whole.value)


def test_a_body_of_many_strings_is_read_whole() -> None:
    many = ["x"] * carving.MAX_QUOTES + [BASE64]
    body = json.dumps({"parts": [{"raw": BASE64}], "many": many}).encode()
    assert carving.loads(body, FILES, strict_loads).rest is body


def test_a_body_not_in_utf_8_is_read_whole() -> None:
    body = json.dumps({"parts": [{"raw": BASE64}]}).encode("utf-16")
    parsed = carving.loads(body, FILES, strict_loads)
    assert parsed.rest is body and parsed.document["parts"][0]["raw"] == BASE64


def test_the_hook_refuses_an_infinity_of_the_bodys_own() -> None:
    give = carving._giving(iter([]))
    with pytest.raises(ValueError, match="Infinity is not JSON"):
        give("Infinity")


def test_bodies_read_as_json_loads_reads_them(monkeypatch: pytest.MonkeyPatch) -> None:
    """Random bodies of strings with escapes, backslash runs, quotes and base64, valid or
    broken: cut at 4 characters, each reads as json.loads reads it, or fails as it does."""
    monkeypatch.setattr(carving, "CARVE_AT", 4)
    chance = random.Random(20261204)
    pieces = ['"QUJD"', '"QUJDQQ=="', '"a\\\\"', '"\\\\\\""', '"q\\"QUJD"', "NaN", '"-_AZ"']
    pieces += ['"QU JD"', "1", "[]", '{"k":"QUJDRA"}', '"é"', '"\\u0041QUJD"', '"=QUJD"']
    for _ in range(3000):
        items = [chance.choice(pieces) for _ in range(chance.randrange(1, 6))]
        body = "[" + ",".join(items) + "]" if chance.random() < 0.9 else " ".join(items)
        raw = body.encode()
        try:
            expected = json.loads(raw)
        except ValueError:
            with pytest.raises(ValueError):
                carving.loads(raw, (), json.loads)
            continue
        found = texts(carving.loads(raw, ((None,),), json.loads).document)
        assert json.dumps(found) == json.dumps(expected), body  # (NaN is not NaN)
