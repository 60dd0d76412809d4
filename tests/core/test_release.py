"""A part no longer kept: a marker that says what was there, never an empty payload."""

from __future__ import annotations

from datetime import UTC, datetime

from n8n_a2a.core.release import (
    MARK,
    RELEASE_AT,
    Released,
    is_released,
    payload_bytes,
    released,
    released_task,
    task_payload_bytes,
)
from n8n_a2a.protocol.model import (
    Artifact,
    FileContent,
    Message,
    Part,
    PartKind,
    Role,
    Task,
    TaskState,
    TaskStatus,
)

NOW = datetime(2026, 12, 1, tzinfo=UTC)
CSV = Part.of_file(FileContent.of_bytes("big.csv", "text/csv", b"a,b\n" * 12_800))
#: What the CSV's 51,200 bytes take held: their base64.
CSV_HELD = 68_268


def test_a_released_file_is_a_text_part_naming_it_never_an_empty_file() -> None:
    marker = released(CSV, Released.BUDGET)
    assert marker.kind is PartKind.TEXT and marker.file is None
    assert marker.text.startswith("[The file big.csv (text/csv, 51,200 bytes) is no longer kept")
    assert "ADAPTER_MEMORY_BUDGET" in marker.text
    assert marker.metadata == {
        MARK: {
            "kind": "file",
            "reason": "budget",
            "name": "big.csv",
            "mediaType": "text/csv",
            "size": 51_200,
        }
    }
    assert is_released(marker) and not is_released(CSV)


def test_an_upload_kept_without_its_bytes_keeps_its_size_and_says_why() -> None:
    bare = Part.of_file(FileContent("scan.pdf", "application/pdf", size=921_600), {"k": 1})
    marker = released(bare, Released.UPLOAD)
    assert marker.text == (
        "[The file scan.pdf (application/pdf, 921,600 bytes) went to the workflow; the task "
        "keeps its name, type and size, not its bytes.]"
    )
    assert marker.metadata is not None
    assert marker.metadata["k"] == 1  # the part's own metadata stays
    assert marker.metadata[MARK]["size"] == 921_600
    assert marker.metadata[MARK]["reason"] == "upload"


def test_data_and_text_are_marked_by_their_encoded_size() -> None:
    data = Part.of_data({"rows": ["é" * 10]})
    assert payload_bytes(data) == len(('{"rows":["' + "é" * 10 + '"]}').encode())
    assert released(data, Released.BUDGET).metadata == {
        MARK: {"kind": "data", "reason": "budget", "size": payload_bytes(data)}
    }
    assert released(Part("ü" * 3), Released.BUDGET).text.startswith(
        "[A part of 6 bytes of text is no longer kept"
    )
    assert payload_bytes(released(data, Released.BUDGET)) == 0


def _finished(answer: str, *parts: Part) -> Task:
    reply = Message("r", Role.AGENT, (Part(answer),))
    return Task(
        "t",
        "c",
        TaskStatus(TaskState.COMPLETED, NOW, reply),
        history=(Message("m", Role.USER, (Part("hi"),)), reply),
        artifacts=(*(Artifact(f"a{n}", "x", (part,)) for n, part in enumerate(parts)),),
        metadata={"outcome": "ANSWERED"},
    )


def test_a_task_releases_its_large_parts_everywhere_and_says_where() -> None:
    long_answer = "w" * RELEASE_AT
    finished = _finished(long_answer, CSV, Part.of_data({"n": 1}))
    task = released_task(finished)
    # The file, and the answer (the status message and the history's last, one payload).
    assert task_payload_bytes(finished) - task_payload_bytes(task) == CSV_HELD + RELEASE_AT
    assert task.metadata == {"outcome": "ANSWERED", MARK: ["artifacts", "history", "status"]}
    assert is_released(task.artifacts[0].parts[0])
    assert task.artifacts[1].parts[0] == Part.of_data({"n": 1})  # small: kept
    assert task.status.message is not None and is_released(task.status.message.parts[0])
    assert task.history[0].parts == (Part("hi"),)
    assert released_task(task) is task  # nothing left to free


def test_a_task_of_small_parts_is_left_as_it_is() -> None:
    task = _finished("short", Part.of_data({"n": 1}))
    assert released_task(task) is task


def test_a_task_s_payload_bytes_count_each_payload_once_wherever_it_is_shown() -> None:
    answer = Message("m-2", Role.AGENT, (CSV, Part("done")))
    asked = Message("m-1", Role.USER, (Part("make the csv"),))
    task = Task(
        "t",
        "c",
        TaskStatus(TaskState.COMPLETED, NOW, answer),
        (asked, answer),  # the answer is the status message and the history's last
        artifacts=(Artifact("a", "answer", (CSV,)),),
    )
    assert task_payload_bytes(task) == CSV_HELD + len("done") + len("make the csv")
    after = released_task(task)
    assert task_payload_bytes(after) == len("done") + len("make the csv")
