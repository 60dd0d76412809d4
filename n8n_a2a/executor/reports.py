"""What the operator sees of each turn that ends: one log line, the metrics, and its span's
end when traces are on."""

from __future__ import annotations

import logging

from ..core.replies import Outcome
from ..core.sanitising import cut
from ..observability.metrics import Metrics
from ..observability.spans import Span
from ..protocol.model import Role, Task, TaskState
from .call_events import Report

#: How much of a failed turn's reason its log line carries.
REASON_CHARS = 300

# The executor's one logger, whichever of its rooms logs: the name its log lines have
# always carried, which operators filter on.
logger = logging.getLogger(__package__)


class TurnReporter:
    """One log line and the counts per ended turn, with its webhook call's or without."""

    def __init__(self, metrics: Metrics) -> None:
        self._metrics = metrics

    def turn_ended(
        self,
        task: Task,
        *,
        webhook_status: int | None = None,
        webhook_seconds: float | None = None,
    ) -> None:
        """A turn has ended: with its call (its HTTP status and seconds, when it had them),
        or without one (a task that waited for input, canceled or out of time)."""
        outcome = task.metadata.get("outcome")
        if outcome is None:  # only if the adapter itself is being torn down mid-call
            return
        self._metrics.task_finished(outcome)
        if webhook_seconds is not None:
            self._metrics.webhook_answered(webhook_seconds)
        fields = {
            "event": "task",
            "task_id": task.id,
            "context_id": task.context_id,
            "turn": sum(1 for message in task.history if message.role is Role.USER),
            "outcome": outcome,
            "state": task.status.state.value,
            "webhook_status": webhook_status,
            "webhook_ms": None if webhook_seconds is None else round(webhook_seconds * 1000, 1),
        }
        message = task.status.message
        if task.status.state is TaskState.FAILED and message is not None:
            # Why, as the caller reads it (the token never in it): the operator sees it too.
            fields["reason"] = cut(message.text, REASON_CHARS)
        logger.info("task %s %s", task.status.state.value, outcome, extra={"fields": fields})

    def call_ended(self, report: Report, span: Span | None) -> None:
        """A call's turn has ended: reported as its machine says (call.py), its span ended."""
        if report.task is not None:
            self.turn_ended(
                report.task, webhook_status=report.webhook_status, webhook_seconds=report.seconds
            )
        if span is not None:
            end_turn_span(span, report.task)

    def lost(self, task: Task) -> None:
        """A task ended LOST: the replica running it stopped renewing its lease."""
        self._metrics.task_finished(Outcome.LOST.value)
        fields = {
            "event": "task",
            "task_id": task.id,
            "context_id": task.context_id,
            "outcome": Outcome.LOST.value,
            "state": task.status.state.value,
        }
        logger.warning("task %s lost with its replica", task.id, extra={"fields": fields})


def end_turn_span(span: Span, task: Task | None) -> None:
    """End a turn's span with the state it left the task in, and the outcome recorded."""
    if task is None:
        span.fail("the task could not be read back")
    else:
        state = task.status.state
        span.set("a2a.task.state", state.value)
        outcome = task.metadata.get("outcome")
        if isinstance(outcome, str):
            span.set("a2a.task.outcome", outcome)
        if state is TaskState.FAILED:
            span.fail(state.value)
    span.end()
