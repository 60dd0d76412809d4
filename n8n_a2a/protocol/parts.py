"""Parts on the wire, whatever the version: text, data and file parts read and checked
against the media types the agent accepts (-32005 naming the part otherwise), and what a
file kept without its bytes says of itself."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from . import base64_bytes
from .base64_bytes import Base64Bytes
from .errors import A2AError, ErrorCode
from .media import JSON, TEXT, UNKNOWN, Modes, media_type
from .model import FileContent, Part, PartKind
from .params import MAX_ID_CHARS, Params

#: The longest URL a file part may name: it is kept whole in the task.
MAX_URL_CHARS = 8192
#: The most data and file parts a message may carry. Each adds a few keys to the webhook
#: body, whatever its size: this keeps the body about as long as the request.
MAX_ATTACHMENTS = 100


@dataclass(frozen=True, slots=True)
class FileFields:
    """What a version calls a file's fields."""

    media_type: str
    name: str
    content: str
    url: str


def text_part(part: Params, modes: Modes) -> Part:
    _check_accepted(part, "text", TEXT, modes)
    text = part.document.get("text")
    if not isinstance(text, str):
        raise A2AError.invalid_params(f"{part.path}.text must be a string")
    return Part(text=text, metadata=metadata_of(part))


def data_part(part: Params, data: object, modes: Modes) -> Part:
    _check_accepted(part, "data", JSON, modes)
    return Part.of_data(data, metadata_of(part))


def file_part(part: Params, file: Params, fields: FileFields, modes: Modes) -> Part:
    """A file part: its bytes (base64) or its URL, never fetched. The type is checked
    first, so that a file the agent does not take is -32005 however it is sent."""
    given = file.optional_str(fields.media_type)
    media = UNKNOWN if given is None else media_type(given)
    if media is None or media.endswith("/*"):  # a range, */* too, names no one type
        raise A2AError.invalid_params(
            f"{file.path}.{fields.media_type} must be a media type such as image/png"
        )
    _check_accepted(part, "file", media, modes)
    name = file.optional_str(fields.name) or ""
    if len(name) > MAX_ID_CHARS:
        raise A2AError.invalid_params(
            f"{file.path}.{fields.name} must be at most {MAX_ID_CHARS} characters"
        )
    content, url = file.document.get(fields.content), file.document.get(fields.url)
    if (content is None) == (url is None):
        raise A2AError.invalid_params(
            f"{file.path} must have exactly one of {fields.content} or {fields.url}"
        )
    if content is not None:
        found = FileContent.of_base64(name, media, _base64(file, fields.content, content))
    else:
        found = FileContent(name, media, url=_url(file, fields.url, url))
    return Part.of_file(found, metadata_of(part))


def check_attachments(message: Params, parts: tuple[Part, ...]) -> None:
    if sum(part.kind is not PartKind.TEXT for part in parts) > MAX_ATTACHMENTS:
        raise A2AError.invalid_params(
            f"{message.path}.parts may hold at most {MAX_ATTACHMENTS} data and file parts"
        )


def _check_accepted(part: Params, kind: str, media: str, modes: Modes) -> None:
    if not modes.takes(media):
        raise A2AError(
            ErrorCode.CONTENT_TYPE_NOT_SUPPORTED,
            f"{part.path} is a {kind} part of type {media}, which this agent does not accept; "
            f"it accepts {', '.join(modes.inputs)}",
        )


def _base64(file: Params, name: str, value: object) -> Base64Bytes:
    """Proto JSON's bytes: base64, standard or URL-safe, padded or not (base64_bytes.py)."""
    found = base64_bytes.parse(value)
    if found is None:
        raise A2AError.invalid_params(f"{file.path}.{name} must be base64")
    return found


def _url(file: Params, name: str, value: object) -> str:
    if not isinstance(value, str) or ":" not in value or len(value) > MAX_URL_CHARS:
        raise A2AError.invalid_params(
            f"{file.path}.{name} must be an absolute URL of at most {MAX_URL_CHARS} characters"
        )
    return value


def metadata_of(document: Params) -> dict[str, Any] | None:
    found = document.optional_object("metadata")
    return found.document if found is not None else None
