"""A parsed or encoded document with some values made plain: what json itself would have."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any


def replaced(document: Any, kind: type, plain: Callable[[Any], Any]) -> Any:
    """The document with every value of `kind` replaced by `plain` of it."""
    if isinstance(document, kind):
        return plain(document)
    if isinstance(document, dict):
        return {key: replaced(value, kind, plain) for key, value in document.items()}
    if isinstance(document, list):
        return [replaced(value, kind, plain) for value in document]
    return document
