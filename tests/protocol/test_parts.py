"""Data and file parts on the wire: read in both versions against the accepted media types,
and written so that the official clients parse them (a2a_pb2 strictly, the v0.3 models)."""

from __future__ import annotations

import base64
import json
from datetime import UTC, datetime
from typing import Any

import pytest
from a2a.compat.v0_3 import types as v03_types
from a2a.types import a2a_pb2
from google.protobuf import json_format  # type: ignore[import-untyped]

from n8n_a2a.core.release import Released, released
from n8n_a2a.protocol.codec import Codec
from n8n_a2a.protocol.errors import A2AError, ErrorCode
from n8n_a2a.protocol.media import Modes
from n8n_a2a.protocol.model import (
    Artifact,
    ArtifactUpdate,
    FileContent,
    JSONObject,
    Message,
    Part,
    PartKind,
    Role,
    SendMessage,
    Task,
    TaskState,
    TaskStatus,
)
from n8n_a2a.protocol.params import MAX_ID_CHARS
from n8n_a2a.protocol.parts import MAX_ATTACHMENTS, MAX_URL_CHARS
from n8n_a2a.protocol.versions import V03, V1
from n8n_a2a.protocol.writing import dump

MOMENT = datetime(2026, 12, 1, 12, 0, tzinfo=UTC)
OPEN = Modes(("text/plain", "application/json", "text/csv", "image/png"), ("text/plain",))
PNG = b"\x89PNG\r\n\x1a\n"


def v1_send(*parts: dict[str, Any]) -> dict[str, Any]:
    return {"message": {"messageId": "m-1", "role": "ROLE_USER", "parts": list(parts)}}


def v03_send(*parts: dict[str, Any]) -> dict[str, Any]:
    message = {"kind": "message", "messageId": "m-1", "role": "user", "parts": list(parts)}
    return {"message": message}


def sent(codec: Codec, params: dict[str, Any], modes: Modes = OPEN) -> Message:
    method = "SendMessage" if codec is V1 else "message/send"
    operation = codec.decode(method, params, modes)
    assert isinstance(operation, SendMessage)
    return operation.message


def refusal(codec: Codec, params: dict[str, Any], modes: Modes = OPEN) -> A2AError:
    with pytest.raises(A2AError) as raised:
        sent(codec, params, modes)
    return raised.value


def test_v1_reads_text_data_raw_and_url_parts_in_order() -> None:
    message = sent(
        V1,
        v1_send(
            {"text": "see attached"},
            {"data": {"sku": "F-1", "qty": 4}},
            {"raw": base64.b64encode(PNG).decode(), "mediaType": "image/png", "filename": "a.png"},
            {"url": "https://files.example/r.csv", "mediaType": "text/csv; charset=utf-8"},
            {"data": [1, "two"], "metadata": {"m": 1}},
        ),
    )
    assert message.text == "see attached"
    assert [part.kind for part in message.parts] == [
        PartKind.TEXT,
        PartKind.DATA,
        PartKind.FILE,
        PartKind.FILE,
        PartKind.DATA,
    ]
    assert message.parts[1].data == {"sku": "F-1", "qty": 4}
    assert message.parts[2].file == FileContent.of_bytes("a.png", "image/png", PNG)
    assert message.parts[3].file == FileContent("", "text/csv", url="https://files.example/r.csv")
    assert message.parts[4] == Part.of_data([1, "two"], {"m": 1})


def test_v1_reads_what_the_sdk_client_writes() -> None:
    """a2a-sdk 1.3.0 writes `raw` as proto JSON bytes: standard base64, padded."""
    parts = [
        a2a_pb2.Part(text="hi"),
        a2a_pb2.Part(raw=PNG, media_type="image/png", filename="p.png"),
    ]
    message = a2a_pb2.Message(message_id="m-1", role=a2a_pb2.ROLE_USER, parts=parts)
    params = {"message": json_format.MessageToDict(message)}
    assert sent(V1, params).parts[1].file == FileContent.of_bytes("p.png", "image/png", PNG)


@pytest.mark.parametrize("raw", ["iVBORw0KGgo", "iVBORw0KGgo=", "iVBORw0KGgo-_w", " iVBORw0KGgo= "])
def test_v1_raw_takes_base64_padded_or_not_standard_or_url_safe(raw: str) -> None:
    message = sent(V1, v1_send({"raw": raw, "mediaType": "image/png"}))
    file = message.parts[0].file
    assert file is not None and file.content is not None
    assert file.content.startswith(PNG[:8])


def test_v03_reads_file_parts_with_bytes_or_uri_and_data_parts() -> None:
    message = sent(
        V03,
        v03_send(
            {"kind": "text", "text": "hi"},
            {"kind": "data", "data": {"a": 1}},
            {"kind": "file", "file": {"name": "p.png", "mimeType": "image/png", "bytes": "iVBO"}},
            {"kind": "file", "file": {"mimeType": "text/csv", "uri": "http://x/r.csv"}},
        ),
    )
    assert message.parts[1] == Part.of_data({"a": 1})
    assert message.parts[2].file == FileContent.of_bytes("p.png", "image/png", b"\x89PNG"[:3])
    assert message.parts[3].file == FileContent("", "text/csv", url="http://x/r.csv")


@pytest.mark.parametrize(
    ("codec", "part", "words"),
    [
        (V1, {"data": {"a": 1}}, "parts[1] is a data part of type application/json"),
        (V1, {"raw": "AA==", "mediaType": "application/pdf"}, "parts[1] is a file part of type"),
        (V1, {"url": "http://x/y"}, "of type application/octet-stream"),
        (V03, {"kind": "data", "data": {}}, "parts[1] is a data part"),
        (V03, {"kind": "file", "file": {"mimeType": "x/y", "uri": "http://x"}}, "of type x/y"),
    ],
)
def test_a_part_of_a_type_not_accepted_is_32005_naming_it(
    codec: Codec, part: dict[str, Any], words: str
) -> None:
    text = {"text": "hi"} if codec is V1 else {"kind": "text", "text": "hi"}
    params = (v1_send if codec is V1 else v03_send)(text, part)
    modes = Modes(("text/plain", "image/png"))
    error = refusal(codec, params, modes)
    assert error.code is ErrorCode.CONTENT_TYPE_NOT_SUPPORTED
    assert words in error.message
    assert "text/plain, image/png" in error.message


def test_a_text_part_is_refused_where_text_is_not_accepted() -> None:
    error = refusal(V1, v1_send({"text": "hi"}), Modes(("application/json",)))
    assert error.code is ErrorCode.CONTENT_TYPE_NOT_SUPPORTED
    assert "parts[0] is a text part of type text/plain" in error.message


def test_any_type_accepts_every_file() -> None:
    message = sent(V1, v1_send({"raw": "", "mediaType": "video/mp4"}), Modes(("*/*",)))
    assert message.parts[0].file == FileContent.of_bytes("", "video/mp4", b"")


@pytest.mark.parametrize(
    ("codec", "part", "words"),
    [
        (V1, {"raw": "not base64!", "mediaType": "image/png"}, "parts[0].raw must be base64"),
        (V1, {"raw": 5, "mediaType": "image/png"}, "parts[0].raw must be base64"),
        (V1, {"raw": "YQ==YQ==", "mediaType": "image/png"}, "parts[0].raw must be base64"),
        (V1, {"raw": "=YQ", "mediaType": "image/png"}, "parts[0].raw must be base64"),
        (V1, {"raw": "YQé", "mediaType": "image/png"}, "parts[0].raw must be base64"),
        (V1, {"raw": "AA==", "mediaType": "image"}, "parts[0].mediaType must be a media type"),
        (V1, {"raw": "AA==", "mediaType": "image/*"}, "parts[0].mediaType"),
        (V1, {"url": "nowhere", "mediaType": "image/png"}, "parts[0].url must be an absolute URL"),
        (
            V1,
            {"url": "http://x/" + "y" * MAX_URL_CHARS, "mediaType": "image/png"},
            f"at most {MAX_URL_CHARS} characters",
        ),
        (
            V1,
            {"raw": "AA==", "mediaType": "image/png", "filename": "n" * (MAX_ID_CHARS + 1)},
            "parts[0].filename must be at most",
        ),
        (V1, {"raw": "AA==", "url": "http://x", "mediaType": "image/png"}, "exactly one"),
        (
            V03,
            {"kind": "file", "file": {"mimeType": "image/png", "bytes": "AA==", "uri": "http://x"}},
            "parts[0].file must have exactly one of bytes or uri",
        ),
        (V03, {"kind": "file", "file": {"mimeType": "image/png"}}, "exactly one of bytes or uri"),
        (V03, {"kind": "file"}, "parts[0].file is required"),
        (V03, {"kind": "data", "data": [1]}, "parts[0].data must be an object"),
    ],
)
def test_a_malformed_part_is_32602_naming_the_field(
    codec: Codec, part: dict[str, Any], words: str
) -> None:
    params = (v1_send if codec is V1 else v03_send)(part)
    error = refusal(codec, params)
    assert error.code is ErrorCode.INVALID_PARAMS
    assert words in error.message


@pytest.mark.parametrize(
    ("outputs", "accepted", "taken"),
    [
        (("text/plain",), ["application/json"], False),
        (("text/plain", "application/json"), ["application/json"], True),
        (("text/plain", "image/png"), ["image/*"], True),
        (("text/plain",), ["*/*"], True),
        (("*/*",), ["video/mp4"], True),
        (("text/plain",), ["text/*", "nonsense"], True),
    ],
)
def test_accepted_output_modes_meet_the_output_modes(
    outputs: tuple[str, ...], accepted: list[str], taken: bool
) -> None:
    params = {**v1_send({"text": "hi"}), "configuration": {"acceptedOutputModes": accepted}}
    modes = Modes(("text/plain",), outputs)
    if taken:
        sent(V1, params, modes)
    else:
        assert refusal(V1, params, modes).code is ErrorCode.CONTENT_TYPE_NOT_SUPPORTED


#: What the task's marker for the caller's scan.png says of it.
RELEASED = {
    "kind": "file",
    "name": "scan.png",
    "mediaType": "image/png",
    "size": 8,
    "reason": "upload",
}


def on_the_wire(document: JSONObject) -> Any:
    """The document as a client reads it: its files' base64 spliced in (writing.py)."""
    return json.loads(dump(document))


def a_task_with_parts() -> Task:
    upload = Part.of_file(
        FileContent.of_bytes("scan.png", "image/png", bytes(8)), {"from": "bridge"}
    )
    kept = released(upload, Released.UPLOAD)
    user = Message("m-1", Role.USER, (Part("see"), kept, Part.of_data({"a": 1})), "t-1", "c-1")
    agent = Message("m-2", Role.AGENT, (Part("done"),), "t-1", "c-1")
    artifacts = (
        Artifact("a-1", "answer", (Part("done"),)),
        Artifact("a-2", "data", (Part.of_data([1, 2]),)),
        Artifact("a-3", "r.csv", (Part.of_file(FileContent.of_bytes("r.csv", "text/csv", b"a")),)),
        Artifact("a-4", "file", (Part.of_file(FileContent("", "image/png", url="http://x/y")),)),
    )
    status = TaskStatus(TaskState.COMPLETED, MOMENT, agent)
    return Task("t-1", "c-1", status, (user, agent), artifacts)


def test_v1_data_and_files_parse_strictly_in_the_sdk() -> None:
    document = on_the_wire(V1.encode_task(a_task_with_parts()))
    task = json_format.ParseDict(document, a2a_pb2.Task())
    user_parts = task.history[0].parts
    # An upload the task no longer keeps is a text part, never a file of no bytes: the
    # SDK reads it as text, its facts under "released" beside the part's own metadata.
    assert user_parts[1].WhichOneof("content") == "text"
    assert "scan.png (image/png, 8 bytes)" in user_parts[1].text
    assert json_format.MessageToDict(user_parts[1].metadata) == {
        "from": "bridge",
        "released": RELEASED,
    }
    assert json_format.MessageToDict(user_parts[2].data) == {"a": 1}
    _, data, csv, linked = task.artifacts
    assert json_format.MessageToDict(data.parts[0].data) == [1, 2]
    assert (csv.name, csv.parts[0].raw, csv.parts[0].media_type) == ("r.csv", b"a", "text/csv")
    assert csv.parts[0].filename == "r.csv"
    assert (linked.parts[0].url, linked.parts[0].filename) == ("http://x/y", "")


def test_v03_data_and_files_validate_in_the_v03_models() -> None:
    document = on_the_wire(V03.encode_task(a_task_with_parts()))
    task = v03_types.Task.model_validate(document)
    assert task.model_dump(mode="json", by_alias=True, exclude_none=True) == document
    user_parts = [part.root for part in task.history[0].parts]  # type: ignore[index]
    assert isinstance(user_parts[1], v03_types.TextPart)
    assert user_parts[1].metadata == {"from": "bridge", "released": RELEASED}
    assert isinstance(user_parts[2], v03_types.DataPart)
    artifacts = task.artifacts or []
    data = artifacts[1].parts[0].root
    # v0.3's DataPart.data is an object: another JSON value goes inside one, as `value`.
    assert isinstance(data, v03_types.DataPart) and data.data == {"value": [1, 2]}
    csv = artifacts[2].parts[0].root
    assert isinstance(csv, v03_types.FilePart)
    assert isinstance(csv.file, v03_types.FileWithBytes)
    assert (csv.file.name, csv.file.mime_type, csv.file.bytes) == ("r.csv", "text/csv", "YQ==")
    linked = artifacts[3].parts[0].root
    assert isinstance(linked, v03_types.FilePart)
    assert isinstance(linked.file, v03_types.FileWithUri)
    assert linked.file.uri == "http://x/y"


@pytest.mark.parametrize("codec", [V1, V03])
def test_a_file_artifact_update_parses(codec: Codec) -> None:
    file = FileContent.of_bytes("a.png", "image/png", PNG)
    update = ArtifactUpdate("t-1", "c-1", Artifact("a-1", "a.png", (Part.of_file(file),)), 1)
    result = on_the_wire(codec.encode_stream_event(update))
    if codec is V1:
        parsed = json_format.ParseDict(result, a2a_pb2.StreamResponse())
        assert parsed.artifact_update.artifact.parts[0].raw == PNG
    else:
        event = v03_types.TaskArtifactUpdateEvent.model_validate(result)
        part = event.artifact.parts[0].root
        assert isinstance(part, v03_types.FilePart)
        assert isinstance(part.file, v03_types.FileWithBytes)
        assert base64.b64decode(part.file.bytes) == PNG


@pytest.mark.parametrize("codec", [V1, V03])
def test_a_message_holds_at_most_so_many_data_and_file_parts(codec: Codec) -> None:
    data = {"data": {}} if codec is V1 else {"kind": "data", "data": {}}
    text = {"text": "t"} if codec is V1 else {"kind": "text", "text": "t"}
    build = v1_send if codec is V1 else v03_send
    taken = sent(codec, build(*[data] * MAX_ATTACHMENTS, *[text] * 200))
    assert len(taken.parts) == MAX_ATTACHMENTS + 200
    error = refusal(codec, build(*[data] * (MAX_ATTACHMENTS + 1)))
    assert error.code is ErrorCode.INVALID_PARAMS
    assert f"params.message.parts may hold at most {MAX_ATTACHMENTS}" in error.message
