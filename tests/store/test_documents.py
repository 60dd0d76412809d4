"""Tasks' parts as the database holds them: the documents written out, and read back equal."""

from __future__ import annotations

import json

from n8n_a2a.protocol.model import (
    Artifact,
    ArtifactUpdate,
    FileContent,
    Message,
    Part,
    Role,
    StatusUpdate,
    TaskState,
    TaskStatus,
)
from n8n_a2a.protocol.writing import dump
from n8n_a2a.store.documents import (
    artifact_doc,
    artifact_of,
    event_doc,
    event_of,
    message_doc,
    message_of,
    part_doc,
    part_of,
    stored_json,
)
from tests.support.tasks import MOMENT


def test_a_text_part_is_written_as_it_always_was() -> None:
    assert part_doc(Part("hi")) == {"text": "hi"}
    assert part_doc(Part("hi", {"k": 1})) == {"text": "hi", "metadata": {"k": 1}}
    assert part_of({"text": "hi"}) == Part("hi")


def test_data_and_file_parts_name_their_kind_and_read_back_equal() -> None:
    data = Part.of_data({"pallets": 4})
    assert part_doc(data) == {"kind": "data", "data": {"pallets": 4}}
    linked = Part.of_file(FileContent("a.csv", "text/csv", url="https://files.example/a.csv"))
    held = Part.of_file(FileContent.of_bytes("b.bin", "application/octet-stream", b"\x00\xff"))
    for part in (data, linked, held):
        doc = part_doc(part)
        assert doc["kind"] in {"data", "file"}
        assert part_of(json.loads(dump(doc))) == part


def test_a_file_an_older_release_kept_without_bytes_reads_back_as_its_marker() -> None:
    # What a task kept of a caller's upload before the markers: name, type and size.
    bare = {"kind": "file", "name": "scan.pdf", "mediaType": "application/pdf", "size": 912}
    doc = {"messageId": "m-1", "role": "user", "parts": [{"text": "see"}, bare]}
    [text, upload] = message_of(doc).parts
    assert text == Part("see") and upload.file is None
    facts = {"kind": "file", "name": "scan.pdf", "mediaType": "application/pdf", "size": 912}
    assert upload.metadata == {"released": {**facts, "reason": "upload"}}
    # An answer's file, cut once past a size: no longer kept either.
    [cut] = artifact_of({"artifactId": "a-1", "name": "scan.pdf", "parts": [bare]}).parts
    assert cut.metadata == {"released": {**facts, "reason": "budget"}}


def test_a_message_keeps_only_the_ids_it_has() -> None:
    bare = Message("m-1", Role.USER, (Part("hi"),))
    assert message_doc(bare) == {"messageId": "m-1", "role": "user", "parts": [{"text": "hi"}]}
    full = Message("m-2", Role.AGENT, (Part("yes"),), "t-1", "c-1", {"k": "v"})
    assert message_doc(full) == {
        "messageId": "m-2",
        "role": "agent",
        "parts": [{"text": "yes"}],
        "taskId": "t-1",
        "contextId": "c-1",
        "metadata": {"k": "v"},
    }
    assert [message_of(message_doc(m)) for m in (bare, full)] == [bare, full]


def test_an_artifact_reads_back_equal() -> None:
    artifact = Artifact("a-1", "answer", (Part("12 pallets"), Part.of_data([1, 2])))
    assert artifact_of(artifact_doc(artifact)) == artifact


def test_events_are_written_without_the_ids_the_row_holds_and_read_back_with_them() -> None:
    status = TaskStatus(TaskState.COMPLETED, MOMENT, Message("m-3", Role.AGENT, (Part("ok"),)))
    update = StatusUpdate("t-1", "c-1", status, 4, {"n8n": "x"})
    doc = event_doc(update)
    assert set(doc) == {"status", "metadata"}
    assert doc["status"]["timestamp"] == "2026-11-29T18:34:32+00:00"
    assert event_of("t-1", "c-1", 4, json.loads(dump(doc))) == update
    chunk = ArtifactUpdate("t-1", "c-1", Artifact("a-1", "answer", (Part("1"),)), 5, True, False)
    doc = event_doc(chunk)
    assert (doc["append"], doc["lastChunk"]) == (True, False)
    assert event_of("t-1", "c-1", 5, doc) == chunk


def test_a_stored_file_reads_back_as_a_slice_of_the_document_and_anything_else_as_text() -> None:
    """A document holding a file is parsed with the file's base64 left in its bytes: one
    copy, not a str and bytes of its own. A long base64 anywhere else is text."""
    content = bytes(range(256)) * 400  # 100 KiB: past carving.CARVE_AT as base64
    held = Part.of_file(FileContent.of_bytes("b.bin", "application/octet-stream", content))
    data = Part.of_data({"blob": "QUJD" * 20_000})
    doc = artifact_doc(Artifact("a-1", "answer", (held, data)))
    written = bytes(dump(doc))
    read = stored_json(written)
    [file_part, data_part] = artifact_of(read).parts
    assert file_part == held and data_part == data
    assert file_part.file is not None and file_part.file.content == content
    [piece] = file_part.file.encoded.pieces  # type: ignore[union-attr]
    assert isinstance(piece, memoryview) and piece.obj is written
    assert type(read["parts"][1]["data"]["blob"]) is str
    # An event's artifact and its status message's parts are read so too.
    update = event_doc(ArtifactUpdate("t", "c", Artifact("a-2", "file", (held,)), 3))
    [event_part] = event_of("t", "c", 3, stored_json(bytes(dump(update)))).artifact.parts  # type: ignore[union-attr]
    assert isinstance(event_part.file.encoded.pieces[0], memoryview)  # type: ignore[union-attr]
    reply = Message("m-2", Role.AGENT, (held,), "t", "c")
    status = event_doc(StatusUpdate("t", "c", TaskStatus(TaskState.COMPLETED, MOMENT, reply), 4))
    [status_part] = event_of("t", "c", 4, stored_json(bytes(dump(status)))).status.message.parts  # type: ignore[union-attr]
    assert isinstance(status_part.file.encoded.pieces[0], memoryview)  # type: ignore[union-attr]


def test_a_short_stored_document_is_read_as_json_reads_it() -> None:
    doc = message_doc(Message("m-1", Role.USER, (Part("hi"),), "t", "c"))
    written = bytes(dump(doc))
    assert stored_json(written) == json.loads(written) == doc
    assert stored_json(written.decode()) == doc
