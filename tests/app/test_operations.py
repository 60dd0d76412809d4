"""What each operation that answers at once does, whatever binding carried it: the
executor's call, and its result in the codec's shapes; the table holds each operation."""

from __future__ import annotations

import ipaddress
import typing
from typing import cast

import pytest
import trio

from n8n_a2a.app.edge import Edge
from n8n_a2a.app.operations import PERFORMERS, perform
from n8n_a2a.auth.caller import Caller
from n8n_a2a.budget import MemoryBudget
from n8n_a2a.core.errors import AtCapacity
from n8n_a2a.executor import Executor
from n8n_a2a.observability.metrics import Metrics
from n8n_a2a.protocol.errors import A2AError, ErrorCode
from n8n_a2a.protocol.model import (
    CancelTask,
    GetTask,
    ListTasks,
    Message,
    Operation,
    Part,
    Role,
    SendMessage,
    SubscribeToTask,
)
from n8n_a2a.protocol.push import (
    AllowList,
    CreatePushConfig,
    DeletePushConfig,
    GetPushConfig,
    ListPushConfigs,
    PushConfig,
)
from n8n_a2a.protocol.versions import V03, V1
from n8n_a2a.push.deliverer import Deliverer
from n8n_a2a.push.lookups import Lookups
from n8n_a2a.push.service import PushNotifications
from n8n_a2a.store.fanout import LocalTaskEvents
from n8n_a2a.store.memory import MemoryPushConfigStore, MemoryTaskStore
from tests.support.adapter import make_settings
from tests.support.executor import ScriptedWorkflow, executor_for, message
from tests.support.push import Resolver, ScriptedSender


def edge_of(executor: Executor) -> Edge:
    push = cast(PushNotifications, None)  # reached only for a task the caller may see
    return Edge(make_settings(), executor, Metrics(), push, None, lambda: None)


async def test_a_blocking_send_answers_the_finished_task_in_the_codecs_shapes() -> None:
    async with executor_for(ScriptedWorkflow(everything=True)) as executor:
        edge = edge_of(executor)
        v1 = await perform(edge, V1, message("12 pallets", blocking=True), Caller())
        v03 = await perform(edge, V03, message("12 pallets", blocking=True), Caller())
    assert isinstance(v1, dict) and isinstance(v03, dict)
    assert v1["task"]["status"]["state"] == "TASK_STATE_COMPLETED"
    assert (v03["kind"], v03["status"]["state"]) == ("task", "completed")


async def test_get_and_list_answer_the_callers_tasks() -> None:
    async with executor_for(ScriptedWorkflow(everything=True)) as executor:
        edge = edge_of(executor)
        sent = await perform(edge, V1, message("hi", blocking=True), Caller())
        assert isinstance(sent, dict)
        task_id = sent["task"]["id"]
        got = await perform(edge, V1, GetTask(task_id), Caller())
        page = await perform(edge, V1, ListTasks(), Caller())
    assert isinstance(got, dict) and isinstance(page, dict)
    assert got["id"] == task_id
    assert [task["id"] for task in page["tasks"]] == [task_id]


async def test_a_push_operation_on_a_task_the_caller_cannot_see_is_an_unknown_task() -> None:
    async with executor_for(ScriptedWorkflow(everything=True)) as executor:
        with pytest.raises(A2AError) as refused:
            await perform(edge_of(executor), V1, GetPushConfig("t-none", "c-1"), Caller())
    assert refused.value.code is ErrorCode.TASK_NOT_FOUND


async def test_a_get_task_holds_what_its_answer_copies_as_a_read() -> None:
    """Within its caller's share, whatever is kept; it releases nothing."""
    budget = MemoryBudget(64 * 1024, wait=0.0, share=16 * 1024)
    async with executor_for(ScriptedWorkflow(everything=True)) as executor:
        edge = edge_of(executor)
        long = SendMessage(Message("m-1", Role.USER, (Part("x" * 5000),)), blocking=True)
        sent = await perform(edge, V1, long, Caller())
        assert isinstance(sent, dict)
        answer = budget.reservation("ann")
        budget.works_for("bob's task", "bob")
        budget.keep("bob's task", 64 * 1024)  # kept results fill it: a read goes on
        await perform(edge, V1, GetTask(sent["task"]["id"]), Caller(), answer=answer)
        # Its text, asked and answered (the same text, counted once each way it came).
        assert answer.size >= 5000
        with pytest.raises(AtCapacity) as refused:  # past ann's share with the first
            for _ in range(3):
                await perform(edge, V1, GetTask(sent["task"]["id"]), Caller(), answer=answer)
        assert "ADAPTER_MEMORY_SHARE" in refused.value.message
        answer.give_back()
    assert budget.held == 0


async def test_a_task_list_holds_what_its_page_copies_as_a_read() -> None:
    budget = MemoryBudget(64 * 1024, wait=0.0, share=48 * 1024)
    async with executor_for(ScriptedWorkflow(everything=True)) as executor:
        edge = edge_of(executor)
        for n in range(3):
            long = SendMessage(Message(f"m-{n}", Role.USER, (Part("x" * 5000),)), blocking=True)
            await perform(edge, V1, long, Caller())
        answer = budget.reservation("ann")
        listed = ListTasks(include_artifacts=True)
        page = await perform(edge, V1, listed, Caller(), answer=answer)
        assert isinstance(page, dict) and len(page["tasks"]) == 3
        assert answer.size >= 3 * 5000  # each task's text at least
        with pytest.raises(AtCapacity):
            await perform(edge, V1, listed, Caller(), answer=answer)
        answer.give_back()
    assert budget.held == 0


def test_every_operation_answered_at_once_has_its_row() -> None:
    """A subscription alone is always answered with events (streams.py)."""
    assert set(PERFORMERS) == {
        SendMessage,
        GetTask,
        CancelTask,
        ListTasks,
        CreatePushConfig,
        GetPushConfig,
        ListPushConfigs,
        DeletePushConfig,
    }
    assert set(typing.get_args(Operation)) - set(PERFORMERS) == {SubscribeToTask}


async def test_a_subscription_is_not_performed_at_once() -> None:
    async with executor_for(ScriptedWorkflow(everything=True)) as executor:
        with pytest.raises(TypeError, match="SubscribeToTask is answered with events"):
            await perform(edge_of(executor), V1, SubscribeToTask("t-1"), Caller())


async def test_a_cancel_of_a_finished_task_is_refused_as_not_cancelable() -> None:
    async with executor_for(ScriptedWorkflow(everything=True)) as executor:
        edge = edge_of(executor)
        sent = await perform(edge, V1, message("hi", blocking=True), Caller())
        assert isinstance(sent, dict)
        with pytest.raises(A2AError) as refused:
            await perform(edge, V1, CancelTask(sent["task"]["id"]), Caller())
    assert refused.value.code is ErrorCode.TASK_NOT_CANCELABLE


async def test_the_push_methods_answer_in_each_codecs_shapes() -> None:
    store, configs = MemoryTaskStore(), MemoryPushConfigStore()
    deliverer = Deliverer(ScriptedSender(), store, configs)
    public = {"bridge.example": [ipaddress.ip_address("93.184.215.14")]}
    lookups = Lookups(lookup=Resolver(public).lookup)
    push = PushNotifications(configs, deliverer, store, AllowList(), lookups=lookups)
    workflow = ScriptedWorkflow(everything=True)
    async with executor_for(workflow, store) as executor, trio.open_nursery() as nursery:
        await nursery.start(deliverer.run, LocalTaskEvents())
        edge = Edge(make_settings(), executor, Metrics(), push, None, lambda: None)
        sent = await perform(edge, V1, message("hi", blocking=True), Caller())
        assert isinstance(sent, dict)
        task_id = sent["task"]["id"]
        config = PushConfig(task_id, "c-1", "https://bridge.example/hook")
        created = await perform(edge, V1, CreatePushConfig(config), Caller())
        got = await perform(edge, V03, GetPushConfig(task_id, "c-1"), Caller())
        listed = await perform(edge, V1, ListPushConfigs(task_id), Caller())
        deleted = await perform(edge, V1, DeletePushConfig(task_id, "c-1"), Caller())
        deleted_v03 = await perform(edge, V03, DeletePushConfig(task_id, "c-1"), Caller())
        nursery.cancel_scope.cancel()
    v1_config = {"taskId": task_id, "id": "c-1", "url": "https://bridge.example/hook"}
    assert created == v1_config
    assert got == {
        "taskId": task_id,
        "pushNotificationConfig": {"id": "c-1", "url": "https://bridge.example/hook"},
    }
    assert listed == {"configs": [v1_config], "nextPageToken": ""}
    assert (deleted, deleted_v03) == ({}, None)
