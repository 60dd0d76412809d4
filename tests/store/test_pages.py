"""ListTasks page tokens and the page's byte bound, without a store."""

from __future__ import annotations

import base64
from dataclasses import replace
from datetime import timedelta

import pytest

from n8n_a2a.protocol.errors import A2AError, ErrorCode
from n8n_a2a.protocol.model import Message, Part, Role, Task, TaskStatus
from n8n_a2a.store.pages import decode_cursor, encode_cursor, encoded_size, fit, list_order
from tests.support.tasks import MOMENT, submitted_task


def test_a_token_names_the_last_tasks_status_time_and_id() -> None:
    task = replace(submitted_task(), status=TaskStatus(submitted_task().status.state, MOMENT))
    token = encode_cursor(task)
    assert base64.urlsafe_b64decode(token).decode() == f"2026-11-29T18:34:32+00:00|{task.id}"
    assert decode_cursor(token) == list_order(task) == (MOMENT, task.id)


@pytest.mark.parametrize(
    "token",
    [
        "not base64!",
        base64.urlsafe_b64encode(b"\xff\xfe").decode(),  # not UTF-8
        base64.urlsafe_b64encode(b"yesterday|t-1").decode(),  # no time
        base64.urlsafe_b64encode(b"2026-11-29T18:34:32|t-1").decode(),  # no time zone
    ],
)
def test_a_token_this_agent_did_not_give_is_invalid_params(token: str) -> None:
    with pytest.raises(A2AError) as refused:
        decode_cursor(token)
    assert refused.value.code is ErrorCode.INVALID_PARAMS
    assert refused.value.message == "params.pageToken is not a token this agent gave"


def test_a_page_stops_before_the_task_that_would_take_it_past_its_bytes() -> None:
    def sized(text: str, minutes: int) -> Task:
        task = submitted_task(text)
        status = TaskStatus(task.status.state, MOMENT - timedelta(minutes=minutes))
        return replace(task, status=status)

    tasks = [sized("x" * 1000, n) for n in range(3)]
    one = encoded_size(tasks[0])
    assert fit(tasks, 2 * one + one // 2) == tasks[:2]
    assert fit(tasks, 10 * one) == tasks


def test_a_page_holds_its_first_task_however_big() -> None:
    huge = submitted_task("x" * 100_000)
    big = replace(huge, history=(Message("m", Role.USER, (Part("y" * 100_000),)),))
    assert fit([big, submitted_task()], 10) == [big]
