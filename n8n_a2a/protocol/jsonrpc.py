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

from . import carving
from .errors import ErrorCode, InvalidRequest, NotJSON, RequestId
from .model import JSONObject
from .strict import loads, may_hold_surrogates, unwritable
from .writing import Pieces, dump, written

#: Where a request's file bytes are, on either binding (HTTP+JSON's body is the params):
#: v1.0's part `raw`, v0.3's part `file.bytes`. A long one there is read as a slice of the
#: body (carving.py), never copied.
FILE_BYTES: tuple[carving.Path, ...] = tuple(
    (*root, "message", "parts", None, *where)
    for root in (("params",), ())
    for where in (("raw",), ("file", "bytes"))
)


@dataclass(frozen=True, slots=True)
class Request:
    id: RequestId
    method: str
    params: JSONObject


def parse_request(body: bytes | bytearray) -> Request:
    """Parse one JSON-RPC request; raise InvalidRequest for anything else."""
    parsed = load(body)
    document = parsed.document
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
    problem = unwritable(params, "params", text=may_hold_surrogates(parsed.rest))
    if problem is not None:
        raise InvalidRequest(ErrorCode.INVALID_PARAMS, problem, request_id)
    return Request(request_id, method, params)


def load(body: bytes | bytearray) -> carving.Parsed:
    """A body as strict JSON (any value), its files' long base64 as slices of it;
    InvalidRequest -32700 for anything else."""
    try:
        return carving.loads(body, FILE_BYTES, loads)
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


def result_response(request_id: RequestId, result: Any) -> bytes | Pieces:
    """The answer: its files' base64 spliced in as held (writing.py), never copied."""
    return written({"jsonrpc": "2.0", "id": request_id, "result": result})


def error_response(request_id: RequestId, error: JSONObject) -> bytes:
    return dump({"jsonrpc": "2.0", "id": request_id, "error": error})
