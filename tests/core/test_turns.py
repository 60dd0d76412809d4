"""The rules of a turn, tested as tables: what each verdict, message and state comes to."""

from __future__ import annotations

import functools
import operator
import uuid
from dataclasses import replace

import pytest

from n8n_a2a.core.replies import Outcome, Verdict
from n8n_a2a.core.turns import (
    ADAPTER_FAILED,
    ANSWER,
    CANCELED,
    CUT_BY_SHUTDOWN,
    LOST,
    answer_chunk,
    check_turn,
    ended,
    first_turn,
    input_expired,
    new_id,
    next_turn,
    not_cancelable,
    started,
    state_for,
    takes_no_message,
)
from n8n_a2a.protocol.errors import A2AError, ErrorCode
from n8n_a2a.protocol.model import FileContent, Message, Part, Role, Task, TaskState, TaskStatus
from tests.support.tasks import MOMENT

S = TaskState


def a_task(state: TaskState, **metadata: object) -> Task:
    first = Message("m-1", Role.USER, (Part("which item?"),), "t-1", "c-1")
    return Task("t-1", "c-1", TaskStatus(state, MOMENT), (first,), metadata=dict(metadata))


def said(text: str, *, context_id: str | None = None) -> Message:
    return Message("m-2", Role.USER, (Part(text),), "t-1", context_id)


def test_only_an_answer_completes_and_only_a_question_waits() -> None:
    assert [o for o in Outcome if state_for(o) is S.COMPLETED] == [Outcome.ANSWERED]
    assert [o for o in Outcome if state_for(o) is S.INPUT_REQUIRED] == [Outcome.INPUT_REQUIRED]
    assert [o for o in Outcome if state_for(o) is S.AUTH_REQUIRED] == [Outcome.AUTH_REQUIRED]
    assert [o for o in Outcome if state_for(o) is S.CANCELED] == [Outcome.CANCELED]
    rest = {Outcome.ANSWERED, Outcome.INPUT_REQUIRED, Outcome.AUTH_REQUIRED, Outcome.CANCELED}
    assert {state_for(o) for o in Outcome if o not in rest} == {S.FAILED}
    assert state_for(Outcome.INPUT_EXPIRED) is S.FAILED


@pytest.mark.parametrize("outcome", list(Outcome))
def test_a_verdict_ends_the_turn_with_its_state_and_message(outcome: Outcome) -> None:
    change = ended(a_task(S.WORKING), Verdict(outcome, "flour"), MOMENT)
    assert (change.state, change.timestamp) == (state_for(outcome), MOMENT)
    assert change.metadata == {"outcome": outcome.value}
    assert change.message is not None
    assert (change.message.role, change.message.parts) == (Role.AGENT, (Part("flour"),))
    assert (change.message.task_id, change.message.context_id) == ("t-1", "c-1")
    assert change.message.metadata == {"outcome": outcome.value}
    assert change.history == ()
    # Only an answer is an artifact too.
    if outcome is Outcome.ANSWERED:
        [answer] = change.artifacts
        assert (answer.name, answer.parts) == ("answer", (Part("flour"),))
    else:
        assert change.artifacts == ()


@pytest.mark.parametrize(
    ("verdict", "state", "outcome", "says"),
    [
        (CANCELED, S.CANCELED, "CANCELED", "Canceled by the caller"),
        (CUT_BY_SHUTDOWN, S.FAILED, "SHUTDOWN", "the workflow may still have run"),
        (LOST, S.FAILED, "LOST", "may or may not have run"),
        (ADAPTER_FAILED, S.FAILED, "ADAPTER_ERROR", "see its log"),
        (input_expired(60), S.FAILED, "INPUT_EXPIRED", "within 60 s (ADAPTER_INPUT_TTL)"),
    ],
)
def test_the_verdicts_the_adapter_gives(
    verdict: Verdict, state: TaskState, outcome: str, says: str
) -> None:
    change = ended(a_task(S.WORKING), verdict, MOMENT)
    assert (change.state, change.metadata) == (state, {"outcome": outcome})
    assert change.message is not None and says in change.message.parts[0].text


def test_a_reply_is_kept_whole_and_its_repair_marked_beside_the_message_s() -> None:
    # Past the 8,192 characters that were once all a task kept of it.
    verdict = Verdict(Outcome.ANSWERED, "y" * 1_000_000, repaired=True)
    change = ended(a_task(S.WORKING, repaired=["message"]), verdict, MOMENT)
    assert change.metadata == {"outcome": "ANSWERED", "repaired": ["message", "reply"]}
    [answer] = change.artifacts
    assert answer.parts == (Part("y" * 1_000_000),)
    assert change.message is not None and change.message.parts == (Part("y" * 1_000_000),)


def test_a_call_with_its_slot_makes_the_task_work() -> None:
    change = started(MOMENT)
    assert (change.state, change.timestamp, change.message, change.metadata) == (
        S.WORKING,
        MOMENT,
        None,
        None,
    )


@pytest.mark.parametrize(("context_id", "new_context"), [(None, True), ("c-9", False)])
def test_a_first_turn_is_a_new_submitted_task(context_id: str | None, new_context: bool) -> None:
    message = Message("m-1", Role.USER, (Part("12 pallets"),), context_id=context_id)
    task = first_turn(message, "token:alice", MOMENT)
    assert task.status == TaskStatus(S.SUBMITTED, MOMENT)
    assert (task.owner, task.metadata, task.version) == ("token:alice", {}, 0)
    assert (task.context_id != "c-9") is new_context
    [kept] = task.history
    assert (kept.task_id, kept.context_id, kept.parts) == (
        task.id,
        task.context_id,
        (Part("12 pallets"),),
    )
    assert task.id != first_turn(message, None, MOMENT).id


def test_a_first_turn_keeps_the_message_whole_and_an_upload_as_its_marker() -> None:
    upload = Part.of_file(FileContent.of_bytes("scan.pdf", "application/pdf", bytes(50_000)))
    task = first_turn(Message("m-1", Role.USER, (Part("x" * 50_000), upload)), None, MOMENT)
    assert task.metadata == {}
    text, marker = task.history[0].parts
    assert text == Part("x" * 50_000)
    assert marker.file is None and marker.metadata is not None
    assert marker.metadata["released"]["size"] == 50_000


# Which states take a message, and what a message naming a task in any other is told:
# state -> a part of the refusal (None: it takes the message).
TAKES = {
    S.SUBMITTED: "is submitted: it takes a message only while it asks for one",
    S.WORKING: "is working: it takes a message only while it asks for one",
    S.INPUT_REQUIRED: None,
    S.AUTH_REQUIRED: None,
    S.COMPLETED: "is completed and takes no further messages",
    S.CANCELED: "is canceled and takes no further messages",
    S.FAILED: "is failed and takes no further messages",
    S.REJECTED: "is rejected and takes no further messages",
}


@pytest.mark.parametrize("state", list(TaskState))
def test_which_states_take_a_message(state: TaskState) -> None:
    task = a_task(state)
    refusal = TAKES[state]
    if refusal is None:
        check_turn(task, said("flour"))
        return
    with pytest.raises(A2AError) as raised:
        check_turn(task, said("flour"))
    assert raised.value.code is ErrorCode.UNSUPPORTED_OPERATION
    assert f"Task t-1 {refusal}" in raised.value.message


def test_a_task_that_asked_again_tells_why_an_older_answer_lost() -> None:
    # A message whose turn lost its race to another message, which asked again since.
    error = takes_no_message(a_task(S.INPUT_REQUIRED))
    assert error.code is ErrorCode.UNSUPPORTED_OPERATION
    assert "Task t-1 has asked another question since this message was sent" in error.message


@pytest.mark.parametrize(("context_id", "takes"), [(None, True), ("c-1", True), ("c-2", False)])
def test_a_next_turn_stays_in_its_tasks_context(context_id: str | None, takes: bool) -> None:
    message = said("flour", context_id=context_id)
    if takes:
        check_turn(a_task(S.INPUT_REQUIRED), message)
        return
    with pytest.raises(A2AError) as raised:
        check_turn(a_task(S.INPUT_REQUIRED), message)
    assert raised.value.code is ErrorCode.INVALID_PARAMS
    assert "message.contextId 'c-2'" in raised.value.message


def test_a_next_turn_submits_the_task_again_with_the_message() -> None:
    change = next_turn(a_task(S.INPUT_REQUIRED), said("flour"), MOMENT)
    assert (change.state, change.timestamp) == (S.SUBMITTED, MOMENT)
    assert (change.message, change.artifacts, change.metadata) == (None, (), None)
    [turn] = change.history
    assert (turn.task_id, turn.context_id, turn.parts) == ("t-1", "c-1", (Part("flour"),))


def test_a_next_turn_repaired_adds_its_mark_to_the_tasks() -> None:
    task = a_task(S.INPUT_REQUIRED, repaired=["message"], outcome="INPUT_REQUIRED")
    change = next_turn(task, said("x" * 50_000 + "\ud83d"), MOMENT)
    assert change.metadata == {"repaired": ["message", "message"]}
    assert change.history[0].parts == (Part("x" * 50_000 + "\ufffd"),)


def test_a_next_turn_checks_its_message_first() -> None:
    with pytest.raises(A2AError) as raised:
        next_turn(a_task(S.WORKING), said("flour"), MOMENT)
    assert raised.value.code is ErrorCode.UNSUPPORTED_OPERATION


def test_a_finished_task_is_not_cancelable() -> None:
    error = not_cancelable(a_task(S.COMPLETED))
    assert error.code is ErrorCode.TASK_NOT_CANCELABLE
    assert error.message == "Task t-1 is completed and cannot be canceled"


def test_an_answer_makes_its_data_and_files_artifacts_before_the_answer() -> None:
    csv = Part.of_file(FileContent.of_bytes("r.csv", "text/csv", b"a,b"))
    unnamed = Part.of_file(FileContent("", "image/png", url="http://x/p.png"))
    verdict = Verdict(Outcome.ANSWERED, "done", parts=(Part.of_data({"n": 1}), csv, unnamed))
    change = ended(a_task(S.WORKING), verdict, MOMENT)
    assert [(a.name, a.parts) for a in change.artifacts] == [
        ("data", (Part.of_data({"n": 1}),)),
        ("r.csv", (csv,)),
        ("file", (unnamed,)),
        ("answer", (Part("done"),)),
    ]
    assert len({a.artifact_id for a in change.artifacts}) == 4
    assert change.metadata == {"outcome": "ANSWERED"}


def test_data_and_files_are_kept_whole_however_large() -> None:
    big = Part.of_file(FileContent.of_bytes("b.png", "image/png", bytes(20 * 1024 * 1024)))
    data = Part.of_data({"rows": ["d" * 1000] * 1000})
    verdict = Verdict(Outcome.ANSWERED, "y", parts=(data, big))
    change = ended(a_task(S.WORKING), verdict, MOMENT)
    assert change.metadata == {"outcome": "ANSWERED"}
    assert [a.parts for a in change.artifacts[:2]] == [(data,), (big,)]


def test_a_streamed_answer_goes_in_chunks_then_whole_under_one_id() -> None:
    task = replace(a_task(S.WORKING), version=1, relayed=3)
    first = answer_chunk(task, "answer-1", "Yes", 0)
    then = answer_chunk(task, "answer-1", ", 12", 1)
    assert (first.sequence, first.append, first.last_chunk) == (2, False, False)
    assert (then.append, then.last_chunk, then.artifact.name) == (True, False, ANSWER)
    # Each a generation of the task's: the task is at 5, its chunks 6 and 7.
    assert (task.generation, first.generation, then.generation) == (5, 6, 7)
    change = ended(task, Verdict(Outcome.ANSWERED, "Yes, 12"), MOMENT, "answer-1")
    [whole] = change.artifacts
    assert (whole.artifact_id, whole.parts[0].text) == ("answer-1", "Yes, 12")


def test_a_new_id_is_a_random_uuid_in_its_canonical_form() -> None:
    ids = {new_id() for _ in range(1000)}
    assert len(ids) == 1000
    for made in ids:
        parsed = uuid.UUID(made)
        assert (parsed.version, parsed.variant) == (4, uuid.RFC_4122)
        assert str(parsed) == made
    # Every other bit is random: among a thousand ids, each is seen set and clear.
    every = (1 << 128) - 1
    free = every & ~((0xF000 << 64) | (0xC000 << 48))
    values = [uuid.UUID(made).int for made in ids]
    assert functools.reduce(operator.or_, values) & free == free
    assert functools.reduce(operator.or_, (every & ~v for v in values)) & free == free
