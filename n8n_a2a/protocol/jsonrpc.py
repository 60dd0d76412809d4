"""JSON-RPC 2.0 envelopes: parse a request body, serialize a result or an error.

The response id is the request's, type and all: @a2a-js/sdk rejects "1" for 1.

Only strict JSON comes in (strict.py judges it) and goes out: an answer that still holds
what JSON cannot write is written with it replaced, never failed.
"""

from __future__ import annotations

import json
import sys
from dataclasses import dataclass
from typing import Any

from .errors import ErrorCode, InvalidRequest, NotJSON, RequestId
from .model import JSONObject
from .strict import loads, may_hold_surrogates, unwritable, writable


@dataclass(frozen=True, slots=True)
class Request:
    id: RequestId
    method: str
    params: JSONObject


def parse_request(body: bytes) -> Request:
    """Parse one JSON-RPC request; raise InvalidRequest for anything else."""
    document = load(body)
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
    problem = unwritable(request_id, "'id'")
    if problem is not None:
        # An id that cannot be written back cannot be echoed: the answer's id is null.
        raise InvalidRequest(ErrorCode.INVALID_REQUEST, problem)
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
    problem = unwritable(params, "params", text=may_hold_surrogates(body))
    if problem is not None:
        raise InvalidRequest(ErrorCode.INVALID_PARAMS, problem, request_id)
    return Request(request_id, method, params)


def load(body: bytes) -> Any:
    """A body as strict JSON (any value); InvalidRequest -32700 for anything else."""
    try:
        return loads(body)
    except (UnicodeDecodeError, json.JSONDecodeError, NotJSON) as error:
        raise InvalidRequest(ErrorCode.PARSE_ERROR, f"Parse error: {error}") from None
    except ValueError:
        # The one other refusal of json.loads: an integer past int()'s digit limit.
        raise InvalidRequest(
            ErrorCode.PARSE_ERROR,
            f"Parse error: a number has more than {sys.get_int_max_str_digits()} digits",
        ) from None
    except RecursionError:
        raise InvalidRequest(ErrorCode.PARSE_ERROR, "Parse error: JSON nested too deeply") from None


def result_response(request_id: RequestId, result: Any) -> bytes:
    return dump({"jsonrpc": "2.0", "id": request_id, "result": result})


def error_response(request_id: RequestId, error: JSONObject) -> bytes:
    return dump({"jsonrpc": "2.0", "id": request_id, "error": error})


def dump(document: Any) -> bytes:
    """Strict, compact JSON in UTF-8: what every answer, and every push body, is written as.

    Never fails on a value a task can hold: one that JSON cannot write (a non-finite
    number, a lone surrogate, nesting past the bound), which no check should have let in,
    is written replaced (strict.writable) rather than failing every answer that holds it."""
    try:
        return _encoded(document)
    except (ValueError, RecursionError):  # UnicodeEncodeError is a ValueError
        return _encoded(writable(document))


def _encoded(document: Any) -> bytes:
    return json.dumps(document, ensure_ascii=False, allow_nan=False, separators=(",", ":")).encode()
