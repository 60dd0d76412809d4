"""One route's trio task: what it does once its route closes, and the lines it logs."""

from __future__ import annotations

import logging

import pytest
import trio
import trio.testing
from trio.lowlevel import ParkingLot

from n8n_a2a.observability.metrics import Metrics
from n8n_a2a.protocol.model import StatusUpdate, TaskState, TaskStatus
from n8n_a2a.protocol.push import PushConfig
from n8n_a2a.push.attempts import Answer, RetrySchedule
from n8n_a2a.push.driving import Means, Running
from n8n_a2a.store.memory import MemoryTaskStore
from tests.support.push import ScriptedSender, WatchedConfigs
from tests.support.tasks import MOMENT

URL = "http://fast.example/hook"


def running_to_the_end(sender: ScriptedSender, configs: WatchedConfigs, last: bool) -> Running:
    """A route of task t-1 that has heard its completed status and its end; `last`: what
    the deliverer's forget answers (whether the task has no other route)."""
    means = Means(sender, MemoryTaskStore(), configs, Metrics(), ParkingLot(), lambda _: last)
    running = Running(
        PushConfig("t-1", "c-1", URL, version="1.0"),
        means,
        retries=RetrySchedule(max_attempts=1),
        queue_limit=None,
        jitter=lambda: 0.0,
    )
    running.hear(StatusUpdate("t-1", "c-1", TaskStatus(TaskState.COMPLETED, MOMENT), 1), 0.0)
    running.end_task()
    return running


@pytest.mark.parametrize(("last", "ended"), [(True, ["t-1"]), (False, [])])
async def test_a_route_over_with_its_task_lets_the_configs_go_only_as_the_tasks_last(
    autojump_clock: trio.testing.MockClock, last: bool, ended: list[str]
) -> None:
    """A config replaced meanwhile has a route of its own: the task's configs stay."""
    sender, configs = ScriptedSender(), WatchedConfigs()
    await running_to_the_end(sender, configs, last).deliver()
    assert [post.url for post in sender.posts] == [URL]
    assert configs.ended == ended


async def test_what_became_of_an_update_is_logged_under_the_deliverers_name(
    autojump_clock: trio.testing.MockClock, caplog: pytest.LogCaptureFixture
) -> None:
    sender = ScriptedSender(answers=[Answer.REJECTED])
    await running_to_the_end(sender, WatchedConfigs(), True).deliver()
    [line] = [r for r in caplog.records if getattr(r, "fields", {}).get("event") == "push"]
    assert (line.name, line.levelno, line.fields["result"]) == (  # type: ignore[attr-defined]
        "n8n_a2a.push.deliverer",
        logging.WARNING,
        "rejected",
    )
