"""Two callers through the official a2a-sdk 1.3.0 client, every mode (JSON-RPC v1.0 and v0.3,
HTTP+JSON v1.0), with verified tokens.

The tokens come from a local OpenID Connect issuer; the SDK's own AuthInterceptor puts
them on each request because the card's security scheme (OpenID Connect, required) tells
it to. Neither caller can see, get, cancel, subscribe to or list the other's tasks, and
a caller whose token is refreshed still polls its own.
"""

from __future__ import annotations

import asyncio
import uuid
from dataclasses import dataclass, field
from functools import partial

import httpx
import trio
from a2a.client import A2ACardResolver, Client, ClientCallContext
from a2a.client.auth.credentials import CredentialService
from a2a.client.auth.interceptor import AuthInterceptor
from a2a.types import (
    CancelTaskRequest,
    GetTaskRequest,
    ListTasksRequest,
    Message,
    Part,
    Role,
    SendMessageConfiguration,
    SendMessageRequest,
    SubscribeToTaskRequest,
    Task,
)
from a2a.types import TaskState as SdkTaskState
from a2a.utils.errors import TaskNotFoundError

from tests.interop import sdk_modes
from tests.interop.sdk_modes import SdkMode
from tests.support.adapter import AdapterFactory
from tests.support.oidc_issuer import LocalIssuer, start_issuer
from tests.support.stub_webhook import StubWebhook


@dataclass
class Token(CredentialService):
    """One caller's current token, for whichever scheme the card requires."""

    value: str
    schemes: list[str] = field(default_factory=list)

    async def get_credentials(
        self, security_scheme_name: str, context: ClientCallContext | None
    ) -> str | None:
        self.schemes.append(security_scheme_name)
        return self.value


@dataclass
class Seen:
    sent: Task
    held: Task
    other_refusals: dict[str, str] = field(default_factory=dict)
    unknown_refusals: dict[str, str] = field(default_factory=dict)
    other_listed: list[str] | None = None
    own_listed: list[str] | None = None
    polled_after_refresh: Task | None = None
    canceled_after_refresh: Task | None = None
    schemes: list[str] = field(default_factory=list)


async def _client(
    http: httpx.AsyncClient, url: str, token: Token, mode: SdkMode, *, streaming: bool = True
) -> Client:
    card = await A2ACardResolver(http, url).get_agent_card()
    return mode.client(card, [AuthInterceptor(token)], streaming=streaming, httpx_client=http)


async def _send(client: Client, text: str, *, wait: bool) -> Task:
    message = Message(role=Role.ROLE_USER, message_id=str(uuid.uuid4()), parts=[Part(text=text)])
    request = SendMessageRequest(
        message=message, configuration=SendMessageConfiguration(return_immediately=not wait)
    )
    task = Task()
    async for event in client.send_message(request):
        if event.WhichOneof("payload") == "task":
            task = event.task
        if not wait:
            break
    return await client.get_task(GetTaskRequest(id=task.id))


async def _refusal(attempt: str, client: Client, task_id: str) -> str:
    """How the SDK reports an attempt on the task: the error's type and message, id masked."""
    try:
        if attempt == "get":
            await client.get_task(GetTaskRequest(id=task_id))
        elif attempt == "cancel":
            await client.cancel_task(CancelTaskRequest(id=task_id))
        else:
            async for _ in client.subscribe(SubscribeToTaskRequest(id=task_id)):
                pass
    except TaskNotFoundError as error:
        return f"{type(error).__name__}: {str(error).replace(task_id, '<id>')}"
    return "no error"


async def _drive(url: str, alice: Token, bob: Token, refreshed: str, mode: SdkMode) -> Seen:
    async with httpx.AsyncClient(timeout=30) as http_a, httpx.AsyncClient(timeout=30) as http_b:
        as_alice = await _client(http_a, url, alice, mode)
        as_bob = await _client(http_b, url, bob, mode)
        sender = await _client(http_a, url, alice, mode, streaming=False)
        sent = await _send(sender, "answer:alice's plans", wait=True)
        held = await _send(sender, "hold", wait=False)
        seen = Seen(sent, held)
        for attempt in ("get", "cancel", "subscribe"):
            for task in (sent, held):
                seen.other_refusals[f"{attempt} {task.id}"] = await _refusal(
                    attempt, as_bob, task.id
                )
            seen.unknown_refusals[attempt] = await _refusal(attempt, as_bob, str(uuid.uuid4()))
        if not mode.v03:  # v0.3 has no ListTasks
            listed = await as_bob.list_tasks(ListTasksRequest())
            seen.other_listed = [t.id for t in listed.tasks]
            listed = await as_alice.list_tasks(ListTasksRequest())
            seen.own_listed = [t.id for t in listed.tasks]
        alice.value = refreshed
        seen.polled_after_refresh = await as_alice.get_task(GetTaskRequest(id=held.id))
        seen.canceled_after_refresh = await as_alice.cancel_task(CancelTaskRequest(id=held.id))
        seen.schemes = sorted(set(alice.schemes + bob.schemes))
        for client in (as_alice, as_bob, sender):
            await client.close()
        return seen


@sdk_modes.parametrize()
async def test_two_verified_callers_through_the_official_client_are_isolated(
    nursery: trio.Nursery, stub: StubWebhook, start_adapter: AdapterFactory, mode: SdkMode
) -> None:
    issuer: LocalIssuer = await start_issuer(nursery)
    # The card offers the local issuer's code flow and the scope: the client still reads it.
    url = await start_adapter(stub.url, **issuer.adapter_settings(scopes=("a2a.call",)))
    async with httpx.AsyncClient() as probe:
        with trio.fail_after(5):
            while (await probe.get(url + "readyz")).status_code != 200:  # noqa: ASYNC110
                await trio.sleep(0.02)
    first = issuer.mint("alice", lifetime=60, jti="first", scope="a2a.call")
    alice = Token(first)
    bob = Token(issuer.mint("bob", scope="a2a.call"))
    refreshed = issuer.mint("alice", lifetime=3600, jti="refreshed", scope="a2a.call")
    seen = await trio.to_thread.run_sync(
        partial(asyncio.run, _drive(url, alice, bob, refreshed, mode))
    )

    assert seen.schemes == ["oidc"]  # the card told the SDK which credential to send
    assert seen.sent.status.state == SdkTaskState.TASK_STATE_COMPLETED
    assert seen.held.status.state == SdkTaskState.TASK_STATE_WORKING
    for name, refusal in seen.other_refusals.items():
        attempt = name.split()[0]
        assert refusal == seen.unknown_refusals[attempt], name
        assert refusal.startswith("TaskNotFoundError"), name
    if not mode.v03:
        assert seen.other_listed == []
        assert seen.own_listed == [seen.held.id, seen.sent.id]
    assert seen.polled_after_refresh is not None and seen.canceled_after_refresh is not None
    assert seen.polled_after_refresh.status.state == SdkTaskState.TASK_STATE_WORKING
    assert seen.canceled_after_refresh.status.state == SdkTaskState.TASK_STATE_CANCELED
    # Alice's two sends, her token passed on; nothing of bob's attempts reached the workflow.
    assert [r.headers.get("x-subject-token") for r in stub.received] == [first, first]
