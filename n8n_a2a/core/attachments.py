"""What an answer carries beside its text: its `data` (any JSON value, one data part) and
its `files` (`{name, mediaType, base64 | url}`, a file part each), as the workflow
contract (contract.py) reads them from a reply, checked against the output modes; and
the parts cleaned of the caller's token. Pure: no I/O."""

from __future__ import annotations

import json
from dataclasses import replace
from typing import Any

from ..protocol import base64_bytes
from ..protocol.carving import Carved
from ..protocol.media import Modes, media_type
from ..protocol.model import FileContent, Part
from .sanitising import redact, repair

_FILE_KEYS = frozenset({"name", "mediaType"})


def data_of(value: Any) -> tuple[Part, ...]:
    """A reply's `data`: whatever JSON value it is, one data part."""
    return (Part.of_data(value),)


def files_of(value: Any, modes: Modes) -> tuple[Part, ...] | str:
    """A reply's `files`, a file part each, or what is wrong with them (the first entry
    that is wrong, named by its index)."""
    if not isinstance(value, list):
        return "'files' is not a list"
    parts = []
    for index, entry in enumerate(value):
        file = _reply_file(entry, modes)
        if isinstance(file, str):
            return f"files[{index}] {file}"
        parts.append(Part.of_file(file))
    return tuple(parts)


def _reply_file(entry: object, modes: Modes) -> FileContent | str:
    """One entry of `files`, or what is wrong with it."""
    if not isinstance(entry, dict):
        return "is not an object"
    sources = {"base64", "url"} & set(entry)
    if set(entry) != _FILE_KEYS | sources or len(sources) != 1:
        return f"has the keys {sorted(entry)}, not name, mediaType and one of base64 or url"
    name, given, source = entry["name"], entry["mediaType"], entry[sources.pop()]
    # A long base64 is a slice of the reply (carving.py: only there; a url never is).
    strings = (name, given, source if type(source) is not Carved else "")
    if not all(isinstance(value, str) for value in strings):
        return "has a name, mediaType, base64 or url that is not a string"
    media = media_type(given)
    if media is None or "*" in media or not modes.gives(media):
        return f"has the media type {given[:80]!r}, not one of {', '.join(modes.outputs)}"
    if "url" in entry:
        return FileContent(name, media, url=source) if source else "has an empty url"
    encoded = base64_bytes.parse(source, proto=False)  # n8n writes standard base64
    if encoded is None:
        return "has a base64 that is not base64"
    return FileContent.of_base64(name, media, encoded)


def cleaned(parts: tuple[Part, ...], token: str | None) -> tuple[tuple[Part, ...], bool]:
    """The parts with the token redacted and lone surrogates replaced in their strings."""
    kept, repaired = [], False
    for part in parts:
        if part.file is None:
            text, fixed = repair(redact(json.dumps(part.data, ensure_ascii=False), token))
            try:
                data = json.loads(text)
            except ValueError:  # the token stood outside a string: the JSON text, as text
                data = text
            kept.append(Part.of_data(data))
        else:
            name, fixed = repair(redact(part.file.name, token))
            url, url_fixed = repair(redact(part.file.url, token)) if part.file.url else ("", False)
            kept.append(Part.of_file(replace(part.file, name=name, url=url or None)))
            fixed = fixed or url_fixed
        repaired = repaired or fixed
    return tuple(kept), repaired
