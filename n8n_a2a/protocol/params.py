"""Typed reads from a JSON-RPC params object, naming the field path in every error.

Fields are looked up by their camelCase name and then its snake_case twin: the A2A
TCK sends `history_length` where the SDKs send `historyLength`.
"""

from __future__ import annotations

import functools
import re
from typing import Any

from .errors import A2AError
from .model import JSONObject

_UPPER = re.compile(r"(?<!^)(?=[A-Z])")
#: The longest id a request may name: a task, context, message or push config id.
MAX_ID_CHARS = 1024
_INT64_MAX = 2**63 - 1
# ASCII digits only (str.isdigit() takes "³" too), and no more than int64's 19.
_DIGITS = re.compile("[0-9]{1,19}")


@functools.cache
def _snake(name: str) -> str:
    """A field's snake_case twin: made once a name (a send looks up several it lacks)."""
    return _UPPER.sub("_", name).lower()


class Params:
    """A JSON object in a request, with its path from `params` for error messages."""

    def __init__(self, document: JSONObject, path: str = "params") -> None:
        self.document = document
        self.path = path

    def _lookup(self, name: str) -> Any:
        if name in self.document:
            return self.document[name]
        return self.document.get(_snake(name))

    def _where(self, name: str) -> str:
        return f"{self.path}.{name}"

    def required_str(self, name: str) -> str:
        value = self._lookup(name)
        if not isinstance(value, str) or not value:
            raise A2AError.invalid_params(f"{self._where(name)} must be a non-empty string")
        return value

    def required_id(self, name: str) -> str:
        """An id: a non-empty string of at most MAX_ID_CHARS characters."""
        return self._bounded_id(name, self.required_str(name))

    def optional_id(self, name: str) -> str | None:
        found = self.optional_str(name)
        return None if found is None else self._bounded_id(name, found)

    def _bounded_id(self, name: str, value: str) -> str:
        if len(value) > MAX_ID_CHARS:
            raise A2AError.invalid_params(
                f"{self._where(name)} must be at most {MAX_ID_CHARS} characters"
            )
        return value

    def optional_str(self, name: str) -> str | None:
        """A string, or None when absent or empty: proto3 JSON writes unset as ""."""
        value = self._lookup(name)
        if value is None or value == "":
            return None
        if not isinstance(value, str):
            raise A2AError.invalid_params(f"{self._where(name)} must be a string")
        return value

    def optional_int(self, name: str) -> int | None:
        """A count: a whole number >= 0 (a JSON number like 3.0 counts as whole)."""
        value = self._lookup(name)
        if value is None:
            return None
        if isinstance(value, float) and value.is_integer():
            value = int(value)
        if isinstance(value, bool) or not isinstance(value, int) or value < 0:
            raise A2AError.invalid_params(f"{self._where(name)} must be a whole number >= 0")
        return value

    def optional_int64(self, name: str) -> int | None:
        """A proto int64 >= 0, as ProtoJSON reads one: a JSON number or a decimal string."""
        value = self._lookup(name)
        if value is None or value == "":
            return None  # unset ("": proto3 JSON's, as optional_str reads it)
        if not isinstance(value, str):
            found = self.optional_int(name)  # None, or a whole number >= 0
            if found is None or found <= _INT64_MAX:
                return found
        elif _DIGITS.fullmatch(value) and int(value) <= _INT64_MAX:
            return int(value)
        raise A2AError.invalid_params(
            f"{self._where(name)} must be a whole number from 0 to {_INT64_MAX} "
            "(a JSON number or a decimal string)"
        )

    def optional_bool(self, name: str) -> bool | None:
        value = self._lookup(name)
        if value is None:
            return None
        if not isinstance(value, bool):
            raise A2AError.invalid_params(f"{self._where(name)} must be true or false")
        return value

    def optional_object(self, name: str) -> Params | None:
        value = self._lookup(name)
        if value is None:
            return None
        if not isinstance(value, dict):
            raise A2AError.invalid_params(f"{self._where(name)} must be an object")
        return Params(value, self._where(name))

    def required_object(self, name: str) -> Params:
        found = self.optional_object(name)
        if found is None:
            raise A2AError.invalid_params(f"{self._where(name)} is required")
        return found

    def optional_str_list(self, name: str) -> list[str] | None:
        value = self._lookup(name)
        if value is None:
            return None
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            raise A2AError.invalid_params(f"{self._where(name)} must be a list of strings")
        return value

    def required_objects(self, name: str) -> list[Params]:
        value = self._lookup(name)
        if not isinstance(value, list) or not value:
            raise A2AError.invalid_params(f"{self._where(name)} must be a non-empty list")
        items = []
        for index, item in enumerate(value):
            if not isinstance(item, dict):
                raise A2AError.invalid_params(f"{self._where(name)}[{index}] must be an object")
            items.append(Params(item, f"{self._where(name)}[{index}]"))
        return items

    def has(self, name: str) -> bool:
        return self._lookup(name) is not None
