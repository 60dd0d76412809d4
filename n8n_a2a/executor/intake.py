"""What a send's message becomes: a new task, the next turn of one waiting for input, or
nothing new (a message sent again).

A message naming no task makes a new one. A message naming a task is the caller's
answer to that task's question (core/turns.py says which tasks take one), and starts its
next turn. The push config a send carries is held before the send's first event, so
that no event of the turn is missed. A message its caller sent before (the same
`messageId`, core/sent.py) is its first sending's task, `Retried`: nothing is made,
moved or run again, whatever that task has become since; another message under that
id is refused. Two sendings at once (two replicas) race in the store, which remembers
one: the other is told AlreadySent, and is a retry too.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

from ..auth.caller import Caller
from ..core import turns
from ..core.errors import AlreadySent
from ..core.owners import Owner
from ..core.retention import check_ids
from ..core.sent import Sent, retried, sent
from ..protocol.errors import A2AError, ErrorCode
from ..protocol.model import SendMessage, Task
from ..protocol.push import PushConfig
from .recorder import TaskRecorder


class InlinePush(Protocol):
    """Takes the push config a send carries (push.service.PushNotifications)."""

    async def check(self, config: PushConfig, owner: Owner) -> None:
        """A2AError when the config cannot be taken: before its task is made or moved."""

    async def register(self, task: Task, config: PushConfig) -> PushConfig:
        """Hold the config for the task, before the send's first event."""


@dataclass(frozen=True, slots=True)
class Retried:
    """The message was sent before: its first sending's task."""

    task_id: str


class Intake:
    """Takes each send's message into its task, `submitted`, or finds it sent before."""

    def __init__(self, tasks: TaskRecorder, push: InlinePush | None) -> None:
        self._tasks = tasks
        self._push = push

    async def receive(self, operation: SendMessage, caller: Caller) -> Task | Retried:
        """The send's task (see `_take`), or its first sending's if it was sent before.

        Taken in first, looked up only when that fails: a new message (nearly every one)
        costs no lookup, since the store refuses one it remembers (AlreadySent). A message
        naming a task that takes no message now may be a retry of the message that moved
        it on: only then is it looked up."""
        message = operation.message
        check_ids(message)
        again = sent(message, caller.owner)
        try:
            return await self._take(operation, caller, again)
        except AlreadySent as taken:
            return Retried(retried(taken.first, again))
        except A2AError:
            first = await self._tasks.sent(caller.owner, message.message_id)
            if first is None:
                raise
            return Retried(retried(first, again))

    async def _take(self, operation: SendMessage, caller: Caller, again: Sent) -> Task:
        """The send's task (see `_submit`), with the push config the send carries held
        before the send's first event: a new task's first, or a next turn's."""
        config = await self._check_push(operation, caller)
        if config is None:
            return await self._submit(operation, caller, again)
        assert self._push is not None  # else the check refused it
        message = operation.message
        if message.task_id is None:
            task = await self._submit(operation, caller, again)
            await self._push.register(task, config)
            return task
        waiting = await self._tasks.owned(message.task_id, caller)
        _check_next_turn(waiting, operation)
        await self._push.register(waiting, config)
        return await self._submit(operation, caller, again)

    async def check(self, operation: SendMessage, caller: Caller) -> None:
        """Raise now what `receive` would raise, changing nothing."""
        message = operation.message
        check_ids(message)
        first = await self._tasks.sent(caller.owner, message.message_id)
        if first is not None:
            retried(first, sent(message, caller.owner))
            return
        await self._check_push(operation, caller)
        if message.task_id is not None:
            _check_next_turn(await self._tasks.owned(message.task_id, caller), operation)

    async def _check_push(self, operation: SendMessage, caller: Caller) -> PushConfig | None:
        """The send's push config, if it carries one that can be taken."""
        config = operation.push_config
        if config is not None:
            if self._push is None:
                raise A2AError(
                    ErrorCode.PUSH_NOTIFICATION_NOT_SUPPORTED,
                    "Push notifications are not supported by this agent",
                )
            await self._push.check(config, caller.owner)
        return config

    async def _submit(self, operation: SendMessage, caller: Caller, again: Sent) -> Task:
        """The message's task, in SUBMITTED: a new one, or the task the message names,
        when that task waits for input (at the generation the send expects, if it says);
        the message remembered with it."""
        message = operation.message
        if message.task_id is None:
            # ifGenerationMatch is for a task that exists: a new one ignores it (A2A 1.1).
            return await self._tasks.create(message, caller.owner, again)
        task = await self._tasks.owned(message.task_id, caller)
        return await self._tasks.begin_turn(task, message, again, operation.if_generation_match)


def _check_next_turn(task: Task, operation: SendMessage) -> None:
    """Raise unless the send's message may be the next turn of `task`: at the generation
    the send expects first (what the caller made its message for), then a question."""
    turns.check_generation(task, operation.if_generation_match)
    turns.check_turn(task, operation.message)
