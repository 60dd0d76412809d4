"""Strict JSON: what may come in is what can be written back, within bounds.

Python's json module reads NaN and Infinity, reads 1e400 as infinity and `"\\ud800"` as
a lone surrogate, none of which can be written back as JSON in UTF-8; and it reads any
count of values nested up to its recursion limit, where a megabyte of `[{},{},...]` is
350,000 objects. Requests are judged here before anything of them is kept in a task, and
so are webhook replies, so that no answer (a later ListTasks included) can fail on a value
it holds. The checks cost little: NaN and Infinity are refused in C by json.loads'
parse_constant hook; the rest is one lean walk that counts each container's values
before it looks at them, so that it stops within MAX_VALUES of them, and that looks at
strings only when the body may hold a lone surrogate at all.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable, Iterable
from typing import Any

from .errors import NotJSON, quoted

#: How deep a document may nest: protobuf's JSON parsers, the SDKs' among them, stop at
#: 100 too. It keeps every stored value far from the recursion limit of json's encoder.
MAX_DEPTH = 100
#: How many JSON values (objects, arrays, strings, numbers, literals) a document may hold.
#: Each costs up to about 150 bytes once parsed, whatever its size in the body (an object
#: holding an object, `{"":{}}`, is 7 bytes): this keeps a request's objects under 5 MiB
#: where a megabyte of such JSON made up to 32 MiB of them (docs/operating.md, Memory).
MAX_VALUES = 32_768
#: How long a path to a value may be in an error: caller's keys make it, of any length.
MAX_PATH_CHARS = 256

_SURROGATE = re.compile(r"[\ud800-\udfff]")
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_LONE_SURROGATE = (
    "is not valid Unicode text: it holds a lone surrogate "
    "(such as \\ud800, or half of an emoji cut in two)"
)
_NOT_FINITE = "is a number beyond the range of JSON numbers"


def loads(
    text: bytes | bytearray | str,
    *,
    unique_keys: bool = False,
    parse_constant: Callable[[str], Any] | None = None,
) -> Any:
    """json.loads with NaN, Infinity and -Infinity refused (NotJSON); `unique_keys`: a key
    twice in an object is refused too (json.loads would keep the last one silently).
    `parse_constant`: what reads them instead (carving.py's cut strings stand as NaN)."""
    if parse_constant is not None:
        if unique_keys:
            return json.loads(text, parse_constant=parse_constant, object_pairs_hook=_unique)
        return json.loads(text, parse_constant=parse_constant)
    # json.loads makes a decoder anew for any option it is given: these are made once.
    decoder = _UNIQUE_KEYS if unique_keys else _STRICT
    if isinstance(text, str):
        if text.startswith("\ufeff"):
            raise json.JSONDecodeError("Unexpected UTF-8 BOM (decode using utf-8-sig)", text, 0)
        return decoder.decode(text)
    return decoder.decode(text.decode(json.detect_encoding(text), "surrogatepass"))


def may_hold_surrogates(body: bytes | bytearray) -> bool:
    """Whether a body's JSON may hold a lone surrogate: only through a `\\u` escape, or
    bytes past ASCII (UTF-8 with surrogates as json.loads reads it, or UTF-16 or 32). An
    ASCII body without one needs no look at its strings."""
    return not body.isascii() or b"\\u" in body or b"\x00" in body


def unwritable(value: Any, root: str, *, text: bool = True) -> str | None:
    """Why `value` cannot be written back as JSON in UTF-8, or holds more than the bounds
    allow, naming where (from `root`); None if it can. `text=False` leaves lone
    surrogates to the caller: a webhook reply's are repaired, not refused; a request's
    body that cannot hold one (may_hold_surrogates) needs no look either."""
    if type(value) is not dict and type(value) is not list:
        problem = _scalar_problem(value, text)
        return None if problem is None else f"{root} {problem}"
    fault = _first_fault(value, text)
    if fault is None:
        return None
    problem, where = fault
    if where is None:
        return f"{root} {problem}"
    return f"{_path(root, value, where)} {problem}"


def values_in(value: Any) -> int:
    """How many JSON values a parsed document holds, itself included: what it costs held
    as Python objects, beside its bytes (an explicit stack, as the walk below)."""
    if type(value) is not dict and type(value) is not list:
        return 1
    count, pending = 1, [value]
    while pending:
        container = pending.pop()
        items = container.values() if type(container) is dict else container
        count += len(items)
        pending.extend(item for item in items if type(item) is dict or type(item) is list)
    return count


def _first_fault(document: dict[str, Any] | list[Any], text: bool) -> tuple[str, Any] | None:
    """The first fault found and the value it is named by (None: the document itself).

    An explicit stack, not recursion, so that the walk cannot fail on what it judges; exact
    type checks (json.loads makes no subclasses); a container's values counted before
    they are looked at, so that the walk stops within MAX_VALUES of them."""
    pending: list[tuple[Any, int]] = [(document, 1)]
    count = 1
    while pending:
        container, depth = pending.pop()
        if depth > MAX_DEPTH:
            return f"is nested more than {MAX_DEPTH} levels deep", container
        items = container.values() if type(container) is dict else container
        count += len(items)
        if count > MAX_VALUES:
            return f"holds more than {MAX_VALUES:,} JSON values", None
        if text and type(container) is dict and _has_surrogate("".join(container)):
            key = next(k for k in container if _has_surrogate(k))
            return f"has a key that is not valid Unicode text ({quoted(key)})", container
        for item in items:
            kind = type(item)
            if kind is dict or kind is list:
                pending.append((item, depth + 1))
            elif kind is float and not math.isfinite(item):  # 1e400 reads as inf
                return _NOT_FINITE, item
            elif text and kind is str and _has_surrogate(item):
                return _LONE_SURROGATE, item
    return None


def _scalar_problem(value: Any, text: bool) -> str | None:
    if text and type(value) is str and _has_surrogate(value):
        return _LONE_SURROGATE
    if type(value) is float and not math.isfinite(value):
        return _NOT_FINITE
    return None


def _has_surrogate(text: str) -> bool:
    return not text.isascii() and _SURROGATE.search(text) is not None


def _items(container: Any) -> Iterable[tuple[Any, Any]]:
    return container.items() if type(container) is dict else enumerate(container)


# Where a value sits: (the parent's trail, key or index), built as the search goes down.
_Trail = tuple[Any, str | int] | None


def _path(root: str, document: Any, target: Any) -> str:
    """Where `target` (the very object) sits in `document`: searched for only once a value
    is refused. Keys are quoted unless they are plain names, and a long path is cut, so
    that no key can break or swell the error."""
    pending: list[tuple[Any, _Trail]] = [(document, None)]
    trail: _Trail = None
    while pending:
        container, trail = pending.pop()
        if container is target:
            break
        found = next((key for key, item in _items(container) if item is target), None)
        if found is not None:
            trail = (trail, found)
            break
        for key, item in _items(container):
            if type(item) is dict or type(item) is list:
                pending.append((item, (trail, key)))
    steps: list[str] = []
    while trail is not None:
        trail, key = trail
        steps.append(_step(key))
    path = root + "".join(reversed(steps))
    if len(path) <= MAX_PATH_CHARS:
        return path
    half = MAX_PATH_CHARS // 2
    return f"{path[:half]}...{path[-half:]}"


def _step(key: str | int) -> str:
    if isinstance(key, int):
        return f"[{key}]"
    return f".{key}" if len(key) <= 64 and _NAME.fullmatch(key) else f"[{quoted(key)}]"


def _not_json(constant: str) -> Any:
    raise NotJSON(f"{constant} is not JSON")


def _unique(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    document: dict[str, Any] = {}
    for key, value in pairs:
        if key in document:
            raise NotJSON(f"the key {quoted(key)} appears twice")
        document[key] = value
    return document


def writable(value: Any, depth: int = 0) -> Any:
    """A copy of `value` that json can write in UTF-8 whatever it holds: non-finite numbers
    as null, lone surrogates as U+FFFD, what nests past MAX_DEPTH (beside an answer's own
    few levels) as null. The encoder's fallback, for a value no check should have let in."""
    if depth > MAX_DEPTH + 16:
        return None
    kind = type(value)
    if kind is dict:
        return {writable(k, depth): writable(v, depth + 1) for k, v in value.items()}
    if kind is list or kind is tuple:
        return [writable(item, depth + 1) for item in value]
    if kind is float and not math.isfinite(value):
        return None
    if kind is str and _has_surrogate(value):
        return _SURROGATE.sub("\ufffd", value)
    return value


_STRICT = json.JSONDecoder(parse_constant=_not_json)
_UNIQUE_KEYS = json.JSONDecoder(parse_constant=_not_json, object_pairs_hook=_unique)
