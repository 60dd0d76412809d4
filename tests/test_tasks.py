"""The task table and its state machine, without sockets."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from n8n_a2a.outcome import Outcome, Verdict
from n8n_a2a.protocol.errors import A2AError, ErrorCode
from n8n_a2a.protocol.model import ListTasks, Message, Part, Role, TaskState
from n8n_a2a.tasks import IllegalTransition, TaskTable


class Ticking:
    def __init__(self) -> None:
        self.now = datetime(2026, 1, 1, tzinfo=UTC)

    def __call__(self) -> datetime:
        self.now += timedelta(seconds=1)
        return self.now


def message(task_id: str | None = None, context_id: str | None = None) -> Message:
    return Message("m-1", Role.USER, (Part("hi"),), task_id, context_id)


def test_a_task_goes_submitted_working_completed() -> None:
    table = TaskTable(clock=Ticking())
    task = table.submit(message(context_id="c-1"))
    assert task.status.state is TaskState.SUBMITTED
    assert task.context_id == "c-1"
    assert task.history[0].task_id == task.id
    started = table.start(task.id)
    assert started.status.state is TaskState.WORKING
    assert started.status.timestamp > task.status.timestamp
    done = table.finish(task.id, Verdict(Outcome.ANSWERED, "12 pallets"))
    assert done.status.state is TaskState.COMPLETED
    assert done.artifacts[0].parts == (Part("12 pallets"),)
    assert [m.role for m in done.history] == [Role.USER, Role.AGENT]
    assert done.status.message == done.history[-1]
    assert done.metadata == {"outcome": "ANSWERED"}
    assert table.get(task.id) == done


def test_a_context_is_minted_when_the_message_has_none() -> None:
    table = TaskTable()
    first, second = table.submit(message()), table.submit(message())
    assert first.context_id and second.context_id and first.context_id != second.context_id


def test_a_failed_outcome_has_no_artifact() -> None:
    table = TaskTable()
    task = table.start(table.submit(message()).id)
    failed = table.finish(task.id, Verdict(Outcome.ESCALATED, "needs approval"))
    assert failed.status.state is TaskState.FAILED
    assert failed.artifacts == ()
    assert failed.status.message is not None
    assert failed.status.message.parts == (Part("needs approval"),)


def test_a_terminal_state_is_final() -> None:
    table = TaskTable()
    task = table.start(table.submit(message()).id)
    table.finish(task.id, Verdict(Outcome.ANSWERED, "x"))
    with pytest.raises(IllegalTransition):
        table.finish(task.id, Verdict(Outcome.SILENT, "y"))
    with pytest.raises(IllegalTransition):
        table.start(task.id)


def test_an_unknown_task_is_32001() -> None:
    with pytest.raises(A2AError) as raised:
        TaskTable().get("nope")
    assert raised.value.code is ErrorCode.TASK_NOT_FOUND


def test_a_message_naming_a_finished_task_is_refused() -> None:
    table = TaskTable()
    task = table.start(table.submit(message(context_id="c-1")).id)
    table.finish(task.id, Verdict(Outcome.ANSWERED, "x"))
    with pytest.raises(A2AError) as raised:
        table.submit(message(task_id=task.id))
    assert raised.value.code is ErrorCode.UNSUPPORTED_OPERATION
    with pytest.raises(A2AError) as raised:
        table.submit(message(task_id=task.id, context_id="c-2"))
    assert raised.value.code is ErrorCode.INVALID_PARAMS
    with pytest.raises(A2AError) as raised:
        table.submit(message(task_id="unknown"))
    assert raised.value.code is ErrorCode.TASK_NOT_FOUND


def finished(table: TaskTable, text: str = "x") -> str:
    task = table.start(table.submit(message()).id)
    table.finish(task.id, Verdict(Outcome.ANSWERED, text))
    return task.id


def test_finished_tasks_leave_after_their_time_to_live() -> None:
    clock = Ticking()
    table = TaskTable(ttl_seconds=10, clock=clock)
    old = finished(table)
    running = table.start(table.submit(message()).id)
    clock.now += timedelta(seconds=30)
    fresh = finished(table)
    with pytest.raises(A2AError):
        table.get(old)
    assert table.get(running.id).status.state is TaskState.WORKING  # never evicted
    assert table.get(fresh).status.state is TaskState.COMPLETED


def test_a_full_table_evicts_the_oldest_finished_first_and_never_a_running_one() -> None:
    table = TaskTable(max_tasks=3, clock=Ticking())
    running = table.start(table.submit(message()).id)
    first, second = finished(table), finished(table)
    third = finished(table)
    assert {running.id, second, third} == {t.id for t in table.list(ListTasks()).tasks}
    with pytest.raises(A2AError):
        table.get(first)


def test_a_table_full_of_running_tasks_refuses_with_server_busy() -> None:
    table = TaskTable(max_tasks=2)
    table.submit(message())
    table.submit(message())
    with pytest.raises(A2AError) as raised:
        table.submit(message())
    assert raised.value.code is ErrorCode.SERVER_BUSY
    assert "ADAPTER_MAX_TASKS" in raised.value.message


def test_list_pages_survive_an_eviction_between_pages() -> None:
    table = TaskTable(max_tasks=10, clock=Ticking())
    ids = [finished(table) for _ in range(5)]
    page = table.list(ListTasks(page_size=2))
    assert [t.id for t in page.tasks] == ids[:2:-1]
    assert page.total_size == 5
    for _ in range(6):  # evicts the two oldest
        finished(table)
    rest = table.list(ListTasks(page_size=10, page_token=page.next_page_token))
    assert [t.id for t in rest.tasks][:1] == [ids[2]]


@pytest.mark.parametrize("token", ["not base64!", "bm9waXBl", "MjAyMC0wMS0wMXx4"])
def test_a_foreign_page_token_is_invalid_params(token: str) -> None:
    with pytest.raises(A2AError) as raised:
        TaskTable().list(ListTasks(page_token=token))
    assert raised.value.code is ErrorCode.INVALID_PARAMS
