"""The lifecycle table, tested as a table: every state against every state."""

from __future__ import annotations

import itertools

import pytest

from n8n_a2a.core.errors import IllegalTransition
from n8n_a2a.core.lifecycle import (
    check_move,
    is_interrupted,
    is_terminal,
    leased,
    may_cancel,
    may_move,
    takes_message,
)
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
    # A task waiting for the caller to sign in (ADAPTER_ALLOW_AUTH_REQUIRED): the same.
    (S.WORKING, S.AUTH_REQUIRED),
    (S.AUTH_REQUIRED, S.SUBMITTED),
    (S.AUTH_REQUIRED, S.CANCELED),
    (S.AUTH_REQUIRED, S.FAILED),
}


@pytest.mark.parametrize(("current", "to"), list(itertools.product(TaskState, TaskState)))
def test_the_table(current: TaskState, to: TaskState) -> None:
    assert may_move(current, to) is ((current, to) in LEGAL)


@pytest.mark.parametrize("state", [s for s in TaskState if is_terminal(s)])
def test_nothing_moves_a_finished_task(state: TaskState) -> None:
    assert not any(may_move(state, to) for to in TaskState)
    assert not may_cancel(state)


def test_a_task_can_be_canceled_until_it_ends() -> None:
    assert [s for s in TaskState if may_cancel(s)] == [
        S.SUBMITTED,
        S.WORKING,
        S.INPUT_REQUIRED,
        S.AUTH_REQUIRED,
    ]


def test_a_next_turn_begins_as_a_new_task_does() -> None:
    # Whatever call slot it finds, a turn passes through `submitted`, never skipping it.
    assert [to for to in TaskState if may_move(S.INPUT_REQUIRED, to) and not is_terminal(to)] == [
        S.SUBMITTED
    ]


def test_nothing_is_ever_rejected_by_this_agent() -> None:
    # Every send is admitted or refused with a JSON-RPC error before a task exists.
    assert not any(may_move(s, S.REJECTED) for s in TaskState)


def test_check_move_names_the_illegal_move() -> None:
    check_move("t-1", S.WORKING, S.COMPLETED)
    with pytest.raises(IllegalTransition, match="t-1: completed -> working"):
        check_move("t-1", S.COMPLETED, S.WORKING)


# Every question about a state, answered for every state: (terminal, interrupted, takes a
# message, leased).
ANSWERS = {
    S.SUBMITTED: (False, False, False, True),
    S.WORKING: (False, False, False, True),
    S.INPUT_REQUIRED: (False, True, True, False),
    S.AUTH_REQUIRED: (False, True, True, False),
    S.COMPLETED: (True, False, False, False),
    S.CANCELED: (True, False, False, False),
    S.FAILED: (True, False, False, False),
    S.REJECTED: (True, False, False, False),
}


@pytest.mark.parametrize("state", list(TaskState))
def test_what_a_state_means(state: TaskState) -> None:
    assert (is_terminal(state), is_interrupted(state), takes_message(state), leased(state)) == (
        ANSWERS[state]
    )


def test_a_task_takes_a_message_where_a_next_turn_may_begin() -> None:
    assert [s for s in TaskState if takes_message(s)] == [
        s for s in TaskState if may_move(s, S.SUBMITTED)
    ]


def test_a_task_is_leased_while_it_may_still_move_without_the_caller() -> None:
    # A call runs for it, or waits for its slot: neither done nor waiting for the caller.
    moves = {s for s in TaskState if any(may_move(s, to) for to in TaskState)}
    assert {s for s in TaskState if leased(s)} == moves - {s for s in moves if is_interrupted(s)}
