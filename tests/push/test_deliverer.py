"""The deliverer: every update, in order, to each config; retries with backoff; never in the way.

A scripted sender and trio's MockClock pin down the retry schedule and the queue's
behaviour behind a stuck receiver; real receivers on 127.0.0.1 show what goes over
the wire: bodies in each version, headers, retries, a 4xx, a redirect, a dead receiver.
"""

from __future__ import annotations

import itertools
import json
import logging
import random
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import pytest
import trio
import trio.testing
from a2a.compat.v0_3 import types as v03_types
from a2a.types import a2a_pb2
from google.protobuf import json_format  # type: ignore[import-untyped]

from n8n_a2a.observability.metrics import Metrics
from n8n_a2a.protocol.errors import A2AError, ErrorCode
from n8n_a2a.protocol.model import Artifact, ArtifactUpdate, Part, Task, TaskState
from n8n_a2a.protocol.push import AllowList, PushAuthentication, PushConfig
from n8n_a2a.push.attempts import Answer, Attempt, Sender
from n8n_a2a.push.deliverer import Deliverer
from n8n_a2a.push.route import CHUNK_INTERVAL
from n8n_a2a.push.sender import PushSender
from n8n_a2a.store.memory import MemoryTaskStore
from tests.support.metrics import counted, shown
from tests.support.push import Board, Post, ScriptedSender, WatchedConfigs
from tests.support.push_receiver import PushReceiver, start_push_receiver

FAST = "http://fast.example/hook"
SLOW = "http://slow.example/hook"


@asynccontextmanager
async def delivering(
    sender: Sender, board: Board, **options: Any
) -> AsyncIterator[tuple[Deliverer, Metrics, WatchedConfigs]]:
    metrics, configs = Metrics(), WatchedConfigs()
    options = {"jitter": random.Random(7), **options}
    deliverer = Deliverer(sender, board.store, configs, metrics=metrics, **options)
    async with trio.open_nursery() as nursery:
        await nursery.start(deliverer.run, board.events)
        yield deliverer, metrics, configs
        nursery.cancel_scope.cancel()


def config(
    url: str = FAST, version: str = "1.0", config_id: str = "c-1", **fields: Any
) -> PushConfig:
    return PushConfig("t-1", config_id, url, version=version, **fields)


def delivered(metrics: Metrics, result: str) -> float:
    return counted(metrics, "n8n_a2a_push_deliveries_total", result=result)


async def settle(deliverer: Deliverer) -> None:
    """Until nothing is queued or under way, and every route is back to waiting."""
    await deliverer.idle()
    await trio.testing.wait_all_tasks_blocked()


def states(sender: ScriptedSender, url: str = FAST) -> list[str]:
    shown = []
    for post in sender.to(url):
        document = json.loads(post.body)
        [(member, body)] = document.items()
        shown.append(f"{member} {body.get('status', {}).get('state', '')}".strip())
    return shown


async def test_backoff_grows_exponentially_with_jitter(
    autojump_clock: trio.testing.MockClock,
) -> None:
    board = Board()
    sender = ScriptedSender(answers=[Answer.RETRY] * 4)
    async with delivering(sender, board, backoff_base=0.5) as (deliverer, metrics, _):
        await board.new("t-1")
        deliverer.deliver_to(config())
        await board.move("t-1", TaskState.WORKING)
        await settle(deliverer)
    times = [post.at for post in sender.posts]
    gaps = [later - earlier for earlier, later in itertools.pairwise(times)]
    assert len(gaps) == 4
    for attempt, gap in enumerate(gaps, start=1):
        ceiling = 0.5 * 2 ** (attempt - 1)
        assert ceiling / 2 <= gap <= ceiling, (attempt, gap)
    assert counted(metrics, "n8n_a2a_push_attempts_total") == 5
    assert delivered(metrics, "delivered") == 1


async def test_the_backoff_is_capped(autojump_clock: trio.testing.MockClock) -> None:
    board = Board()
    sender = ScriptedSender(answers=[Answer.RETRY] * 9)
    async with delivering(sender, board, max_attempts=10, backoff_cap=4.0) as (deliverer, _, _):
        await board.new("t-1")
        deliverer.deliver_to(config())
        await board.move("t-1", TaskState.WORKING)
        await settle(deliverer)
    times = [post.at for post in sender.posts]
    assert max(b - a for a, b in itertools.pairwise(times)) <= 4.0


async def test_after_the_last_attempt_it_gives_up_and_goes_on_with_the_next_update(
    autojump_clock: trio.testing.MockClock, caplog: pytest.LogCaptureFixture
) -> None:
    board = Board()
    sender = ScriptedSender(answers=[Answer.RETRY] * 3)
    async with delivering(sender, board, max_attempts=3) as (deliverer, metrics, _):
        await board.new("t-1")
        deliverer.deliver_to(config())
        await board.move("t-1", TaskState.WORKING)
        await board.move("t-1", TaskState.COMPLETED, answer="12 pallets")
        await settle(deliverer)
    assert states(sender) == [
        "statusUpdate TASK_STATE_WORKING",
        "statusUpdate TASK_STATE_WORKING",
        "statusUpdate TASK_STATE_WORKING",
        "artifactUpdate",
        "statusUpdate TASK_STATE_COMPLETED",
    ]
    assert (delivered(metrics, "failed"), delivered(metrics, "delivered")) == (1, 2)
    [line] = [r for r in caplog.records if getattr(r, "fields", {}).get("result") == "failed"]
    assert line.levelno == logging.WARNING
    assert getattr(line, "fields")["attempts"] == 3  # noqa: B009 - set through `extra`


@pytest.mark.parametrize(
    ("answer", "result"), [(Answer.REJECTED, "rejected"), (Answer.BLOCKED, "blocked")]
)
async def test_a_refusal_ends_that_delivery_at_once(
    autojump_clock: trio.testing.MockClock, answer: Answer, result: str
) -> None:
    board = Board()
    sender = ScriptedSender(answers=[answer])
    async with delivering(sender, board) as (deliverer, metrics, _):
        await board.new("t-1")
        deliverer.deliver_to(config())
        await board.move("t-1", TaskState.WORKING)
        await board.move("t-1", TaskState.FAILED)
        await settle(deliverer)
    assert len(sender.posts) == 2
    assert (delivered(metrics, result), delivered(metrics, "delivered")) == (1, 1)
    # A blocked update was never attempted.
    attempts = 1 if answer is Answer.BLOCKED else 2
    assert counted(metrics, "n8n_a2a_push_attempts_total") == attempts


async def test_a_stuck_receiver_keeps_a_bounded_queue_that_ends_with_the_terminal(
    autojump_clock: trio.testing.MockClock,
) -> None:
    board = Board()
    sender = ScriptedSender(holding={FAST})
    async with delivering(sender, board, queue_limit=4) as (deliverer, metrics, _):
        await board.new("t-1")
        deliverer.deliver_to(config())
        for sequence in range(1, 41):
            state = TaskState.WORKING if sequence % 2 else TaskState.INPUT_REQUIRED
            board.announce("t-1", state, sequence)
            await trio.testing.wait_all_tasks_blocked()  # the first goes under way
        await board.move("t-1", TaskState.WORKING)
        await board.move("t-1", TaskState.COMPLETED, answer="done")
        assert deliverer.queued == 1 + 4  # the one under way, and the queue's limit
        sender.release()
        await settle(deliverer)
    shown = states(sender)
    assert shown[0] == "statusUpdate TASK_STATE_WORKING"  # under way while the rest came
    assert shown[-2:] == ["artifactUpdate", "statusUpdate TASK_STATE_COMPLETED"]
    assert len(shown) == 5
    assert delivered(metrics, "coalesced") == 40 + 3 - 5


async def test_a_stuck_receiver_holds_up_neither_the_task_nor_another_receiver(
    autojump_clock: trio.testing.MockClock,
) -> None:
    board = Board()
    sender = ScriptedSender(holding={SLOW})
    async with delivering(sender, board) as (deliverer, _, _):
        await board.new("t-1")
        deliverer.deliver_to(config(SLOW, config_id="slow"))
        deliverer.deliver_to(config(FAST, config_id="fast"))
        await board.move("t-1", TaskState.WORKING)  # publishing never waits for a receiver
        await board.move("t-1", TaskState.COMPLETED, answer="done")
        await trio.testing.wait_all_tasks_blocked()
        assert len(sender.to(FAST)) == 3
        assert len(sender.to(SLOW)) == 1
        sender.release()
        await settle(deliverer)
    assert states(sender, SLOW) == states(sender, FAST)


async def test_a_route_ends_with_its_task_and_says_so_to_the_store(
    autojump_clock: trio.testing.MockClock,
) -> None:
    board = Board()
    sender = ScriptedSender()
    async with delivering(sender, board) as (deliverer, _, configs):
        await board.new("t-1")
        await configs.put(config(), limit=8)
        deliverer.deliver_to(config())
        board.announce("t-1", TaskState.WORKING, 1)
        board.announce("t-1", TaskState.INPUT_REQUIRED, 2)  # interrupted, not over
        await settle(deliverer)
        assert configs.ended == []
        board.announce("t-1", TaskState.WORKING, 3)
        board.announce("t-1", TaskState.CANCELED, 4)
        await settle(deliverer)
        assert configs.ended == ["t-1"]
        await board.new("t-2")
        deliverer.deliver_to(PushConfig("t-2", "c", FAST))
        deliverer.task_ended("t-2")  # a config made once its task had ended: nothing to send
        await settle(deliverer)
        assert configs.ended == ["t-1", "t-2"]
    assert len(sender.posts) == 4


async def test_a_deleted_config_gets_nothing_more(autojump_clock: trio.testing.MockClock) -> None:
    board = Board()
    sender = ScriptedSender(holding={FAST})
    async with delivering(sender, board) as (deliverer, metrics, _):
        await board.new("t-1")
        deliverer.deliver_to(config())
        await board.move("t-1", TaskState.WORKING)
        await board.move("t-1", TaskState.COMPLETED, answer="done")
        await trio.testing.wait_all_tasks_blocked()
        deliverer.stop_delivering_to("t-1", "c-1")
        sender.release()
        await settle(deliverer)
    assert len(sender.posts) == 1
    assert delivered(metrics, "canceled") == 3
    assert delivered(metrics, "delivered") == 0


async def test_a_config_made_again_replaces_the_old_one(
    autojump_clock: trio.testing.MockClock,
) -> None:
    board = Board()
    sender = ScriptedSender()
    async with delivering(sender, board) as (deliverer, _, _):
        await board.new("t-1")
        deliverer.deliver_to(config(SLOW))
        deliverer.deliver_to(config(FAST))
        await board.move("t-1", TaskState.WORKING)
        await settle(deliverer)
    assert [post.url for post in sender.posts] == [FAST]


async def test_the_same_config_again_keeps_what_is_queued(
    autojump_clock: trio.testing.MockClock,
) -> None:
    board = Board()
    sender = ScriptedSender(holding={FAST})
    async with delivering(sender, board) as (deliverer, metrics, _):
        await board.new("t-1")
        deliverer.deliver_to(config())
        board.announce("t-1", TaskState.WORKING, 1)
        await trio.testing.wait_all_tasks_blocked()
        board.announce("t-1", TaskState.INPUT_REQUIRED, 2)
        deliverer.deliver_to(config())  # the next turn's send carries it again
        sender.release()
        await settle(deliverer)
    assert states(sender) == [
        "statusUpdate TASK_STATE_WORKING",
        "statusUpdate TASK_STATE_INPUT_REQUIRED",
    ]
    assert delivered(metrics, "canceled") == 0


async def test_the_drain_waits_for_what_can_finish_and_logs_the_rest(
    autojump_clock: trio.testing.MockClock, caplog: pytest.LogCaptureFixture
) -> None:
    board = Board()
    sender = ScriptedSender(answers=[Answer.RETRY], holding={SLOW})
    async with delivering(sender, board) as (deliverer, metrics, _):
        await board.new("t-1")
        deliverer.deliver_to(config(SLOW, config_id="slow"))
        deliverer.deliver_to(config(FAST, config_id="fast", token="secret-token"))
        await board.move("t-1", TaskState.WORKING)
        await board.move("t-1", TaskState.FAILED)
        started = trio.current_time()
        left = await deliverer.drain(30.0)
        assert trio.current_time() - started == pytest.approx(30.0)
    assert left == 2  # the slow one's first, under way, and its second, queued
    assert [p.url for p in sender.posts].count(FAST) == 3  # a retry, then both delivered
    assert delivered(metrics, "undelivered") == 2
    [line] = [r for r in caplog.records if getattr(r, "fields", {}).get("result") == "undelivered"]
    assert getattr(line, "fields")["config_id"] == "slow"  # noqa: B009 - set through `extra`
    assert "secret-token" not in caplog.text


async def test_a_v03_receiver_gets_the_task_as_it_stands_and_no_update_twice(
    autojump_clock: trio.testing.MockClock,
) -> None:
    board = Board()
    sender = ScriptedSender(holding={FAST})
    async with delivering(sender, board) as (deliverer, metrics, _):
        await board.new("t-1")
        deliverer.deliver_to(config(version="0.3"))
        await board.move("t-1", TaskState.WORKING)
        await trio.testing.wait_all_tasks_blocked()
        await board.move("t-1", TaskState.COMPLETED, answer="done")  # two events
        sender.release()
        await settle(deliverer)
    tasks = [json.loads(post.body) for post in sender.posts]
    assert [task["kind"] for task in tasks] == ["task", "task"]
    assert [task["status"]["state"] for task in tasks] == ["working", "completed"]
    assert tasks[1]["artifacts"][0]["parts"] == [{"kind": "text", "text": "done"}]
    assert delivered(metrics, "coalesced") == 1  # the completed update: the task showed it


class BrokenOnce(ScriptedSender):
    """Raises on its first POST, as a bug in the sender would; answers the rest."""

    async def post(self, url: str, body: bytes, headers: dict[str, str]) -> Attempt:
        if not self.posts:
            self.posts.append(Post(url, body, headers, trio.current_time()))
            raise RuntimeError("a bug in the sender")
        return await super().post(url, body, headers)


async def test_a_bug_in_a_delivery_loses_that_update_only(
    autojump_clock: trio.testing.MockClock, caplog: pytest.LogCaptureFixture
) -> None:
    board = Board()
    sender = BrokenOnce()
    async with delivering(sender, board) as (deliverer, metrics, configs):
        await board.new("t-1")
        deliverer.deliver_to(config())
        await board.move("t-1", TaskState.WORKING)
        await board.move("t-1", TaskState.COMPLETED, answer="done")
        await settle(deliverer)
        assert configs.ended == ["t-1"]  # the route went on to its end
    assert states(sender) == [
        "statusUpdate TASK_STATE_WORKING",
        "artifactUpdate",
        "statusUpdate TASK_STATE_COMPLETED",
    ]
    assert (delivered(metrics, "failed"), delivered(metrics, "delivered")) == (1, 2)
    [trace] = [r for r in caplog.records if r.exc_info]
    assert "task t-1" in trace.getMessage()


class Forgetful(MemoryTaskStore):
    """A store that no longer holds any task when asked for one."""

    async def get(self, task_id: str) -> Task:
        raise A2AError(ErrorCode.TASK_NOT_FOUND, f"Task {task_id} not found")


async def test_a_v03_task_the_store_let_go_is_logged_gone_and_not_posted(
    autojump_clock: trio.testing.MockClock, caplog: pytest.LogCaptureFixture
) -> None:
    board = Board()
    sender = ScriptedSender()
    async with delivering(sender, board) as (deliverer, metrics, configs):
        await board.new("t-1")
        deliverer._tasks = Forgetful()
        deliverer.deliver_to(config(version="0.3"))
        board.announce("t-1", TaskState.FAILED, 1)
        await settle(deliverer)
        assert configs.ended == ["t-1"]
    assert sender.posts == []
    gone = [r for r in caplog.records if getattr(r, "fields", {}).get("result") == "gone"]
    assert [r.levelno for r in gone] == [logging.WARNING]
    assert 'result="gone"' not in shown(metrics)  # a log line, not a delivery result


# Over the wire, to receivers on 127.0.0.1.


@asynccontextmanager
async def wired(
    board: Board, **options: Any
) -> AsyncIterator[tuple[Deliverer, Metrics, WatchedConfigs]]:
    timeout = options.pop("timeout", 10.0)
    async with (
        PushSender(AllowList.parse("127.0.0.1"), timeout=timeout) as sender,
        delivering(sender, board, backoff_base=0.05, **options) as running,
    ):
        yield running


async def run_task(board: Board, deliverer: Deliverer, *configs: PushConfig) -> None:
    await board.new("t-1")
    for each in configs:
        deliverer.deliver_to(each)
    await board.move("t-1", TaskState.WORKING)
    await board.move("t-1", TaskState.COMPLETED, answer="12 pallets")


@pytest.fixture
async def receiver(nursery: trio.Nursery) -> PushReceiver:
    return await start_push_receiver(nursery)


async def test_v1_receivers_get_each_update_as_a_stream_response_with_their_headers(
    receiver: PushReceiver,
) -> None:
    board = Board()
    pushed = config(
        receiver.url, token="per-task-token", authentication=PushAuthentication("Bearer", "cred-1")
    )
    async with wired(board) as (deliverer, metrics, _):
        await run_task(board, deliverer, pushed)
        with trio.fail_after(10):
            await receiver.wait_received(3)
            await settle(deliverer)
    responses = [
        json_format.ParseDict(body, a2a_pb2.StreamResponse()) for body in receiver.bodies()
    ]
    assert [r.WhichOneof("payload") for r in responses] == [
        "status_update",
        "artifact_update",
        "status_update",
    ]
    assert responses[0].status_update.status.state == a2a_pb2.TASK_STATE_WORKING
    assert responses[2].status_update.status.state == a2a_pb2.TASK_STATE_COMPLETED
    assert responses[1].artifact_update.artifact.parts[0].text == "12 pallets"
    for delivery in receiver.received:
        assert delivery.headers["content-type"] == "application/a2a+json"
        assert delivery.headers["x-a2a-notification-token"] == "per-task-token"
        assert delivery.headers["authorization"] == "Bearer cred-1"
        assert "x-subject-token" not in delivery.headers
    assert delivered(metrics, "delivered") == 3
    assert counted(metrics, "n8n_a2a_push_delivery_seconds_count") == 3


async def test_v03_receivers_get_the_task_as_v03_receivers_expect(receiver: PushReceiver) -> None:
    board = Board()
    async with wired(board) as (deliverer, _, _):
        await run_task(board, deliverer, config(receiver.url, version="0.3", token="tok"))
        with trio.fail_after(10):
            await settle(deliverer)
    tasks = [v03_types.Task.model_validate(body) for body in receiver.bodies()]
    assert tasks[0].status.state in (v03_types.TaskState.working, v03_types.TaskState.completed)
    assert tasks[-1].status.state is v03_types.TaskState.completed
    assert tasks[-1].artifacts is not None and tasks[-1].artifacts[0].name == "answer"
    assert {d.headers["content-type"] for d in receiver.received} == {"application/json"}
    assert {d.headers["x-a2a-notification-token"] for d in receiver.received} == {"tok"}
    assert all("authorization" not in d.headers for d in receiver.received)


async def test_a_receiver_answering_503_twice_gets_every_update_once_it_recovers(
    receiver: PushReceiver,
) -> None:
    receiver.statuses = [503, 503]
    board = Board()
    async with wired(board) as (deliverer, metrics, _):
        await run_task(board, deliverer, config(receiver.url))
        with trio.fail_after(10):
            await receiver.wait_received(5)
            await settle(deliverer)
    kinds = [next(iter(body)) for body in receiver.bodies()]
    assert kinds == ["statusUpdate"] * 3 + ["artifactUpdate", "statusUpdate"]
    assert delivered(metrics, "delivered") == 3
    assert counted(metrics, "n8n_a2a_push_attempts_total") == 5


async def test_a_4xx_ends_that_delivery_and_the_next_one_goes(receiver: PushReceiver) -> None:
    receiver.statuses = [400]
    board = Board()
    async with wired(board) as (deliverer, metrics, _):
        await run_task(board, deliverer, config(receiver.url))
        with trio.fail_after(10):
            await receiver.wait_received(3)
            await settle(deliverer)
    assert delivered(metrics, "rejected") == 1
    assert delivered(metrics, "delivered") == 2


async def test_a_redirect_is_not_followed(receiver: PushReceiver) -> None:
    receiver.statuses = [302, 302, 302]
    receiver.location = f"{receiver.base_url}/elsewhere"
    board = Board()
    async with wired(board) as (deliverer, metrics, _):
        await run_task(board, deliverer, config(receiver.url))
        with trio.fail_after(10):
            await receiver.wait_received(3)
            await settle(deliverer)
    assert {d.path for d in receiver.received} == {"/hook"}
    assert delivered(metrics, "rejected") == 3


async def test_a_receiver_that_never_answers_delays_neither_the_task_nor_the_others(
    nursery: trio.Nursery, receiver: PushReceiver
) -> None:
    dead = await start_push_receiver(nursery)
    dead.hold = True
    board = Board()
    async with wired(board, timeout=30.0) as (deliverer, _, _):
        await run_task(
            board,
            deliverer,
            config(dead.url, config_id="dead"),
            config(receiver.url, config_id="ok"),
        )
        with trio.fail_after(5):  # well within the dead one's 30 s attempt
            await receiver.wait_received(3)
        assert (await board.store.get("t-1")).status.state is TaskState.COMPLETED
        assert dead.held == 1


def chunk(text: str, first: bool = False) -> ArtifactUpdate:
    piece = Artifact("answer-1", "answer", (Part(text),))
    return ArtifactUpdate("t-1", "c-1", piece, 2, append=not first, last_chunk=False)


async def test_chunks_reach_a_receiver_at_most_one_per_interval_merged_and_the_end_always(
    autojump_clock: trio.testing.MockClock,
) -> None:
    board = Board()
    sender = ScriptedSender()
    async with delivering(sender, board) as (deliverer, _, _):
        await board.new("t-1")
        deliverer.deliver_to(config())
        await board.move("t-1", TaskState.WORKING)
        await settle(deliverer)
        for n in range(40):  # a token every 20 ms for 0.8 s
            board.events.relay(chunk(f"{n} ", first=n == 0))
            await trio.sleep(0.02)
        await board.move("t-1", TaskState.COMPLETED, answer="whole")
        await settle(deliverer)
    posted = [(json.loads(post.body), post.at) for post in sender.to(FAST)]
    # Every artifact update but the last (the whole answer) is a chunk.
    chunks, times = zip(*[(p, at) for p, at in posted if "artifactUpdate" in p][:-1], strict=True)
    assert all(b - a >= CHUNK_INTERVAL for a, b in itertools.pairwise(times))
    # 0.8 s of tokens: one at once, one per interval, and the rest after the last.
    assert 2 <= len(chunks) <= 0.8 / CHUNK_INTERVAL + 2
    text = "".join(c["artifactUpdate"]["artifact"]["parts"][0]["text"] for c in chunks)
    assert text == "".join(f"{n} " for n in range(40))
    assert states(sender)[-2:] == ["artifactUpdate", "statusUpdate TASK_STATE_COMPLETED"]
