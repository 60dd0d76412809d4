"""A file's bytes held as base64: read as strictly as binascii's strict mode reads them,
from a string or from a slice of the body they came in (never copied), and given back
whole: as base64, as a string, as bytes."""

from __future__ import annotations

import binascii
import random

import pytest

from n8n_a2a.protocol import base64_bytes
from n8n_a2a.protocol.base64_bytes import Base64Bytes
from n8n_a2a.protocol.carving import Carved

_URL_SAFE = str.maketrans("-_", "+/")


def proto_json_bytes(text: str) -> bytes | None:
    """What proto JSON's bytes read as, done the slow way: stripped, URL-safe letters made
    standard, padded, decoded in binascii's strict mode."""
    text = text.strip().translate(_URL_SAFE)
    try:
        return binascii.a2b_base64(text + "=" * (-len(text) % 4), strict_mode=True)
    except (binascii.Error, ValueError):
        return None


def strict_standard(text: str) -> bytes | None:
    try:
        return binascii.a2b_base64(text, strict_mode=True)
    except (binascii.Error, ValueError):
        return None


def decoded(found: Base64Bytes | None) -> bytes | None:
    return None if found is None else found.decoded()


CASES = [
    "",
    "QQ",
    "QQ=",
    "QQ==",
    "QUI",
    "QUI=",
    "QUJD",
    "Q",
    "QQ===",
    "=QQ=",
    "QQ==QQ==",
    " QQ== ",
    "Y-Q_",
    "YQ\u00e9=",
    "YQ==\n",
    "a+b/",
    "a-b_",
    "a+b_",
    "QUJD=",
    "QU=I",
    "\tQUJD\n",
    "QUJD\nQUJD",
    "QUJ",
    "====",
    "=",
    "QUJDRA",
    "QUJDRA=",
    "QUJDRA==",
]


@pytest.mark.parametrize("text", CASES)
def test_a_callers_base64_reads_as_proto_json_reads_it(text: str) -> None:
    assert decoded(base64_bytes.parse(text)) == proto_json_bytes(text)


@pytest.mark.parametrize("text", CASES)
def test_a_workflows_base64_reads_as_strict_standard_base64(text: str) -> None:
    assert decoded(base64_bytes.parse(text, proto=False)) == strict_standard(text)


def test_random_strings_read_as_binascii_reads_them_both_ways() -> None:
    letters = "AQZaqz09+/-_= \n.é"
    chance = random.Random(20261204)
    for _ in range(5000):
        text = "".join(chance.choice(letters) for _ in range(chance.randrange(13)))
        assert decoded(base64_bytes.parse(text)) == proto_json_bytes(text), text
        assert decoded(base64_bytes.parse(text, proto=False)) == strict_standard(text), text


def test_what_is_held_is_standard_padded_base64_and_its_size() -> None:
    found = base64_bytes.parse("_-8")
    assert found is not None
    assert (found.text(), found.size, len(found)) == ("/+8=", 2, 4)
    assert found == Base64Bytes.of_bytes(b"\xff\xef")


def test_a_carved_slice_is_held_as_it_is_never_copied() -> None:
    body = bytearray(b'{"raw":"' + b"QUJD" * 1000 + b'QQ"}')
    view = memoryview(body)[8:-2]
    found = base64_bytes.parse(Carved(view, url_safe=False))
    assert found is not None and found.size == 3001
    assert found.pieces[0] is view and found.pieces[1] == b"=="
    assert found.decoded() == b"ABC" * 1000 + b"A"


def test_a_carved_slice_is_checked_for_its_length_and_padding() -> None:
    assert base64_bytes.parse(Carved(memoryview(b"QUJDR"), url_safe=False)) is None
    assert base64_bytes.parse(Carved(memoryview(b"=="), url_safe=False)) is None
    # binascii's strict mode takes `=`s after whole groups of four: they are dropped.
    dropped = base64_bytes.parse(Carved(memoryview(b"QUJD=="), url_safe=False), proto=False)
    assert dropped is not None and dropped.pieces == (memoryview(b"QUJD"),)
    assert base64_bytes.parse(Carved(memoryview(b"QQ"), url_safe=False), proto=False) is None
    url_safe = base64_bytes.parse(Carved(memoryview(b"-_-_"), url_safe=True))
    assert url_safe is not None and url_safe.text() == "+/+/"
    assert base64_bytes.parse(Carved(memoryview(b"-_-_"), url_safe=True), proto=False) is None


@pytest.mark.parametrize("value", [None, 3, b"QUJD", ["QUJD"]])
def test_what_is_no_string_is_no_base64(value: object) -> None:
    assert base64_bytes.parse(value) is None


def test_bytes_encoded_come_back_whole() -> None:
    content = bytes(range(256)) * 3
    held = Base64Bytes.of_bytes(content)
    assert (held.size, held.decoded(), len(held)) == (768, content, 1024)
    assert repr(held) == "Base64Bytes(size=768)"
    assert held != Base64Bytes.of_bytes(content[1:]) and held != content
    assert hash(held) == hash(Base64Bytes.of_bytes(content))
