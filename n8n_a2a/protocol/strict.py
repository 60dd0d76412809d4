"""Strict JSON: what may come in is what can be written back, within bounds.

Python's json module reads NaN and Infinity, reads 1e400 as infinity and `"\\ud800"` as
a lone surrogate, none of which can be written back as JSON in UTF-8; and it reads any
count of values nested up to its recursion limit, where a megabyte of `[{},{},...]` is
350,000 objects. Requests are judged here before anything of them is kept in a task, and
so are webhook replies, so that no answer (a later ListTasks included) can fail on a value
it holds. The checks run mostly in C: NaN and Infinity are refused by json.loads'
parse_constant hook; the rest is a walk level by level, each level a few list
comprehensions over its values (no Python frame per value), stopped at the first level
past a bound, so it costs at most MAX_VALUES values' worth.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterable
from itertools import chain
from typing import Any

from .errors import quoted

#: How deep a document may nest: protobuf's JSON parsers, the SDKs' among them, stop at
#: 100 too. It keeps every stored value far from the recursion limit of json's encoder.
MAX_DEPTH = 100
#: How many JSON values (objects, arrays, strings, numbers, literals) a document may hold.
#: Each costs up to about 130 bytes once parsed, whatever its size in the body: this keeps
#: a request's objects near 4 MiB where a megabyte of `[{},...]` made 32 MiB of them.
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


class NotJSON(ValueError):
    """What json.loads takes and JSON does not have: NaN, Infinity, -Infinity; with
    `unique_keys`, a key twice in one object (`key` then names it)."""

    def __init__(self, message: str, key: str | None = None) -> None:
        super().__init__(message)
        self.key = key


def loads(text: bytes | str, *, unique_keys: bool = False) -> Any:
    """json.loads with NaN, Infinity and -Infinity refused (NotJSON); `unique_keys`: a key
    twice in an object is refused too (json.loads would keep the last one silently)."""
    if unique_keys:
        return json.loads(text, parse_constant=_not_json, object_pairs_hook=_unique)
    return json.loads(text, parse_constant=_not_json)


def unwritable(value: Any, root: str, *, text: bool = True) -> str | None:
    """Why `value` cannot be written back as JSON in UTF-8, or holds more than the bounds
    allow, naming where (from `root`); None if it can. `text=False` leaves lone
    surrogates to the caller (a webhook reply's are repaired, not refused)."""
    if type(value) is not dict and type(value) is not list:
        problem = _scalar_problem(value, text)
        return None if problem is None else f"{root} {problem}"
    levels: list[list[Any]] = [[value]]
    count = 1
    while True:
        containers = levels[-1]
        if len(levels) > MAX_DEPTH:
            where = _path(root, levels[:-1], containers[0])
            return f"{where} is nested more than {MAX_DEPTH} levels deep"
        members = list(chain.from_iterable(map(_members, containers)))
        count += len(members)
        if count > MAX_VALUES:
            return f"{root} holds more than {MAX_VALUES:,} JSON values"
        problem = _level_problem(root, levels, members, text)
        if problem is not None:
            return problem
        below = [m for m in members if type(m) is dict or type(m) is list]
        if not below:
            return None
        levels.append(below)


def _members(container: Any) -> Iterable[Any]:
    return container.values() if type(container) is dict else container


def _level_problem(
    root: str, levels: list[list[Any]], members: list[Any], text: bool
) -> str | None:
    """What is wrong with one level's values (and its objects' keys), naming the first."""
    floats = [m for m in members if type(m) is float]
    if floats and not math.isfinite(sum(floats)):  # a finite sum may overflow: then look
        for found in floats:
            if not math.isfinite(found):
                return f"{_path(root, levels, found)} {_NOT_FINITE}"
    if not text:
        return None
    strings = [m for m in members if type(m) is str]
    strings.extend(chain.from_iterable(c for c in levels[-1] if type(c) is dict))
    return _surrogate_problem(root, levels) if _has_surrogate("".join(strings)) else None


def _surrogate_problem(root: str, levels: list[list[Any]]) -> str | None:
    """The first key or string of the level's containers that holds a lone surrogate."""
    for container in levels[-1]:
        for key, item in _items(container):
            if type(key) is str and _has_surrogate(key):
                where = _path(root, levels[:-1], container) if len(levels) > 1 else root
                return f"{where} has a key that is not valid Unicode text ({quoted(key)})"
            if type(item) is str and _has_surrogate(item):
                return f"{_path(root, levels, item)} {_LONE_SURROGATE}"
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


def _path(root: str, levels: list[list[Any]], target: Any) -> str:
    """Where `target`, a value of a container of `levels[-1]`, sits: found again level by
    level upwards, only for the value that is refused. Keys are quoted unless they are
    plain names, and a long path is cut, so that no key can break or swell the error."""
    steps: list[str] = []
    for containers in reversed(levels):
        target, key = next((c, k) for c in containers for k, v in _items(c) if v is target)
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
            raise NotJSON(f"the key {quoted(key)} appears twice", key)
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
