"""The task table and its state machine, without sockets."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from n8n_a2a.outcome import Outcome, Verdict
from n8n_a2a.protocol.errors import A2AError, ErrorCode
from n8n_a2a.protocol.model import ListTasks, Message, Part, Role, Task, TaskState
from n8n_a2a.protocol.v1 import V1Codec
from n8n_a2a.tasks import MAX_ID_CHARS, IllegalTransition, TaskTable


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


def stored_texts(task: Task) -> list[str]:
    """Every text the task holds: its messages' and its artifacts'."""
    messages = [*task.history, *([task.status.message] if task.status.message else [])]
    parts = [p for m in messages for p in m.parts] + [p for a in task.artifacts for p in a.parts]
    return [part.text for part in parts]


def test_a_message_within_the_limit_is_kept_as_it_came() -> None:
    table = TaskTable(max_stored_text=100)
    sent = Message("m-1", Role.USER, (Part("a", {"k": 1}), Part("b")), metadata={"m": "x"})
    task = table.submit(sent)
    assert task.history[0].parts == sent.parts
    assert task.history[0].metadata == {"m": "x"}
    assert task.metadata == {}


def test_a_long_message_is_kept_cut_with_a_marker() -> None:
    table = TaskTable(max_stored_text=100)
    task = table.submit(Message("m-1", Role.USER, (Part("x" * 1_000_000), Part("y"))))
    [part] = task.history[0].parts
    assert part.text == "x" * 100 + "[... cut at 100 characters]"
    assert task.metadata == {"cut": ["message"]}


@pytest.mark.parametrize(
    "sent",
    [
        Message("m-1", Role.USER, (Part("short"),), metadata={"blob": "z" * 200}),
        Message("m-1", Role.USER, (Part("short", {"blob": "z" * 200}),)),
        Message("m-1", Role.USER, tuple(Part("") for _ in range(50))),
    ],
)
def test_metadata_or_parts_past_the_limit_are_not_kept(sent: Message) -> None:
    task = TaskTable(max_stored_text=100).submit(sent)
    [kept] = task.history
    assert kept.metadata is None
    assert kept.parts == (Part(sent.text),)  # the text as the workflow got it, not cut
    assert task.metadata == {"cut": ["message"]}


def test_a_long_reply_is_kept_cut_in_the_history_status_and_artifact() -> None:
    table = TaskTable(max_stored_text=100)
    task = table.start(table.submit(Message("m-1", Role.USER, (Part("x" * 500),))).id)
    done = table.finish(task.id, Verdict(Outcome.ANSWERED, "y" * 500))
    assert done.metadata == {"outcome": "ANSWERED", "cut": ["message", "reply"]}
    assert (
        stored_texts(done)
        == ["x" * 100 + "[... cut at 100 characters]"]
        + ["y" * 100 + "[... cut at 100 characters]"] * 3
    )


def test_the_table_never_holds_more_than_its_limit_of_each_text() -> None:
    table = TaskTable(max_stored_text=1000)
    for _ in range(20):
        task = table.start(table.submit(Message("m", Role.USER, (Part("x" * 100_000),))).id)
        table.finish(task.id, Verdict(Outcome.ANSWERED, "y" * 100_000))
    texts = [
        text for task in table.list(ListTasks(page_size=100)).tasks for text in stored_texts(task)
    ]
    assert texts and max(len(text) for text in texts) <= 1000 + len("[... cut at 1000 characters]")


def test_lone_surrogates_in_a_message_are_repaired_and_marked() -> None:
    sent = Message(
        "m-1", Role.USER, (Part("flour \ud83d", {"k\udc00": "v"}),), metadata={"m": "\ud800"}
    )
    task = TaskTable().submit(sent)
    [kept] = task.history
    assert kept.parts == (Part("flour \ufffd", {"k\ufffd": "v"}),)
    assert kept.metadata == {"m": "\ufffd"}
    assert task.metadata == {"repaired": ["message"]}
    json.dumps(V1Codec().encode_task(task), ensure_ascii=False).encode()  # strict


def test_a_repaired_reply_is_marked() -> None:
    table = TaskTable()
    task = table.start(table.submit(message()).id)
    done = table.finish(task.id, Verdict(Outcome.ANSWERED, "flour \ufffd", repaired=True))
    assert done.metadata == {"outcome": "ANSWERED", "repaired": ["reply"]}


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("message_id", "m" * (MAX_ID_CHARS + 1)),
        ("context_id", "c" * (MAX_ID_CHARS + 1)),
        ("task_id", "t" * (MAX_ID_CHARS + 1)),
        ("message_id", "m\ud83d"),
        ("context_id", "\udc00"),
    ],
)
def test_an_id_too_long_or_not_unicode_is_invalid_params(field: str, value: str) -> None:
    ids: dict[str, Any] = {"message_id": "m-1", field: value}
    with pytest.raises(A2AError) as raised:
        TaskTable().submit(Message(role=Role.USER, parts=(Part("hi"),), **ids))
    assert raised.value.code is ErrorCode.INVALID_PARAMS
    assert "at most 1024 characters" in raised.value.message


def big_tasks(table: TaskTable, count: int, chars: int) -> list[str]:
    return [finished(table, f"{n:04d}" + "z" * chars) for n in range(count)]


def test_a_page_is_bounded_in_bytes_and_its_token_goes_on() -> None:
    table = TaskTable(clock=Ticking(), max_stored_text=50_000, max_page_bytes=200_000)
    ids = big_tasks(table, 30, 20_000)
    codec = V1Codec()
    seen: list[str] = []
    token = None
    while True:
        page = table.list(ListTasks(page_size=100, page_token=token, include_artifacts=True))
        assert 0 < len(page.tasks) < 30 and page.total_size == 30
        # The estimate errs on the large side: an encoded page stays within the budget.
        encoded = json.dumps(codec.encode_page(page), ensure_ascii=False).encode()
        assert len(encoded) <= 200_000
        seen += [task.id for task in page.tasks]
        token = page.next_page_token
        if not token:
            break
    assert seen == ids[::-1]


def test_a_page_holds_at_least_one_task_however_big() -> None:
    table = TaskTable(clock=Ticking(), max_stored_text=50_000, max_page_bytes=1000)
    ids = big_tasks(table, 2, 20_000)
    first = table.list(ListTasks(page_size=100))
    assert [task.id for task in first.tasks] == [ids[1]]
    rest = table.list(ListTasks(page_size=100, page_token=first.next_page_token))
    assert [task.id for task in rest.tasks] == [ids[0]] and rest.next_page_token == ""
