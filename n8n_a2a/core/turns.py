"""What each step of a turn does to a task, decided without I/O: the executor asks, then acts.

A turn begins with the caller's message, on a new task or on one that asked a question,
gets a call slot, and ends with a verdict: the workflow's (outcome.classify), or one the
adapter gives in its place (a cancel, a shutdown cut, a lost replica, a wait run out).
Each rule here returns what to record (a Task, a Change) or the A2AError to raise.
Whether a change may still happen when it is recorded, the lifecycle decides.
"""

from __future__ import annotations

import os
from datetime import datetime

from ..protocol.errors import A2AError, ErrorCode
from ..protocol.model import (
    Artifact,
    ArtifactUpdate,
    JSONObject,
    Message,
    Part,
    Role,
    Task,
    TaskState,
    TaskStatus,
)
from . import lifecycle
from .changes import Change
from .owners import Owner
from .replies import Outcome, Verdict
from .retention import kept_message

#: The name of the artifact that carries the workflow's text answer.
ANSWER = "answer"

# The verdicts the adapter gives in the workflow's place.
CANCELED = Verdict(Outcome.CANCELED, "Canceled by the caller before the workflow answered.")
CUT_BY_SHUTDOWN = Verdict(
    Outcome.SHUTDOWN,
    "The adapter shut down before the workflow answered; the workflow may still have run. "
    "Send the message again.",
)
LOST = Verdict(
    Outcome.LOST,
    "The adapter replica running this task stopped before the workflow answered; the "
    "workflow may or may not have run. Send the message again if it should run.",
)
ADAPTER_FAILED = Verdict(
    Outcome.ADAPTER_ERROR, "The adapter failed while calling the workflow; see its log."
)


def reply_not_held(why: str) -> Verdict:
    """The verdict on a call whose reply could not be held under the memory budget."""
    return Verdict(
        Outcome.ADAPTER_ERROR,
        f"The workflow answered, but its reply could not be held: {why}. The workflow ran; "
        "send the message again if it should run again.",
    )


def input_expired(input_ttl: float, state: TaskState = TaskState.INPUT_REQUIRED) -> Verdict:
    """The verdict on a task whose question (or request to sign in: `state`) went
    unanswered for `input_ttl` seconds."""
    what = "sign-in" if state is TaskState.AUTH_REQUIRED else "answer to the agent's question"
    return Verdict(
        Outcome.INPUT_EXPIRED,
        f"No {what} came within {input_ttl:g} s "
        "(ADAPTER_INPUT_TTL), so the task ended. Send a new message to start again.",
    )


#: A random UUID's variant (RFC 9562's: 10 in the top two bits), by the hex digit it takes
#: the place of; its version (4) is a digit of its own.
_VARIANT = {digit: "89ab"[int(digit, 16) & 3] for digit in "0123456789abcdef"}


def new_id() -> str:
    """A fresh id: of a task, a context, a message or an artifact. A random UUID, as
    str(uuid.uuid4()) is, made of the random bytes' hex: four ids a send, and the UUID
    object's checks (or an int's bit arithmetic) cost more than the bytes."""
    digits = os.urandom(16).hex()
    return (
        f"{digits[:8]}-{digits[8:12]}-4{digits[13:16]}-"
        f"{_VARIANT[digits[16]]}{digits[17:20]}-{digits[20:]}"
    )


def first_turn(message: Message, owner: Owner, now: datetime) -> Task:
    """A new task for the message, `submitted`, on the message's context or a new one. It
    keeps the message as `kept_message` makes it (the workflow gets all of it)."""
    task_id = new_id()
    context_id = message.context_id or new_id()
    kept, marks = kept_message(message, task_id, context_id)
    return Task(
        id=task_id,
        context_id=context_id,
        status=TaskStatus(TaskState.SUBMITTED, now),
        history=(kept,),
        metadata=marks,
        owner=owner,
    )


def check_turn(task: Task, message: Message) -> None:
    """Raise unless `message` may be the next turn of `task`: its context, and a question."""
    if message.context_id is not None and message.context_id != task.context_id:
        raise A2AError.invalid_params(
            f"Task {task.id} belongs to another context than "
            f"message.contextId {message.context_id!r}"
        )
    if not lifecycle.takes_message(task.status.state):
        raise takes_no_message(task)


def check_generation(task: Task, expected: int | None) -> None:
    """Raise TaskGenerationMismatchError unless `task` is at the generation a send's
    `ifGenerationMatch` expects (None: it expects none)."""
    if expected is not None and expected != task.generation:
        raise A2AError(
            ErrorCode.TASK_GENERATION_MISMATCH,
            f"Task generation mismatch: expected {expected} but current generation is "
            f"{task.generation} (GetTask shows the task as it is now)",
            {
                "taskId": task.id,
                "expectedGeneration": str(expected),
                "currentGeneration": str(task.generation),
            },
        )


def next_turn(task: Task, message: Message, now: datetime) -> Change:
    """The change a message answering `task`'s question makes (after `check_turn`): it
    joins the history and the task is `submitted` again, as a new one begins."""
    check_turn(task, message)
    turn, marks = kept_message(message, task.id, task.context_id)
    # What was repaired of this message adds to the task's earlier marks.
    metadata = {mark: [*task.metadata.get(mark, ()), *made] for mark, made in marks.items()}
    return Change(TaskState.SUBMITTED, now, metadata=metadata or None, history=(turn,))


def takes_no_message(task: Task) -> A2AError:
    """Why a message naming `task` cannot begin a turn of it: it does not wait for one
    (any more: a message, a cancel or the end of its wait may have come first)."""
    state = task.status.state
    if lifecycle.takes_message(state):
        asked = "to sign in" if state is TaskState.AUTH_REQUIRED else "another question"
        return A2AError(
            ErrorCode.UNSUPPORTED_OPERATION,
            f"Task {task.id} has asked {asked} since this message was sent (another "
            "message answered the one before): read it (GetTask) and reply to it",
        )
    if lifecycle.is_terminal(state):
        return A2AError(
            ErrorCode.UNSUPPORTED_OPERATION,
            f"Task {task.id} is {state.value} and takes no further messages; send a new "
            "message without taskId (the same contextId continues the conversation)",
        )
    return A2AError(
        ErrorCode.UNSUPPORTED_OPERATION,
        f"Task {task.id} is {state.value}: it takes a message only while it asks for one "
        "(input-required, auth-required). Wait for its answer (GetTask or SubscribeToTask), "
        "then reply to it, or send a new message without taskId",
    )


def started(now: datetime) -> Change:
    """The change a turn's call makes as it gets its slot: the task is `working`."""
    return Change(TaskState.WORKING, now)


def state_for(outcome: Outcome) -> TaskState:
    """The state an outcome leaves a task in: only an answer completes one, a question
    makes it wait for input."""
    if outcome is Outcome.ANSWERED:
        return TaskState.COMPLETED
    if outcome is Outcome.INPUT_REQUIRED:
        return TaskState.INPUT_REQUIRED
    if outcome is Outcome.AUTH_REQUIRED:
        return TaskState.AUTH_REQUIRED
    if outcome is Outcome.CANCELED:
        return TaskState.CANCELED
    return TaskState.FAILED


def ended(task: Task, verdict: Verdict, now: datetime, answer_id: str | None = None) -> Change:
    """The change a verdict makes to `task`'s turn: the state it earns, the agent's message
    (and the artifacts, when completed: the data and files, then the answer), and the
    outcome in the task's metadata. All of it whole: the verdict's text and parts are as
    the workflow answered them (made valid Unicode, "repaired", by contract.classify).
    `answer_id`: the id the answer's streamed chunks carried, so that the whole answer
    replaces what they appended."""
    text = verdict.text
    marks: JSONObject = {}
    if verdict.repaired:
        marks["repaired"] = [*task.metadata.get("repaired", ()), "reply"]
    reply = Message(
        message_id=new_id(),
        role=Role.AGENT,
        parts=(Part(text),),
        task_id=task.id,
        context_id=task.context_id,
        metadata={"outcome": verdict.outcome.value},
    )
    state = state_for(verdict.outcome)
    artifacts: tuple[Artifact, ...] = ()
    if state is TaskState.COMPLETED:
        # The workflow's data and files come first, its text answer last: artifacts go by
        # their names, and a reader of the first artifact alone (the A2A TCK's DM-ART-001
        # checks `artifacts[0]`) meets what the workflow made, not the words about it.
        answer = Artifact(answer_id or new_id(), ANSWER, (Part(text),))
        artifacts = (*map(_artifact, verdict.parts), answer)
    return Change(
        state,
        now,
        message=reply,
        artifacts=artifacts,
        metadata={"outcome": verdict.outcome.value, **marks},
        resume=verdict.resume,
    )


def answer_chunk(task: Task, answer_id: str, text: str, before: int) -> ArtifactUpdate:
    """A piece of a streamed answer, relayed as it comes to the `working` task, after
    `before` others: the first makes the artifact, the next ones append to it; none is
    the last, since the task's end brings the whole answer (kept as any text, `append:
    false`) under the same id. Numbered as the task's next move, so a stream that began
    with the task hears it; each is a generation of the task's (the move that ends the
    turn counts them: Change.relayed)."""
    return ArtifactUpdate(
        task.id,
        task.context_id,
        Artifact(answer_id, ANSWER, (Part(text),)),
        task.version + 1,
        append=before > 0,
        last_chunk=False,
        relayed=task.relayed + before,
    )


def _artifact(part: Part) -> Artifact:
    """A reply's data as the artifact `data`; a file as an artifact of its name."""
    if part.file is None:
        return Artifact(new_id(), "data", (part,))
    return Artifact(new_id(), part.file.name or "file", (part,))


def not_cancelable(task: Task) -> A2AError:
    """Why CancelTask cannot end `task`: it has ended already."""
    return A2AError(
        ErrorCode.TASK_NOT_CANCELABLE,
        f"Task {task.id} is {task.status.state.value} and cannot be canceled",
    )
