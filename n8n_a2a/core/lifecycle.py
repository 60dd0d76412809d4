"""The A2A task lifecycle, as a table: the one place that decides a task's next state.

A task moves by steps. The table below says, for each state, which states a task may
move to; a move the table does not list has lost a race and changes nothing: the task
was canceled while it waited for its call slot, or cut by shutdown as its workflow
answered, or ended by another process first. Losing is normal, never an error, and it
is decided here, not by whoever happened to move second. Pure: no I/O.

"A cut beats a verdict." A cut (CancelTask, shutdown) is recorded before the webhook
call is cancelled, so the call's own verdict, whenever it arrives, finds the task
terminal and loses. A verdict recorded first makes a later cancel a caller error
(-32002: the task is already done) and a later shutdown cut a no-op.

A task whose workflow asked a question waits in `input-required` for the caller's
next message, which starts the next turn: `submitted` again, exactly as a new task
begins (then `working` once it has a call slot), and the turn's own verdict decides
what follows. Nothing runs while it waits, so a shutdown leaves it alone; a cancel or
the end of its wait ends it.

Every other question about a state is answered here too, so that nobody else lists
states: terminal, interrupted, takes a message, leased. The spec's own two kinds
(terminal, interrupted) are listed once in protocol/model.py, which needs them for the
wire and cannot import this module; the answers below build on that list and on the
table, never restate them.
"""

from __future__ import annotations

from ..protocol.model import INTERRUPTED_STATES, TERMINAL_STATES, TaskState
from .errors import IllegalTransition

# state -> the states it may move to. Terminal states (completed, canceled, failed,
# rejected) have no row: nothing moves a finished task.
_NEXT: dict[TaskState, frozenset[TaskState]] = {
    # Admitted, waiting for a call slot (or about to take one):
    TaskState.SUBMITTED: frozenset(
        {
            TaskState.WORKING,  # it got its slot: the webhook call begins
            TaskState.CANCELED,  # canceled while it waited
            TaskState.FAILED,  # cut by shutdown while it waited
        }
    ),
    # Its webhook call is under way:
    TaskState.WORKING: frozenset(
        {
            TaskState.COMPLETED,  # the workflow answered
            TaskState.INPUT_REQUIRED,  # the workflow asked a question
            TaskState.AUTH_REQUIRED,  # the workflow asked the caller to sign in
            TaskState.FAILED,  # any other verdict, or cut by shutdown
            TaskState.CANCELED,  # canceled mid-call
        }
    ),
    # Waiting for the caller's answer to the workflow's question; nothing runs:
    TaskState.INPUT_REQUIRED: frozenset(
        {
            # The caller's next message came: its turn is admitted as a new task is,
            # and goes on to `working` once it has a call slot.
            TaskState.SUBMITTED,
            TaskState.CANCELED,  # canceled while it waited
            TaskState.FAILED,  # no answer came in time (ADAPTER_INPUT_TTL)
        }
    ),
}
# Waiting for the caller to sign in and say so: as for a question, the next message is
# the next turn (ADAPTER_ALLOW_AUTH_REQUIRED).
_NEXT[TaskState.AUTH_REQUIRED] = _NEXT[TaskState.INPUT_REQUIRED]

_NOWHERE: frozenset[TaskState] = frozenset()


def may_move(current: TaskState, to: TaskState) -> bool:
    """Whether a task in `current` may move to `to`; False means the move lost its race."""
    return to in _NEXT.get(current, _NOWHERE)


def may_cancel(current: TaskState) -> bool:
    """Whether CancelTask can still end a task in `current`."""
    return may_move(current, TaskState.CANCELED)


def is_terminal(state: TaskState) -> bool:
    """Done for good: nothing moves the task again, and a store may let it go in time."""
    return state in TERMINAL_STATES


def is_interrupted(state: TaskState) -> bool:
    """Waiting for the caller (more input, or credentials): nothing runs for the task."""
    return state in INTERRUPTED_STATES


def ends_turn(state: TaskState) -> bool:
    """Where a turn ends, terminal or interrupted: a blocking send's wait and a stream end
    here (StatusUpdate.final says it of an event)."""
    return is_terminal(state) or is_interrupted(state)


def takes_message(state: TaskState) -> bool:
    """Whether a message naming the task may begin its next turn: only where the table
    lets a turn begin. A task here waits for it, for ADAPTER_INPUT_TTL at most."""
    return may_move(state, TaskState.SUBMITTED)


def leased(state: TaskState) -> bool:
    """Whether a call runs for the task (or waits for its slot): with a shared store, the
    replica running it holds its lease, and the task ends LOST if that replica dies."""
    return not ends_turn(state)


def check_move(task_id: str, current: TaskState, to: TaskState) -> None:
    """Raise IllegalTransition unless the lifecycle allows the move (a store's last guard)."""
    if not may_move(current, to):
        raise IllegalTransition(task_id, current, to)
