"""Strict JSON: the bounds of a document, and where a refused value sits, quoted and cut."""

from __future__ import annotations

import json

import pytest

from n8n_a2a.protocol import rest
from n8n_a2a.protocol.errors import A2AError, ErrorCode, InvalidRequest
from n8n_a2a.protocol.jsonrpc import parse_request
from n8n_a2a.protocol.strict import MAX_PATH_CHARS, MAX_VALUES, loads, unwritable, values_in


def envelope(params: str) -> bytes:
    return b'{"jsonrpc":"2.0","id":"v","method":"m","params":' + params.encode() + b"}"


def test_params_of_more_values_than_the_bound_are_refused_naming_it() -> None:
    # params and the list are 2 values beside the list's members.
    parse_request(envelope('{"metadata":[' + ",".join(["{}"] * (MAX_VALUES - 2)) + "]}"))
    with pytest.raises(InvalidRequest) as raised:
        parse_request(envelope('{"metadata":[' + ",".join(["{}"] * (MAX_VALUES - 1)) + "]}"))
    assert (raised.value.code, raised.value.request_id) == (ErrorCode.INVALID_PARAMS, "v")
    assert raised.value.message == f"params holds more than {MAX_VALUES:,} JSON values"


@pytest.mark.parametrize("item", ["0", '""', "null", "[]", '{"k":1}'])
def test_every_kind_of_value_counts(item: str) -> None:
    values = '{"a":[' + ",".join([item] * MAX_VALUES) + "]}"
    assert f"more than {MAX_VALUES:,} JSON values" in (unwritable(json.loads(values), "x") or "")


def test_a_rest_body_is_held_to_the_same_bound() -> None:
    body = ('{"message":{"metadata":[' + ",".join(["1"] * MAX_VALUES) + "]}}").encode()
    matched, ids = rest.route("POST", "/message:send")
    with pytest.raises(A2AError) as raised:
        rest.params_of(matched, ids, {}, body)
    assert raised.value.code is ErrorCode.INVALID_PARAMS
    assert raised.value.message == f"body holds more than {MAX_VALUES:,} JSON values"


@pytest.mark.parametrize(
    ("key", "step"),
    [
        ("plain_name1", ".plain_name1"),
        ("with space", "['with space']"),
        ("line\nbreak", "['line\\nbreak']"),
        ("é", "['é']"),
        ("", "['']"),
        ("1st", "['1st']"),
    ],
)
def test_a_key_in_a_path_is_quoted_unless_it_is_a_plain_name(key: str, step: str) -> None:
    problem = unwritable({"m": {key: [float("inf")]}}, "params")
    assert problem == f"params.m{step}[0] is a number beyond the range of JSON numbers"


def test_a_path_of_long_keys_is_cut_at_both_ends() -> None:
    document: object = [float("-inf")]
    for _ in range(50):
        document = {"k" * 9000: document}
    problem = unwritable(document, "params") or ""
    where = problem.removesuffix(" is a number beyond the range of JSON numbers")
    assert len(where) <= MAX_PATH_CHARS + 3 and where.startswith("params['kkk")
    assert where.endswith("characters)'][0]")


def test_a_lone_surrogate_in_a_deep_key_or_string_is_found_where_it_sits() -> None:
    assert unwritable({"a": [{"b": "ok", "\udc00": 1}]}, "p") == (
        "p.a[0] has a key that is not valid Unicode text ('\\udc00')"
    )
    assert (unwritable({"a": [1, ["x", "y\ud800"]]}, "p") or "").startswith("p.a[1][1] is not")
    assert unwritable({"a": [1, ["x", "y\ud800"]]}, "p", text=False) is None


@pytest.mark.parametrize(
    ("value", "values"),
    [("x", 1), (None, 1), ([], 1), ({"a": [1, {"b": 2}]}, 5), ([[[[]]]], 4), ([0] * 300, 301)],
)
def test_a_document_s_values_are_counted_itself_included(value: object, values: int) -> None:
    assert values_in(value) == values


@pytest.mark.parametrize(
    "text",
    [
        '{"a": [1, "é"]}',
        '{"a": [1, "é"]}'.encode(),
        '{"a": [1, "é"]}'.encode("utf-16"),
        '{"a": [1, "é"]}'.encode("utf-32-le"),
        '\ufeff{"a": 1}'.encode(),
        b'"\\ud800"',
        b'"\xed\xa0\x80"',
        bytearray(b'{"a": 1}'),
    ],
)
def test_a_document_is_read_as_json_loads_reads_it(text: str | bytes | bytearray) -> None:
    assert loads(text) == json.loads(text)
    assert loads(text, unique_keys=True) == json.loads(text)


def test_a_str_that_begins_with_a_bom_is_refused_as_json_loads_refuses_it() -> None:
    with pytest.raises(json.JSONDecodeError, match="BOM"):
        json.loads('\ufeff{"a": 1}')
    with pytest.raises(json.JSONDecodeError, match="BOM"):
        loads('\ufeff{"a": 1}')
