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
