"""Runs each task's webhook call in a nursery that outlives the request that asked for it.

A client that hangs up cancels its request handler, not the call: the task still
reaches its terminal state and is there to get.
"""

from __future__ import annotations

import logging

import trio

from .outcome import Outcome, Verdict, classify
from .protocol.model import SendMessage, Task
from .tasks import TaskTable
from .webhook import WebhookClient, WebhookRequest

logger = logging.getLogger(__name__)


class Executor:
    """Starts webhook calls for new tasks and lets senders wait for the result."""

    def __init__(
        self, nursery: trio.Nursery, table: TaskTable, webhook: WebhookClient, skill_id: str
    ) -> None:
        self._nursery = nursery
        self._table = table
        self._webhook = webhook
        self._skill_id = skill_id

    @property
    def table(self) -> TaskTable:
        return self._table

    async def send(self, operation: SendMessage, subject_token: str | None) -> Task:
        """Submit a task for the message and, for a blocking send, wait until it is terminal."""
        task = self._table.submit(operation.message)
        done = trio.Event()
        request = WebhookRequest(
            text=operation.message.text,
            task_id=task.id,
            context_id=task.context_id,
            message_id=operation.message.message_id,
            skill_id=self._skill_id,
        )
        task = self._table.start(task.id)
        self._nursery.start_soon(self._run, request, subject_token, done)
        if operation.blocking:
            await done.wait()
            task = self._table.get(task.id)
        return task.with_history_length(operation.history_length)

    async def _run(
        self, request: WebhookRequest, subject_token: str | None, done: trio.Event
    ) -> None:
        try:
            reply = await self._webhook.call(request, subject_token)
            verdict = classify(reply)
        except Exception:
            # A bug here must fail one task, not take the whole server down with it.
            logger.exception("webhook call for task %s failed", request.task_id)
            verdict = Verdict(
                Outcome.ADAPTER_ERROR, "The adapter failed while calling the workflow; see its log."
            )
        try:
            self._table.finish(request.task_id, verdict)
        finally:
            done.set()
