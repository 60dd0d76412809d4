"""Runs each task's webhook call in a nursery that outlives the request that asked for it.

A client that hangs up cancels its request handler, not the call: the task still
reaches its terminal state and is there to get. Each call has its own cancel scope,
so CancelTask and shutdown close its connection rather than leave it dangling; a
capacity limiter bounds the calls in flight, and sends past it wait in order.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field

import trio

from .metrics import Metrics
from .outcome import HttpReply, Outcome, Verdict, classify
from .protocol.errors import A2AError, ErrorCode
from .protocol.model import SendMessage, Task
from .tasks import TaskTable
from .webhook import Caller, WebhookClient, WebhookRequest

logger = logging.getLogger(__name__)

CANCELED = Verdict(Outcome.CANCELED, "Canceled by the caller before the workflow answered.")
CUT_BY_SHUTDOWN = Verdict(
    Outcome.SHUTDOWN,
    "The adapter shut down before the workflow answered; the workflow may still have run. "
    "Send the message again.",
)


@dataclass(frozen=True, slots=True)
class Drained:
    """What a drain came to: calls that ended within the grace period, and calls cut."""

    finished: int
    cut: int


@dataclass(eq=False)
class _Call:
    """One task's webhook call: its cancel scope and the event its senders wait on."""

    request: WebhookRequest
    caller: Caller
    holds_slot: bool
    scope: trio.CancelScope = field(default_factory=trio.CancelScope)
    done: trio.Event = field(default_factory=trio.Event)
    cut: Verdict | None = None  # why it was cut short: canceled, or shutdown


class Executor:
    """Starts webhook calls for new tasks, cancels them, and drains them at shutdown."""

    def __init__(
        self,
        nursery: trio.Nursery,
        table: TaskTable,
        webhook: WebhookClient,
        skill_id: str,
        *,
        max_concurrent_calls: int = 1024,
        max_queued_calls: int = 1024,
        metrics: Metrics | None = None,
    ) -> None:
        self._nursery = nursery
        self._table = table
        self._webhook = webhook
        self._skill_id = skill_id
        self._slots = trio.CapacityLimiter(max_concurrent_calls)
        self._max_queued = max_queued_calls
        self._queued = 0
        self._calls: dict[str, _Call] = {}
        self._accepting = True
        self._metrics = metrics or Metrics()

    @property
    def table(self) -> TaskTable:
        return self._table

    @property
    def accepting(self) -> bool:
        """False once shutdown has begun."""
        return self._accepting

    @property
    def in_flight(self) -> int:
        """Webhook calls under way now."""
        return int(self._slots.borrowed_tokens)

    @property
    def queued(self) -> int:
        """Sends waiting for a free slot."""
        return self._queued

    async def send(self, operation: SendMessage, caller: Caller) -> Task:
        """Submit a task for the message; a blocking send waits until it is terminal."""
        if not self._accepting:
            raise A2AError(
                ErrorCode.SERVER_BUSY, "The adapter is shutting down; send the message again"
            )
        holds_slot = self._slots.available_tokens > 0
        if not holds_slot and self._queued >= self._max_queued:
            raise A2AError(
                ErrorCode.SERVER_BUSY,
                f"Server busy: {self.in_flight} webhook calls are running and {self._queued} "
                "are waiting (ADAPTER_MAX_CONCURRENT_CALLS, ADAPTER_MAX_QUEUED_CALLS); "
                "retry later",
            )
        task = self._table.submit(operation.message)
        call = _Call(
            WebhookRequest(
                text=operation.message.text,
                task_id=task.id,
                context_id=task.context_id,
                message_id=operation.message.message_id,
                skill_id=self._skill_id,
            ),
            caller,
            holds_slot,
        )
        if holds_slot:
            # Take the slot now, so a non-blocking send already answers `working`.
            self._slots.acquire_on_behalf_of_nowait(call)
            task = self._table.start(task.id)
        else:
            self._queued += 1
        self._calls[task.id] = call
        self._nursery.start_soon(self._run, call)
        if operation.blocking:
            await call.done.wait()
            task = self._table.get(task.id)
        return task.with_history_length(operation.history_length)

    def cancel(self, task_id: str) -> Task:
        """Cancel a task that has not finished: it is `canceled` at once, its call cut."""
        task = self._table.get(task_id)
        if task.status.state.is_terminal:
            raise A2AError(
                ErrorCode.TASK_NOT_CANCELABLE,
                f"Task {task_id} is {task.status.state.value} and cannot be canceled",
            )
        return self._cut(task_id, CANCELED)

    def stop_accepting(self) -> None:
        """Refuse new sends from now on; gets, lists and cancels still work."""
        self._accepting = False

    async def drain(self, grace_seconds: float) -> Drained:
        """Let calls under way finish within the grace period, then cut the rest as failed."""
        self.stop_accepting()
        under_way = len(self._calls)
        with trio.move_on_after(grace_seconds):
            await self._all_done()
        cut = list(self._calls)
        for task_id in cut:
            logger.warning("shutdown cut the webhook call of task %s", task_id)
            self._cut(task_id, CUT_BY_SHUTDOWN)
        await self._all_done()
        return Drained(finished=under_way - len(cut), cut=len(cut))

    async def _all_done(self) -> None:
        """Until every call has ended (no new ones start once sends are refused)."""
        while self._calls:
            await next(iter(self._calls.values())).done.wait()

    def _cut(self, task_id: str, verdict: Verdict) -> Task:
        # Record the end first: the call, cancelled, then has nothing left to record.
        task = self._table.finish(task_id, verdict)
        call = self._calls[task_id]
        call.cut = verdict
        call.scope.cancel()
        return task

    async def _run(self, call: _Call) -> None:
        task_id = call.request.task_id
        report = _Report()
        try:
            with call.scope:
                if not call.holds_slot:
                    try:
                        await self._slots.acquire_on_behalf_of(call)
                    finally:
                        self._queued -= 1
                    self._table.start(task_id)
                try:
                    await self._call_webhook(call, report)
                finally:
                    self._slots.release_on_behalf_of(call)
            # A verdict reached in the same step as a cut loses: the task has ended.
            if call.cut is None and report.verdict is not None:
                self._table.finish(task_id, report.verdict)
        finally:
            del self._calls[task_id]
            call.done.set()
            self._report(self._table.get(task_id), call.cut or report.verdict, report)

    async def _call_webhook(self, call: _Call, report: _Report) -> None:
        started = trio.current_time()
        try:
            reply = await self._webhook.call(call.request, call.caller)
            report.verdict = classify(reply)
            report.webhook_status = reply.status if isinstance(reply, HttpReply) else None
        except Exception:
            # A bug here must fail one task, not take the whole server down with it.
            logger.exception("webhook call for task %s failed", call.request.task_id)
            report.verdict = Verdict(
                Outcome.ADAPTER_ERROR, "The adapter failed while calling the workflow; see its log."
            )
        finally:
            report.seconds = trio.current_time() - started

    def _report(self, task: Task, verdict: Verdict | None, report: _Report) -> None:
        """One log line and the metrics for a task that has ended."""
        if verdict is None:  # only if the adapter itself is being torn down mid-call
            return
        self._metrics.task_finished(verdict.outcome)
        if report.seconds is not None:
            self._metrics.webhook_answered(report.seconds)
        fields = {
            "event": "task",
            "task_id": task.id,
            "context_id": task.context_id,
            "outcome": verdict.outcome.value,
            "state": task.status.state.value,
            "webhook_status": report.webhook_status,
            "webhook_ms": None if report.seconds is None else round(report.seconds * 1000, 1),
        }
        logger.info(
            "task %s %s", task.status.state.value, verdict.outcome.value, extra={"fields": fields}
        )


@dataclass
class _Report:
    """What one webhook call came to, for the task's log line and the metrics."""

    verdict: Verdict | None = None
    webhook_status: int | None = None
    seconds: float | None = None
