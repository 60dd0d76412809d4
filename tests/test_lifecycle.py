"""The lifecycle table, tested as a table: every state against every state."""

from __future__ import annotations

import itertools

import pytest

from n8n_a2a.lifecycle import (
    IllegalTransition,
    check_move,
    may_cancel,
    may_move,
    state_for,
)
from n8n_a2a.outcome import Outcome
from n8n_a2a.protocol.model import TaskState

S = TaskState
# The whole table: every legal move. Anything else loses its race.
LEGAL = {
    (S.SUBMITTED, S.WORKING),
    (S.SUBMITTED, S.CANCELED),
    (S.SUBMITTED, S.FAILED),
    (S.WORKING, S.COMPLETED),
    (S.WORKING, S.INPUT_REQUIRED),
    (S.WORKING, S.FAILED),
    (S.WORKING, S.CANCELED),
    # A task waiting for input: its next turn is admitted, or it is canceled, or its
    # wait runs out.
    (S.INPUT_REQUIRED, S.SUBMITTED),
    (S.INPUT_REQUIRED, S.CANCELED),
    (S.INPUT_REQUIRED, S.FAILED),
}


@pytest.mark.parametrize(("current", "to"), list(itertools.product(TaskState, TaskState)))
def test_the_table(current: TaskState, to: TaskState) -> None:
    assert may_move(current, to) is ((current, to) in LEGAL)


@pytest.mark.parametrize("state", [s for s in TaskState if s.is_terminal])
def test_nothing_moves_a_finished_task(state: TaskState) -> None:
    assert not any(may_move(state, to) for to in TaskState)
    assert not may_cancel(state)


def test_a_task_can_be_canceled_until_it_ends() -> None:
    assert [s for s in TaskState if may_cancel(s)] == [S.SUBMITTED, S.WORKING, S.INPUT_REQUIRED]


def test_a_next_turn_begins_as_a_new_task_does() -> None:
    # Whatever call slot it finds, a turn passes through `submitted`, never skipping it.
    assert [to for to in TaskState if may_move(S.INPUT_REQUIRED, to) and not to.is_terminal] == [
        S.SUBMITTED
    ]


def test_nothing_is_ever_rejected_by_this_agent() -> None:
    # Every send is admitted or refused with a JSON-RPC error before a task exists.
    assert not any(may_move(s, S.REJECTED) for s in TaskState)


def test_only_an_answer_completes_and_only_a_question_waits() -> None:
    assert [o for o in Outcome if state_for(o) is S.COMPLETED] == [Outcome.ANSWERED]
    assert [o for o in Outcome if state_for(o) is S.INPUT_REQUIRED] == [Outcome.INPUT_REQUIRED]
    assert [o for o in Outcome if state_for(o) is S.CANCELED] == [Outcome.CANCELED]
    rest = {Outcome.ANSWERED, Outcome.INPUT_REQUIRED, Outcome.CANCELED}
    assert {state_for(o) for o in Outcome if o not in rest} == {S.FAILED}
    assert state_for(Outcome.INPUT_EXPIRED) is S.FAILED


def test_check_move_names_the_illegal_move() -> None:
    check_move("t-1", S.WORKING, S.COMPLETED)
    with pytest.raises(IllegalTransition, match="t-1: completed -> working"):
        check_move("t-1", S.COMPLETED, S.WORKING)
