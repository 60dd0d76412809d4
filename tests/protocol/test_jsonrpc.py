from __future__ import annotations

import json

import pytest

from n8n_a2a.protocol.errors import ErrorCode
from n8n_a2a.protocol.jsonrpc import (
    InvalidRequest,
    RequestId,
    error_response,
    parse_request,
    result_response,
)


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
        assert json.loads(encoded)["id"] == request_id
        assert type(json.loads(encoded)["id"]) is type(request_id)
