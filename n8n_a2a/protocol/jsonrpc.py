"""JSON-RPC 2.0 envelopes: parse a request body, serialize a result or an error.

The response id is the request's, type and all: @a2a-js/sdk rejects "1" for 1.

Only strict JSON comes in and goes out. Python's json module reads NaN and Infinity,
reads 1e400 as infinity and `"\\ud800"` as a lone surrogate, none of which can be
written back as JSON in UTF-8: such a request is refused here, before anything of it
is kept in a task, so that no answer (a later ListTasks included) can fail on it.
"""

from __future__ import annotations

import json
import math
import re
import sys
from dataclasses import dataclass
from typing import Any

from .errors import A2AError, ErrorCode
from .model import JSONObject

RequestId = str | int | float | None

#: How deep params may nest: protobuf's JSON parsers, the SDKs' among them, stop at 100
#: too. It keeps every stored value far from the recursion limit of json's encoder.
MAX_DEPTH = 100
_SURROGATE = re.compile(r"[\ud800-\udfff]")


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
    problem = unwritable(params, "params")
    if problem is not None:
        raise InvalidRequest(ErrorCode.INVALID_PARAMS, problem, request_id)
    return Request(request_id, method, params)


def load(body: bytes) -> Any:
    """A body as strict JSON (any value); InvalidRequest -32700 for anything else."""
    try:
        return json.loads(body, parse_constant=_not_json)
    except (UnicodeDecodeError, json.JSONDecodeError, _NotJSON) as error:
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
    """Strict, compact JSON in UTF-8: what every answer, and every push body, is written as."""
    return json.dumps(document, ensure_ascii=False, allow_nan=False, separators=(",", ":")).encode()


class _NotJSON(ValueError):
    """NaN, Infinity or -Infinity, which Python's json reads and JSON does not have."""


def _not_json(constant: str) -> Any:
    raise _NotJSON(f"{constant} is not JSON")


# Where a value sits in params: (the parent's trail, key or index), built as the walk goes
# down and written out only for the value that is refused.
_Trail = tuple[Any, str | int] | None


def unwritable(value: Any, root: str) -> str | None:
    """Why `value` cannot be written back as JSON in UTF-8, naming where; None if it can.

    An explicit stack, not recursion, so that the walk cannot fail on what it judges; and
    exact type checks, cheap per value (a request may hold a megabyte of them): json.loads
    makes no subclasses.
    """
    if type(value) is not dict and type(value) is not list:
        problem = _scalar_problem(value)
        return None if problem is None else f"{root} {problem}"
    pending: list[tuple[Any, _Trail, int]] = [(value, None, 1)]
    while pending:
        container, trail, depth = pending.pop()
        if depth > MAX_DEPTH:
            return f"{_path(root, trail)} is nested more than {MAX_DEPTH} levels deep"
        items: Any
        if type(container) is dict:
            for key in container:
                if _has_surrogate(key):
                    where = _path(root, trail)
                    return f"{where} has a key that is not valid Unicode text ({key[:40]!r})"
            items = container.items()
        else:
            items = enumerate(container)
        for key, item in items:
            kind = type(item)
            if kind is dict or kind is list:
                pending.append((item, (trail, key), depth + 1))
            elif kind is str or kind is float:
                problem = _scalar_problem(item)
                if problem is not None:
                    return f"{_path(root, (trail, key))} {problem}"
    return None


def _scalar_problem(value: Any) -> str | None:
    if type(value) is str and _has_surrogate(value):
        return (
            "is not valid Unicode text: it holds a lone surrogate "
            "(such as \\ud800, or half of an emoji cut in two)"
        )
    if type(value) is float and not math.isfinite(value):
        return "is a number beyond the range of JSON numbers"
    return None


def _has_surrogate(text: str) -> bool:
    return not text.isascii() and _SURROGATE.search(text) is not None


def _path(root: str, trail: _Trail) -> str:
    steps: list[str] = []
    while trail is not None:
        trail, key = trail
        steps.append(f"[{key}]" if isinstance(key, int) else f".{key}")
    return root + "".join(reversed(steps))
