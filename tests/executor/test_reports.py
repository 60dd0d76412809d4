"""One log line and one count per ended turn, and per task lost with its replica."""

from __future__ import annotations

from dataclasses import replace

import pytest
import trio

from n8n_a2a.auth.caller import Caller
from n8n_a2a.executor.reports import TurnReporter
from n8n_a2a.observability.metrics import Metrics
from n8n_a2a.protocol.model import Message, Part, Role, Task, TaskState, TaskStatus
from tests.support.executor import ScriptedWorkflow, executor_for, message, reply_to
from tests.support.metrics import shown
from tests.support.tasks import MOMENT


async def test_one_log_line_and_one_count_per_turn(
    autojump_clock: trio.abc.Clock, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level("INFO", logger="n8n_a2a.executor")
    metrics = Metrics()
    workflow = ScriptedWorkflow(everything=True)
    async with executor_for(
        workflow, input_required=True, input_ttl=60, metrics=metrics
    ) as executor:
        asked = await executor.send(message("ask: which item?", blocking=True), Caller())
        await executor.send(reply_to(asked, "ask: how many?", blocking=True), Caller())
        await trio.sleep(61)
        other = await executor.send(message("ask", blocking=True), Caller())
        await executor.cancel(other.id, Caller())
    lines = [getattr(r, "fields") for r in caplog.records if hasattr(r, "fields")]  # noqa: B009
    assert [(f["task_id"], f["turn"], f["outcome"], f["state"]) for f in lines] == [
        (asked.id, 1, "INPUT_REQUIRED", "input-required"),
        (asked.id, 2, "INPUT_REQUIRED", "input-required"),
        (asked.id, 2, "INPUT_EXPIRED", "failed"),
        (other.id, 1, "INPUT_REQUIRED", "input-required"),
        (other.id, 1, "CANCELED", "canceled"),
    ]
    assert [f["webhook_status"] for f in lines] == [200, 200, None, 200, None]
    text = shown(metrics)
    assert 'n8n_a2a_tasks_total{outcome="INPUT_REQUIRED"} 3.0' in text
    assert 'n8n_a2a_tasks_total{outcome="INPUT_EXPIRED"} 1.0' in text
    assert 'n8n_a2a_tasks_total{outcome="CANCELED"} 1.0' in text


def ended(outcome: str | None, state: TaskState = TaskState.FAILED) -> Task:
    user = Message("m-1", Role.USER, (Part("hi"),), "t-1", "c-1")
    metadata = {} if outcome is None else {"outcome": outcome}
    return Task("t-1", "c-1", TaskStatus(state, MOMENT), (user,), metadata=metadata)


def test_a_turn_with_its_call_reports_the_webhooks_status_and_time(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level("INFO", logger="n8n_a2a.executor")
    metrics = Metrics()
    task = ended("ANSWERED", TaskState.COMPLETED)
    TurnReporter(metrics).turn_ended(task, webhook_status=200, webhook_seconds=0.25)
    [record] = caplog.records
    assert (record.levelname, record.getMessage()) == ("INFO", "task completed ANSWERED")
    assert record.name == "n8n_a2a.executor"  # the name the README shows, as it always was
    assert getattr(record, "fields") == {  # noqa: B009
        "event": "task",
        "task_id": "t-1",
        "context_id": "c-1",
        "turn": 1,
        "outcome": "ANSWERED",
        "state": "completed",
        "webhook_status": 200,
        "webhook_ms": 250.0,
    }
    text = shown(metrics)
    assert 'n8n_a2a_tasks_total{outcome="ANSWERED"} 1.0' in text
    assert "n8n_a2a_webhook_duration_seconds_count 1.0" in text


def test_a_failed_turn_says_why_as_the_caller_reads_it(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level("INFO", logger="n8n_a2a.executor")
    why = "The workflow's webhook is not registered (HTTP 404): " + "x" * 400
    said = Message("m-2", Role.AGENT, (Part(why),), "t-1", "c-1")
    task = replace(ended("NOT_REGISTERED"), status=TaskStatus(TaskState.FAILED, MOMENT, said))
    TurnReporter(Metrics()).turn_ended(task, webhook_status=404, webhook_seconds=0.01)
    [record] = caplog.records
    fields = getattr(record, "fields")  # noqa: B009
    assert fields["reason"] == why[:300] + "[... cut at 300 characters]"
    assert (fields["outcome"], fields["webhook_status"]) == ("NOT_REGISTERED", 404)


def test_a_turn_torn_down_with_no_outcome_is_not_reported(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level("INFO", logger="n8n_a2a.executor")
    metrics = Metrics()
    TurnReporter(metrics).turn_ended(ended(None, TaskState.WORKING), webhook_seconds=0.25)
    assert caplog.records == []
    counted = [line for line in shown(metrics).splitlines() if "_total{" in line]
    assert counted and all(line.endswith(" 0.0") for line in counted)
    assert "n8n_a2a_webhook_duration_seconds_count 0.0" in shown(metrics)


def test_a_lost_task_is_counted_and_warned_of(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level("INFO", logger="n8n_a2a.executor")
    metrics = Metrics()
    TurnReporter(metrics).lost(ended("LOST"))
    [record] = caplog.records
    assert (record.levelname, record.getMessage()) == ("WARNING", "task t-1 lost with its replica")
    assert getattr(record, "fields") == {  # noqa: B009
        "event": "task",
        "task_id": "t-1",
        "context_id": "c-1",
        "outcome": "LOST",
        "state": "failed",
    }
    assert 'n8n_a2a_tasks_total{outcome="LOST"} 1.0' in shown(metrics)
