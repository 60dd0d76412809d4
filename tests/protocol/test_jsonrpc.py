from __future__ import annotations

import json
import math

import pytest

from n8n_a2a.protocol.errors import ErrorCode, InvalidRequest, RequestId
from n8n_a2a.protocol.jsonrpc import error_response, parse_request, result_response
from n8n_a2a.protocol.strict import MAX_DEPTH


def test_a_request_parses() -> None:
    request = parse_request(b'{"jsonrpc":"2.0","id":3,"method":"GetTask","params":{"id":"t"}}')
    assert (request.id, request.method, request.params) == (3, "GetTask", {"id": "t"})


def test_params_default_to_an_empty_object() -> None:
    assert parse_request(b'{"jsonrpc":"2.0","id":"a","method":"GetTask"}').params == {}


@pytest.mark.parametrize(
    ("body", "code", "request_id"),
    [
        (b"{", ErrorCode.PARSE_ERROR, None),
        (b"\xff", ErrorCode.PARSE_ERROR, None),
        (b"[" * 100_000, ErrorCode.PARSE_ERROR, None),
        (b"[{}]", ErrorCode.INVALID_REQUEST, None),
        (b'"x"', ErrorCode.INVALID_REQUEST, None),
        (b'{"jsonrpc":"2.0","method":"m"}', ErrorCode.INVALID_REQUEST, None),
        (b'{"jsonrpc":"2.0","id":true,"method":"m"}', ErrorCode.INVALID_REQUEST, None),
        (b'{"jsonrpc":"2.0","id":{},"method":"m"}', ErrorCode.INVALID_REQUEST, None),
        (b'{"id":1,"method":"m"}', ErrorCode.INVALID_REQUEST, 1),
        (b'{"jsonrpc":"2.0","id":1,"method":""}', ErrorCode.INVALID_REQUEST, 1),
        (b'{"jsonrpc":"2.0","id":1,"method":7}', ErrorCode.INVALID_REQUEST, 1),
        (b'{"jsonrpc":"2.0","id":1,"method":"m","params":[1]}', ErrorCode.INVALID_PARAMS, 1),
    ],
)
def test_bad_envelopes(body: bytes, code: ErrorCode, request_id: object) -> None:
    with pytest.raises(InvalidRequest) as raised:
        parse_request(body)
    assert raised.value.code is code
    assert raised.value.request_id == request_id


@pytest.mark.parametrize("request_id", [1, "1", 1.5, None, 0, ""])
def test_the_response_id_is_the_requests_type_and_all(request_id: RequestId) -> None:
    for encoded in (result_response(request_id, {}), error_response(request_id, {})):
        assert json.loads(bytes(encoded))["id"] == request_id
        assert type(json.loads(bytes(encoded))["id"]) is type(request_id)


@pytest.mark.parametrize(
    "body",
    [
        b'{"jsonrpc":"2.0","id":NaN,"method":"m"}',
        b'{"jsonrpc":"2.0","id":1,"method":"m","params":{"n":Infinity}}',
        b'{"jsonrpc":"2.0","id":1,"method":"m","params":{"n":[-Infinity]}}',
    ],
)
def test_nan_and_infinity_are_not_json(body: bytes) -> None:
    with pytest.raises(InvalidRequest) as raised:
        parse_request(body)
    assert raised.value.code is ErrorCode.PARSE_ERROR
    assert raised.value.request_id is None


def test_a_number_of_too_many_digits_is_a_parse_error_that_says_so() -> None:
    with pytest.raises(InvalidRequest) as raised:
        parse_request(b'{"jsonrpc":"2.0","id":1,"method":"m","params":{"n":' + b"9" * 5000 + b"}}")
    assert raised.value.code is ErrorCode.PARSE_ERROR
    assert "digits" in raised.value.message
    assert "sys." not in raised.value.message


@pytest.mark.parametrize("request_id", [b'"\\ud800"', b'"ok \\ud83d"', b"1e400", b"-1e400"])
def test_an_id_that_cannot_be_written_back_is_an_invalid_request_without_id(
    request_id: bytes,
) -> None:
    with pytest.raises(InvalidRequest) as raised:
        parse_request(b'{"jsonrpc":"2.0","id":' + request_id + b',"method":"m","params":{}}')
    assert raised.value.code is ErrorCode.INVALID_REQUEST
    assert raised.value.request_id is None


@pytest.mark.parametrize(
    ("params", "path"),
    [
        (b'{"message":{"metadata":{"n":"\\ud800"}}}', "params.message.metadata.n"),
        (
            b'{"message":{"parts":[{"text":"ok"},{"text":"cut \\ud83d"}]}}',
            "params.message.parts[1].text",
        ),
        (b'{"message":{"metadata":{"\\udfff":1}}}', "params.message.metadata"),
        (b'{"message":{"metadata":{"n":[1,1e400]}}}', "params.message.metadata.n[1]"),
        (b'{"id":"\\udc00x"}', "params.id"),
    ],
)
def test_params_that_cannot_be_written_back_are_refused_naming_the_field(
    params: bytes, path: str
) -> None:
    with pytest.raises(InvalidRequest) as raised:
        parse_request(b'{"jsonrpc":"2.0","id":"r","method":"m","params":' + params + b"}")
    assert raised.value.code is ErrorCode.INVALID_PARAMS
    assert raised.value.request_id == "r"
    assert raised.value.message.startswith(path + " ")
    raised.value.message.encode()  # the message itself can be written


def nested(depth: int) -> bytes:
    return b'{"a":' * depth + b"1" + b"}" * depth


def test_params_nested_past_the_bound_are_refused() -> None:
    envelope = b'{"jsonrpc":"2.0","id":1,"method":"m","params":%s}'
    parse_request(envelope % nested(MAX_DEPTH))
    with pytest.raises(InvalidRequest) as raised:
        parse_request(envelope % nested(MAX_DEPTH + 1))
    assert raised.value.code is ErrorCode.INVALID_PARAMS
    assert raised.value.request_id == 1
    assert f"more than {MAX_DEPTH} levels" in raised.value.message


def test_text_beyond_ascii_is_taken() -> None:
    body = '{"jsonrpc":"2.0","id":"é","method":"m","params":{"ü":["😀 \\ud83d\\ude00"]}}'
    request = parse_request(body.encode())
    assert request.id == "é"
    assert request.params == {"ü": ["😀 😀"]}


def strict(body: bytes) -> object:
    """The body read as RFC 8259 JSON: UTF-8 (strict), no NaN or Infinity."""
    return json.loads(body.decode("utf-8"), parse_constant=pytest.fail)


@pytest.mark.parametrize("value", [math.nan, math.inf, -math.inf])
def test_an_answer_holding_what_json_cannot_write_is_written_with_null(value: float) -> None:
    # No check lets such a value into a task; were one there, its answers must not fail.
    assert strict(bytes(result_response(1, {"n": [value, 1.5]}))) == {
        "jsonrpc": "2.0",
        "id": 1,
        "result": {"n": [None, 1.5]},
    }


def test_an_answer_holding_a_lone_surrogate_is_written_with_u_fffd() -> None:
    answer = strict(bytes(result_response("r", {"\ud800": "a\udfffb"})))
    assert answer == {"jsonrpc": "2.0", "id": "r", "result": {"\ufffd": "a\ufffdb"}}


def test_an_answer_nested_past_the_encoders_reach_is_written_cut() -> None:
    deep: list[object] = []
    for _ in range(5000):
        deep = [deep]
    answer = strict(bytes(result_response(2, {"data": deep})))
    assert isinstance(answer, dict) and answer["id"] == 2
    depth, value = 0, answer["result"]["data"]
    while isinstance(value, list):
        depth, value = depth + 1, value[0]
    assert value is None and MAX_DEPTH < depth < 2 * MAX_DEPTH
