"""The push config methods behind the JSON-RPC ones: check, hold, deliver to, page, forget."""

from __future__ import annotations

import ipaddress
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import pytest
import trio
import trio.testing

from n8n_a2a.app.edge import wire_error
from n8n_a2a.core.errors import AdapterError
from n8n_a2a.protocol.errors import A2AError, ErrorCode
from n8n_a2a.protocol.model import TaskState
from n8n_a2a.protocol.push import (
    AllowList,
    CreatePushConfig,
    DeletePushConfig,
    GetPushConfig,
    ListPushConfigs,
    PushConfig,
)
from n8n_a2a.push.deliverer import Deliverer
from n8n_a2a.push.lookups import Lookups
from n8n_a2a.push.service import LOOKUP_TIMEOUT, PushNotifications
from n8n_a2a.store.memory import MemoryPushConfigStore
from tests.support.push import Blackhole, Board, Resolver, ScriptedSender

PUBLIC = ipaddress.ip_address("93.184.215.14")
RESOLVER = {"bridge.example": [PUBLIC], "inside.example": [ipaddress.ip_address("10.1.1.1")]}


@asynccontextmanager
async def service(
    board: Board,
    sender: ScriptedSender | None = None,
    lookups: Lookups | None = None,
    **options: Any,
) -> AsyncIterator[PushNotifications]:
    configs = MemoryPushConfigStore()
    deliverer = Deliverer(sender or ScriptedSender(), board.store, configs)
    lookups = lookups or Lookups(lookup=Resolver(RESOLVER).lookup)
    async with trio.open_nursery() as nursery:
        await nursery.start(deliverer.run, board.events)
        yield PushNotifications(
            configs, deliverer, board.store, AllowList(), lookups=lookups, **options
        )
        nursery.cancel_scope.cancel()


def config(config_id: str, url: str = "https://bridge.example/hook") -> PushConfig:
    return PushConfig("t-1", config_id, url)


async def test_a_config_on_a_finished_task_is_held_to_be_read() -> None:
    board = Board()
    await board.new("t-1")
    await board.move("t-1", TaskState.WORKING)
    await board.move("t-1", TaskState.COMPLETED, answer="done")
    sender = ScriptedSender()
    async with service(board, sender) as push:
        created = await push.create(CreatePushConfig(config("c-1")), None)
        await trio.testing.wait_all_tasks_blocked()
        assert await push.get(GetPushConfig("t-1", "c-1")) == created
    assert sender.posts == []  # nothing happens to a finished task


async def test_a_config_on_a_running_task_hears_its_next_update() -> None:
    board = Board()
    await board.new("t-1")
    await board.move("t-1", TaskState.WORKING)
    sender = ScriptedSender()
    async with service(board, sender) as push:
        await push.create(CreatePushConfig(config("c-1")), None)
        await board.move("t-1", TaskState.FAILED)
        await trio.testing.wait_all_tasks_blocked()
    assert len(sender.posts) == 1
    assert b"TASK_STATE_FAILED" in sender.posts[0].body


async def test_a_name_that_does_not_resolve_yet_is_taken_a_refused_one_is_not() -> None:
    board = Board()
    await board.new("t-1")
    async with service(board) as push:
        await push.create(CreatePushConfig(config("later", "https://not-yet.example/")), None)
        with pytest.raises(A2AError) as raised:
            await push.create(CreatePushConfig(config("inside", "https://inside.example/")), None)
        assert await push.get(GetPushConfig("t-1", "later"))
    assert raised.value.code is ErrorCode.INVALID_PARAMS
    # What the name resolves to is not the caller's to learn.
    assert raised.value.message == (
        "The push notification URL is refused: its host resolves to a private address; push "
        "notifications go there only if ADAPTER_PUSH_ALLOW_HOSTS allows it"
    )


async def test_an_unknown_config_is_task_not_found() -> None:
    board = Board()
    await board.new("t-1")
    async with service(board) as push:
        with pytest.raises(A2AError) as raised:
            await push.get(GetPushConfig("t-1", "nope"))
    assert raised.value.code is ErrorCode.TASK_NOT_FOUND
    assert "'nope'" in raised.value.message


async def test_the_list_pages_in_the_order_configs_were_made() -> None:
    board = Board()
    await board.new("t-1")
    async with service(board) as push:
        for config_id in "abcde":
            await push.create(CreatePushConfig(config(config_id)), None)
        everything = await push.list(ListPushConfigs("t-1"))
        assert [c.id for c in everything.configs] == list("abcde")
        assert everything.next_page_token == ""
        seen: list[str] = []
        token = None
        while True:
            page = await push.list(ListPushConfigs("t-1", page_size=2, page_token=token))
            seen += [c.id for c in page.configs]
            if not page.next_page_token:
                break
            token = page.next_page_token
        assert seen == list("abcde")
        with pytest.raises(A2AError) as raised:
            await push.list(ListPushConfigs("t-1", page_token="bm90IG1pbmU="))
    assert raised.value.code is ErrorCode.INVALID_PARAMS


async def test_a_delete_stops_deliveries_and_is_idempotent() -> None:
    board = Board()
    await board.new("t-1")
    sender = ScriptedSender()
    async with service(board, sender) as push:
        await push.create(CreatePushConfig(config("c-1")), None)
        await push.delete(DeletePushConfig("t-1", "c-1"))
        await push.delete(DeletePushConfig("t-1", "c-1"))
        await board.move("t-1", TaskState.WORKING)
        await trio.testing.wait_all_tasks_blocked()
        assert (await push.list(ListPushConfigs("t-1"))).configs == ()
    assert sender.posts == []


async def test_past_the_limit_a_config_is_refused_naming_the_variable() -> None:
    board = Board()
    await board.new("t-1")
    async with service(board, max_configs=1) as push:
        await push.create(CreatePushConfig(config("a")), None)
        with pytest.raises(A2AError) as raised:
            await push.create(CreatePushConfig(config("b")), None)
    assert raised.value.code is ErrorCode.INVALID_PARAMS
    assert "ADAPTER_PUSH_MAX_CONFIGS" in raised.value.message


LATE = "The push notification URL is refused: its host did not resolve within 5 s"


async def create(
    push: PushNotifications, owner: str | None, url: str, answers: list[object]
) -> None:
    """Make a config for `owner`; note what came of it (the config, or the error)."""
    try:
        answers.append(await push.create(CreatePushConfig(config(url, url)), owner))
    except (A2AError, AdapterError) as error:
        answers.append(error)


def refusals(answers: list[object]) -> list[tuple[ErrorCode, str]]:
    """The refusals as the caller reads them: the wire's code (the edge's table for the
    adapter's own errors) and the message."""
    refused = [wire_error(a) for a in answers if isinstance(a, A2AError | AdapterError)]
    return sorted((a.code, a.message) for a in refused)


async def test_a_name_with_no_answer_in_time_is_refused(autojump_clock: trio.abc.Clock) -> None:
    board = Board()
    await board.new("t-1")
    blackhole = Blackhole(Resolver(RESOLVER).lookup)
    answers: list[object] = []
    try:
        async with service(board, lookups=Lookups(lookup=blackhole)) as push:
            await create(push, None, "https://h.blackhole.test/", answers)
            assert (await push.list(ListPushConfigs("t-1"))).configs == ()
    finally:
        blackhole.end()
    assert refusals(answers) == [(ErrorCode.INVALID_PARAMS, LATE)]


async def test_a_callers_lookups_past_its_share_wait_then_are_refused_others_go_on(
    mock_clock: trio.testing.MockClock,
) -> None:
    board = Board()
    await board.new("t-1")
    blackhole = Blackhole(Resolver(RESOLVER).lookup)
    mine: list[object] = []
    theirs: list[object] = []
    try:
        lookups = Lookups(per_caller=2, lookup=blackhole)
        async with service(board, lookups=lookups) as push, trio.open_nursery() as nursery:
            for n in range(3):
                nursery.start_soon(create, push, "token:a", f"https://h{n}.blackhole.test/", mine)
            await trio.testing.wait_all_tasks_blocked()
            # Another caller's config is looked up, and taken, meanwhile (the clock stands still).
            await create(push, "token:b", "https://bridge.example/", theirs)
            mock_clock.jump(LOOKUP_TIMEOUT)
    finally:
        blackhole.end()
    assert refusals(theirs) == []
    busy = (
        "The push notification URL's host could not be looked up within 5 s: this caller's 2 "
        "lookups at once (one caller's most) are all taken by names that have not answered "
        "yet; try again later"
    )
    assert refusals(mine) == [
        (ErrorCode.INVALID_PARAMS, LATE),
        (ErrorCode.INVALID_PARAMS, LATE),
        (ErrorCode.SERVER_BUSY, busy),
    ]


async def test_a_lookup_that_gets_no_thread_in_time_is_busy(autojump_clock: trio.abc.Clock) -> None:
    board = Board()
    await board.new("t-1")
    blackhole = Blackhole(Resolver(RESOLVER).lookup)
    answers: list[object] = []
    try:
        lookups = Lookups(threads=2, per_caller=1, lookup=blackhole)
        async with service(board, lookups=lookups) as push, trio.open_nursery() as nursery:
            for owner in ("token:a", "token:b"):  # a thread each, never given back
                nursery.start_soon(create, push, owner, "https://h.blackhole.test/", [])
            await trio.testing.wait_all_tasks_blocked()
            await create(push, None, "https://bridge.example/", answers)
    finally:
        blackhole.end()
    [(code, message)] = refusals(answers)
    assert code is ErrorCode.SERVER_BUSY
    assert "the adapter's 2 push lookup threads are all taken" in message
