"""What a streamed answer's chunks have relayed so far, and the task a subscriber who joins
mid-answer begins with (pure)."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime

from n8n_a2a.protocol.model import (
    Artifact,
    ArtifactUpdate,
    Part,
    Task,
    TaskState,
    TaskStatus,
)
from n8n_a2a.store.relays import RelayedSoFar, joined

WORKING = Task(
    "t-1", "c-1", TaskStatus(TaskState.WORKING, datetime(2026, 12, 4, tzinfo=UTC)), version=1
)


def chunk(text: str, index: int, answer: str = "answer-1") -> ArtifactUpdate:
    artifact = Artifact(answer, "answer", (Part(text),))
    return ArtifactUpdate(
        "t-1", "c-1", artifact, 2, append=index > 0, last_chunk=False, relayed=index
    )


def test_the_chunks_so_far_are_one_numbered_as_the_last_until_the_task_moves() -> None:
    so_far = RelayedSoFar()
    assert not so_far and so_far.get("t-1") is None
    for index, text in enumerate(("Yes", ", 12", " pallets")):
        so_far.add(chunk(text, index))
    whole = so_far.get("t-1")
    assert whole is not None
    assert (whole.artifact.parts[0].text, whole.relayed, whole.append) == (
        "Yes, 12 pallets",
        2,
        False,
    )
    so_far.add(chunk("New", 0, answer="answer-2"))  # another turn's answer begins anew
    assert so_far.get("t-1") is not None and so_far.get("t-1").artifact.parts[0].text == "New"  # type: ignore[union-attr]
    so_far.drop("t-1")
    assert so_far.get("t-1") is None and not so_far


def test_a_subscriber_who_joins_mid_answer_begins_with_it_at_its_generation() -> None:
    so_far = RelayedSoFar()
    for index, text in enumerate(("Yes", ", 12")):
        so_far.add(chunk(text, index))
    seen = joined(WORKING, so_far.get("t-1"))
    assert seen.artifacts[-1].parts[0].text == "Yes, 12"
    # working is generation 2; the two chunks 3 and 4.
    assert (WORKING.generation, seen.generation) == (2, 4)
    assert joined(WORKING, None) == WORKING
    # Chunks of a turn the task has moved past are none of its.
    assert joined(replace(WORKING, version=3), so_far.get("t-1")).artifacts == ()
