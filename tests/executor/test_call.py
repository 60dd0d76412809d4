"""One webhook call's machine as tables: a sequence of events in, the actions each answers.

Each step is an event (or something heard: a cut, a chunk) and what the call asks of its
driver then, shown short: `take slot`, `mark working` (`from <state>` when the task is
known), `call`, `free slot`, `relay <text> (first)`, `cancel`, `record <outcome>` (`from
<state>`), `wait <moment>`, `fail <why>`, `release`, `read`, `report <state or none>
<status> <seconds>`. The store's patience is 15 s and its pauses 0.1 s doubling to 2 s,
as docs/operating.md says of a database restarting.
"""

from __future__ import annotations

import dataclasses
import json
import typing

import pytest

from n8n_a2a.core.replies import HttpReply, Outcome, StreamedReply
from n8n_a2a.executor.call import Call, Phase
from n8n_a2a.executor.call_events import (
    Action,
    Awaited,
    Broke,
    CallWorkflow,
    Cancel,
    Chunk,
    Cut,
    CutOff,
    Event,
    Fail,
    FreeSlot,
    Heard,
    MarkWorking,
    ReadBack,
    ReadEnd,
    Ready,
    Record,
    Recorded,
    Relay,
    Release,
    Replied,
    Report,
    SlotTaken,
    StoreOut,
    TakeSlot,
    WaitUntil,
    WorkflowFailed,
    Working,
)
from n8n_a2a.executor.config import ExecutorConfig
from n8n_a2a.protocol.model import Task, TaskState, TaskStatus
from tests.support.tasks import MOMENT, submitted_task

SUBMITTED = submitted_task("order 30 pallets")
Step = tuple[Event | Heard, list[str]]
AWAITED = typing.get_args(Awaited)


def in_state(state: TaskState, version: int) -> Task:
    return dataclasses.replace(SUBMITTED, status=TaskStatus(state, MOMENT), version=version)


WORKING = in_state(TaskState.WORKING, 2)
COMPLETED = in_state(TaskState.COMPLETED, 3)
CANCELED = in_state(TaskState.CANCELED, 3)
ANSWER = HttpReply(200, json.dumps({"answer": "30 ordered", "escalate": False}).encode())
QUESTION = HttpReply(
    200, json.dumps({"answer": "which size?", "escalate": False, "inputRequired": True}).encode()
)


def shown(action: Action) -> str:
    match action:
        case TakeSlot():
            return "take slot"
        case MarkWorking(known=known):
            return "mark working" + (f" from {known.status.state.value}" if known else "")
        case CallWorkflow():
            return "call"
        case FreeSlot():
            return "free slot"
        case Relay(update=update):
            first = " (first)" if not update.append else ""
            return f"relay {update.artifact.parts[0].text}{first}"
        case Cancel():
            return "cancel"
        case Record(verdict=verdict, known=known):
            return f"record {verdict.outcome.value}" + (
                f" from {known.status.state.value}" if known else ""
            )
        case WaitUntil(at=at):
            return f"wait {at:g}"
        case Fail(why=why):
            return f"fail {why}".strip()
        case Release():
            return "release"
        case ReadEnd():
            return "read"
        case Report(task=task, webhook_status=status, seconds=seconds):
            state = task.status.state.value if task else "none"
            return f"report {state} {status} {seconds}"
    raise AssertionError(action)


def play(call: Call, steps: list[Step]) -> None:
    for number, (event, expected) in enumerate(steps, start=1):
        match event:
            case Cut() | Chunk():
                actions: list[Action] = [*call.hear(event)]
            case _:
                actions = call.handle(event)
        assert [shown(action) for action in actions] == expected, f"step {number}: {event}"
        # The driver has one thing under way at a time: an answer awaits one thing, last.
        awaited = [i for i, action in enumerate(actions) if isinstance(action, AWAITED)]
        assert awaited in ([], [len(actions) - 1]), f"step {number}: {actions}"


def new_call(**config: object) -> Call:
    return Call(SUBMITTED, "answer-1", ExecutorConfig("skill", **config))  # type: ignore[arg-type]


TABLES: dict[str, list[Step]] = {
    "a free slot: the send marks working, the reply is recorded, the turn reported": [
        (Working(WORKING), ["call"]),
        (Replied(ANSWER, 0.5, at=10.0), ["free slot", "record ANSWERED from working"]),
        (Recorded(COMPLETED), ["release", "report completed 200 0.5"]),
        (Cut(), []),  # its own end, heard after: nothing left to cut
    ],
    "a question is recorded as any verdict (with the setting on)": [
        (Working(WORKING), ["call"]),
        (Replied(QUESTION, 0.5, at=1.0), ["free slot", "record INPUT_REQUIRED from working"]),
    ],
    "a streamed answer's chunks go out while the call is under way, the first one first": [
        (Working(WORKING), ["call"]),
        (Chunk("30 "), ["relay 30  (first)"]),
        (Chunk("ordered"), ["relay ordered"]),
        (
            Replied(StreamedReply(200, "30 ordered"), 2.0, 5.0),
            ["free slot", "record ANSWERED from working"],
        ),
        (Chunk("late"), []),  # after the reply: not relayed
    ],
    "a cut while calling cancels the call; the task is read back as the cut left it": [
        (Working(WORKING), ["call"]),
        (Cut(), ["cancel"]),
        (Chunk("read in the tick of the cut"), []),
        (CutOff(1.5), ["free slot", "release", "read"]),
        (ReadBack(CANCELED), ["report canceled None 1.5"]),
    ],
    "a cut in the tick the reply came wins: the reply is dropped": [
        (Working(WORKING), ["call"]),
        (Cut(), ["cancel"]),
        (Replied(ANSWER, 0.5, 1.0), ["free slot", "release", "read"]),
        (ReadBack(CANCELED), ["report canceled 200 0.5"]),
    ],
    "a cut while the send marks working (not cuttable): no call follows": [
        (Cut(), []),
        (Working(WORKING), ["release", "read"]),
        (ReadBack(CANCELED), ["report canceled None None"]),
    ],
    "a task ended before its move to working: no call, read back": [
        (Working(None), ["release", "read"]),
        (ReadBack(CANCELED), ["report canceled None None"]),
    ],
    "a store out of reach: the verdict waits, doubling, and is recorded once it is back": [
        (Working(WORKING), ["call"]),
        (Replied(ANSWER, 0.5, at=10.0), ["free slot", "record ANSWERED from working"]),
        (StoreOut(10.0), ["wait 10.1"]),
        (Ready(10.1), ["record ANSWERED"]),  # the task read again once the store is back
        (StoreOut(10.2), ["wait 10.4"]),
        (Ready(10.4), ["record ANSWERED"]),
        (Recorded(COMPLETED), ["release", "report completed 200 0.5"]),
    ],
    "a cut while the verdict waits for the store cancels nothing: the move decides": [
        (Working(WORKING), ["call"]),
        (Replied(ANSWER, 0.5, at=0.0), ["free slot", "record ANSWERED from working"]),
        (StoreOut(0.0), ["wait 0.1"]),
        (Cut(), []),
        (Ready(0.1), ["record ANSWERED"]),
        (Recorded(None), ["release", "read"]),  # the move lost: the task had ended
        (ReadBack(CANCELED), ["report canceled 200 0.5"]),
    ],
    "a workflow call that fails fails its task": [
        (Working(WORKING), ["call"]),
        (WorkflowFailed(0.2, 1.0), ["free slot", "record ADAPTER_ERROR from working"]),
        (Recorded(in_state(TaskState.FAILED, 3)), ["release", "report failed None 0.2"]),
    ],
    "a bug in a step fails the task, and the slot is given back first": [
        (Working(WORKING), ["call"]),
        (Broke(), ["free slot", "fail"]),
        (Recorded(None), ["release", "read"]),  # ending it failed too
        (Broke(), ["report none None None"]),  # and its read broke: what is known
    ],
}


@pytest.mark.parametrize("steps", TABLES.values(), ids=TABLES.keys())
def test_a_call_from_a_free_slot(steps: list[Step]) -> None:
    call = new_call(input_required=True)
    assert call.begin(waited=False) == MarkWorking(SUBMITTED)
    play(call, steps)


def test_past_the_store_patience_the_task_is_failed_saying_why() -> None:
    call = new_call(store_patience=1.0, webhook_timeout=0.5)
    call.begin(waited=False)
    play(
        call,
        [
            (Working(WORKING), ["call"]),
            (Replied(ANSWER, 0.5, at=10.0), ["free slot", "record ANSWERED from working"]),
            (StoreOut(10.0), ["wait 10.1"]),
            (Ready(10.1), ["record ANSWERED"]),
            (StoreOut(10.2), ["wait 10.4"]),
            (Ready(10.4), ["record ANSWERED"]),
            (StoreOut(10.5), ["wait 10.9"]),
            (Ready(10.9), ["record ANSWERED"]),
            (StoreOut(10.9), ["fail its verdict could not be recorded before the call's deadline"]),
            (StoreOut(11.0), []),  # the failure under way: no second
            (Recorded(in_state(TaskState.FAILED, 3)), ["release", "report failed 200 0.5"]),
        ],
    )


def test_a_verdict_waits_for_the_store_until_the_calls_webhook_timeout_has_run() -> None:
    """An outage longer than the store's patience that ends before the call's own webhook
    timeout (from the call's start) loses nothing: the verdict is recorded then."""
    call = new_call(store_patience=1.0, webhook_timeout=60.0)
    call.begin(waited=False)
    steps: list[Step] = [
        (Working(WORKING), ["call"]),
        # Called at 10, answered at 12: the deadline is 70.
        (Replied(ANSWER, 2.0, at=12.0), ["free slot", "record ANSWERED from working"]),
    ]
    at = 12.0
    for pause in (0.1, 0.2, 0.4, 0.8, 1.6, 2.0, 2.0):
        steps += [
            (StoreOut(at), [f"wait {at + pause:g}"]),
            (Ready(at + pause), ["record ANSWERED"]),
        ]
        at += pause
    steps += [
        (StoreOut(68.0), ["wait 70"]),  # the last wait that ends by the deadline
        (Ready(70.0), ["record ANSWERED"]),
        (Recorded(COMPLETED), ["release", "report completed 200 2.0"]),
    ]
    play(call, steps)


MARK_LATER: dict[str, list[Step]] = {
    "the store back: the task moves to working, the workflow is called": [
        (StoreOut(1.0), ["wait 1.1"]),
        (Ready(1.1), ["mark working from submitted"]),
        (StoreOut(1.1), ["wait 1.3"]),
        (Ready(1.3), ["mark working from submitted"]),
        (Working(WORKING), ["call"]),
        (Replied(ANSWER, 0.5, at=2.0), ["free slot", "record ANSWERED from working"]),
    ],
    "cut while it waits: its slot back, nothing called": [
        (StoreOut(1.0), ["wait 1.1"]),
        (Cut(), ["cancel"]),
        (CutOff(), ["free slot", "release", "read"]),
        (ReadBack(CANCELED), ["report canceled None None"]),
    ],
    "the store out for longer than its patience: the task fails, or its lease ends it": [
        (StoreOut(1.0), ["wait 1.1"]),
        (Ready(1.1), ["mark working from submitted"]),
        (
            StoreOut(1.9),
            ["free slot", "fail it could not be moved to working before the store's patience"],
        ),
    ],
}


@pytest.mark.parametrize("steps", MARK_LATER.values(), ids=MARK_LATER.keys())
def test_a_move_to_working_the_store_could_not_make_is_tried_again(steps: list[Step]) -> None:
    call = new_call(store_patience=1.0)
    assert call.begin(waited=False) == MarkWorking(SUBMITTED)
    play(call, steps)


IN_LINE: dict[str, list[Step]] = {
    "its turn comes: it marks working itself, then calls": [
        (SlotTaken(), ["mark working"]),
        (Working(WORKING), ["call"]),
        (Replied(ANSWER, 0.5, 1.0), ["free slot", "record ANSWERED from working"]),
    ],
    "cut in line: the wait is cancelled, no slot was held": [
        (Cut(), ["cancel"]),
        (CutOff(), ["release", "read"]),
        (ReadBack(CANCELED), ["report canceled None None"]),
    ],
    "cut in the tick its turn came: the slot goes back unused": [
        (Cut(), ["cancel"]),
        (SlotTaken(), ["free slot", "release", "read"]),
    ],
    "cut while it marks working, its slot held": [
        (SlotTaken(), ["mark working"]),
        (Cut(), ["cancel"]),
        (CutOff(), ["free slot", "release", "read"]),
    ],
    "the move to working lost (cut meanwhile, heard elsewhere)": [
        (SlotTaken(), ["mark working"]),
        (Working(None), ["free slot", "release", "read"]),
    ],
}


@pytest.mark.parametrize("steps", IN_LINE.values(), ids=IN_LINE.keys())
def test_a_call_that_waits_in_line(steps: list[Step]) -> None:
    call = new_call()
    assert call.begin(waited=True) == TakeSlot()
    play(call, steps)


def test_only_the_waits_and_the_call_are_cuttable() -> None:
    assert {phase for phase in Phase if phase.cuttable} == {
        Phase.IN_LINE,
        Phase.MARKING,
        Phase.WAITING_TO_MARK,
        Phase.CALLING,
    }


def test_an_ended_call_takes_nothing_more() -> None:
    call = new_call()
    call.begin(waited=False)
    play(
        call,
        [(Working(None), ["release", "read"]), (ReadBack(CANCELED), ["report canceled None None"])],
    )
    assert (call.phase, call.released) == (Phase.OVER, True)
    for event in (Replied(ANSWER, 0.1, 0.1), StoreOut(0.0), Broke(), ReadBack(None)):
        assert call.handle(event) == []
    assert call.hear(Chunk("x")) == []
    assert repr(call) == f"<Call {SUBMITTED.id} over cut=False>"


def test_a_reply_past_the_budget_fails_its_task_saying_so() -> None:
    call = new_call()
    call.begin(waited=False)
    call.handle(Working(WORKING))
    [_, record] = call.handle(WorkflowFailed(0.2, 1.0, full="past ADAPTER_MEMORY_BUDGET"))
    assert isinstance(record, Record)
    assert record.verdict.outcome is Outcome.ADAPTER_ERROR
    assert "could not be held: past ADAPTER_MEMORY_BUDGET" in record.verdict.text


def test_the_verdict_is_the_contracts() -> None:
    """The machine judges the reply by the contract and the card's modes: a reply off
    the contract fails the task, as core/contract.py says."""
    call = new_call()
    call.begin(waited=False)
    call.handle(Working(WORKING))
    [_, record] = call.handle(Replied(HttpReply(200, b"not json"), 0.1, 0.1))
    assert isinstance(record, Record)
    assert record.verdict.outcome is Outcome.OFF_CONTRACT
    assert record.answer_id == "answer-1"
