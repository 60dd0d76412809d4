"""Tasks' parts as JSON documents for a database, and back: pure, no I/O.

The shape is the store's own, not a protocol version's: a stored task reads back equal to
the one written, whichever version the caller speaks. Optional fields are left out when
absent, so that None and an empty value stay apart. A file's bytes go in as the
Base64Bytes they are held as (the store writes them with protocol/writing.py, spliced in)
and come back as a slice of the document read (`stored_json`), checked. A file an older
release kept without its bytes reads back as the marker of a part no longer kept
(core/release.py), never as a file with empty bytes.
"""

from __future__ import annotations

import json
from datetime import datetime
from typing import Any

from ..core.release import Released, released
from ..protocol import base64_bytes, carving
from ..protocol.base64_bytes import Base64Bytes
from ..protocol.carving import Carved
from ..protocol.model import (
    Artifact,
    ArtifactUpdate,
    FileContent,
    JSONObject,
    Message,
    Part,
    PartKind,
    Role,
    StatusUpdate,
    TaskEvent,
    TaskState,
    TaskStatus,
)

#: Where a stored document holds a file's base64: a message's or an artifact's parts, an
#: event's artifact or its status message's parts.
FILE_PATHS: tuple[carving.Path, ...] = (
    ("parts", None, "base64"),
    ("artifact", "parts", None, "base64"),
    ("status", "message", "parts", None, "base64"),
)


def stored_json(data: str | bytes) -> Any:
    """A stored document parsed from the bytes the database gave: a file's base64 left a
    slice of them (protocol/carving.py, which parses one too short to hold such a file as
    it is), not copied into a str and again into bytes of its own. (A str, which psycopg
    never gives, is parsed as it is.)"""
    if isinstance(data, str):
        return json.loads(data)
    return carving.loads(data, FILE_PATHS, json.loads).document


def part_doc(part: Part) -> JSONObject:
    """A text part as `{text}`, as it always was; a data or file part with its `kind`."""
    doc: JSONObject
    if part.kind is PartKind.DATA:
        doc = {"kind": "data", "data": part.data}
    elif part.file is not None:
        doc = {"kind": "file", **_file_doc(part.file)}
    else:
        doc = {"text": part.text}
    if part.metadata is not None:
        doc["metadata"] = part.metadata
    return doc


def part_of(doc: JSONObject, bare: Released = Released.BUDGET) -> Part:
    """The part a document holds; `bare`: why a file kept without bytes or URL is gone."""
    kind = doc.get("kind", "text")
    if kind == "data":
        return Part.of_data(doc["data"], doc.get("metadata"))
    if kind == "file":
        part = Part.of_file(_file_of(doc), doc.get("metadata"))
        return released(part, bare) if "base64" not in doc and "url" not in doc else part
    return Part(doc["text"], doc.get("metadata"))


def _file_doc(file: FileContent) -> JSONObject:
    doc: JSONObject = {"name": file.name, "mediaType": file.media_type}
    for key, value in (
        # As it is held: the store writes it with writing.dump, spliced in, not copied.
        ("base64", file.encoded),
        ("url", file.url),
        ("size", file.size),
    ):
        if value is not None:
            doc[key] = value
    return doc


def _file_of(doc: JSONObject) -> FileContent:
    content = doc.get("base64")
    return FileContent(
        doc["name"],
        doc["mediaType"],
        encoded=None if content is None else _stored_base64(content),
        url=doc.get("url"),
        size=doc.get("size"),
    )


def _stored_base64(content: str | Carved) -> Base64Bytes:
    """A file's base64 as this module wrote it (standard, padded): checked all the same."""
    found = base64_bytes.parse(content)
    if found is None:
        raise ValueError("a stored file's base64 is not base64")
    return found


def message_doc(message: Message) -> JSONObject:
    doc: JSONObject = {
        "messageId": message.message_id,
        "role": message.role.value,
        "parts": [part_doc(p) for p in message.parts],
    }
    for key, value in (
        ("taskId", message.task_id),
        ("contextId", message.context_id),
        ("metadata", message.metadata),
    ):
        if value is not None:
            doc[key] = value
    return doc


def message_of(doc: JSONObject) -> Message:
    role = Role(doc["role"])
    # A caller's file kept bare was its upload; an answer's, cut past a size once.
    bare = Released.UPLOAD if role is Role.USER else Released.BUDGET
    return Message(
        message_id=doc["messageId"],
        role=role,
        parts=tuple(part_of(p, bare) for p in doc["parts"]),
        task_id=doc.get("taskId"),
        context_id=doc.get("contextId"),
        metadata=doc.get("metadata"),
    )


def artifact_doc(artifact: Artifact) -> JSONObject:
    return {
        "artifactId": artifact.artifact_id,
        "name": artifact.name,
        "parts": [part_doc(p) for p in artifact.parts],
    }


def artifact_of(doc: JSONObject) -> Artifact:
    return Artifact(doc["artifactId"], doc["name"], tuple(part_of(p) for p in doc["parts"]))


def status_doc(status: TaskStatus) -> JSONObject:
    doc: JSONObject = {"state": status.state.value, "timestamp": status.timestamp.isoformat()}
    if status.message is not None:
        doc["message"] = message_doc(status.message)
    return doc


def status_of(doc: JSONObject) -> TaskStatus:
    message = doc.get("message")
    return TaskStatus(
        TaskState(doc["state"]),
        datetime.fromisoformat(doc["timestamp"]),
        None if message is None else message_of(message),
    )


def event_doc(event: TaskEvent) -> JSONObject:
    """An event without its task's ids and number, which the row around it holds."""
    if isinstance(event, ArtifactUpdate):
        return {
            "artifact": artifact_doc(event.artifact),
            "append": event.append,
            "lastChunk": event.last_chunk,
        }
    doc: JSONObject = {"status": status_doc(event.status)}
    if event.metadata is not None:
        doc["metadata"] = event.metadata
    return doc


def event_of(
    task_id: str, context_id: str, sequence: int, doc: dict[str, Any], relayed: int = 0
) -> TaskEvent:
    """The event a row holds; `relayed`: the task's relayed chunks when it was made (its
    row's column, as its number: see protocol/model.py)."""
    if "artifact" in doc:
        return ArtifactUpdate(
            task_id,
            context_id,
            artifact_of(doc["artifact"]),
            sequence,
            doc["append"],
            doc["lastChunk"],
            relayed,
        )
    return StatusUpdate(
        task_id, context_id, status_of(doc["status"]), sequence, doc.get("metadata"), relayed
    )
