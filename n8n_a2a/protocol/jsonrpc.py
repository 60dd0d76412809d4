"""JSON-RPC 2.0 envelopes: parse a request body, serialize a result or an error.

The response id is the request's, type and all: @a2a-js/sdk rejects "1" for 1.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from .errors import A2AError, ErrorCode
from .model import JSONObject

RequestId = str | int | float | None


@dataclass(frozen=True, slots=True)
class Request:
    id: RequestId
    method: str
    params: JSONObject


class InvalidRequest(A2AError):
    """The envelope itself is wrong; `request_id` is the id to echo (None when unreadable)."""

    def __init__(self, code: ErrorCode, message: str, request_id: RequestId = None) -> None:
        super().__init__(code, message)
        self.request_id = request_id


def parse_request(body: bytes) -> Request:
    """Parse one JSON-RPC request; raise InvalidRequest for anything else."""
    try:
        document = json.loads(body)
    except (UnicodeDecodeError, ValueError) as error:
        raise InvalidRequest(ErrorCode.PARSE_ERROR, f"Parse error: {error}") from None
    except RecursionError:
        raise InvalidRequest(ErrorCode.PARSE_ERROR, "Parse error: JSON nested too deeply") from None
    if isinstance(document, list):
        raise InvalidRequest(ErrorCode.INVALID_REQUEST, "Batch requests are not supported")
    if not isinstance(document, dict):
        raise InvalidRequest(ErrorCode.INVALID_REQUEST, "The request must be a JSON object")
    if "id" not in document:
        raise InvalidRequest(
            ErrorCode.INVALID_REQUEST, "'id' is required: A2A requests are not notifications"
        )
    request_id = document["id"]
    if isinstance(request_id, bool) or not isinstance(request_id, str | int | float | None):
        raise InvalidRequest(ErrorCode.INVALID_REQUEST, "'id' must be a string, number or null")
    if document.get("jsonrpc") != "2.0":
        raise InvalidRequest(ErrorCode.INVALID_REQUEST, "'jsonrpc' must be \"2.0\"", request_id)
    method = document.get("method")
    if not isinstance(method, str) or not method:
        raise InvalidRequest(
            ErrorCode.INVALID_REQUEST, "'method' must be a non-empty string", request_id
        )
    params = document.get("params", {})
    if not isinstance(params, dict):
        raise InvalidRequest(ErrorCode.INVALID_PARAMS, "'params' must be an object", request_id)
    return Request(request_id, method, params)


def result_response(request_id: RequestId, result: Any) -> bytes:
    return _dump({"jsonrpc": "2.0", "id": request_id, "result": result})


def error_response(request_id: RequestId, error: JSONObject) -> bytes:
    return _dump({"jsonrpc": "2.0", "id": request_id, "error": error})


def _dump(document: JSONObject) -> bytes:
    return json.dumps(document, ensure_ascii=False, separators=(",", ":")).encode()
