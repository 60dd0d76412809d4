"""SSE framing, judged by the official clients' own readers: a2a-sdk 1.3.0's SSE parser, its
v1.0 JSON-RPC transport and its v0.3 compat transport, fed our exact bytes."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime

import httpx
import pytest
from a2a.client.transports.base import ClientTransport
from a2a.client.transports.http_helpers import parse_sse_stream
from a2a.client.transports.jsonrpc import JsonRpcTransport
from a2a.compat.v0_3.jsonrpc_transport import CompatJsonRpcTransport
from a2a.types import a2a_pb2
from a2a.utils.errors import TaskNotFoundError

from n8n_a2a.protocol import jsonrpc, sse
from n8n_a2a.protocol.codec import Codec
from n8n_a2a.protocol.errors import A2AError
from n8n_a2a.protocol.model import (
    Artifact,
    ArtifactUpdate,
    Message,
    Operation,
    Part,
    Role,
    SendMessage,
    StatusUpdate,
    SubscribeToTask,
    Task,
    TaskEvent,
    TaskState,
    TaskStatus,
)
from n8n_a2a.protocol.versions import V03, V1

URL = "http://agent.test/"
MOMENT = datetime(2026, 11, 29, 18, 34, 32, 62_000, tzinfo=UTC)


async def read_events(body: bytes) -> list[str]:
    """The data of each event, as a2a-sdk 1.3.0's client reads a text/event-stream."""
    response = httpx.Response(200, headers=sse.HEADERS, content=body)
    return [data async for _, data in parse_sse_stream(response)]


def test_an_event_is_a_data_line_and_a_blank_line() -> None:
    assert sse.event(b'{"id":1}') == b'data: {"id":1}\n\n'
    assert sse.event(b"") == b"data: \n\n"


def test_every_line_of_the_payload_gets_its_own_data_field() -> None:
    assert sse.event(b"a\r\nb\rc\nd") == b"data: a\ndata: b\ndata: c\ndata: d\n\n"


@pytest.mark.parametrize(
    "payload",
    [
        b'{"jsonrpc":"2.0","id":1,"result":{}}',
        b"two\nlines",
        b"crlf\r\nand cr\rend",
        b" a leading space",
        b"a trailing newline\n",
        b"\n\nblank lines around\n\n",
        b"data: looks like a field",
        b": looks like a comment",
        b"event: error\nid: 7\nretry: 1",
        "ü € 😀".encode(),
    ],
)
async def test_any_payload_comes_back_whole_as_one_event(payload: bytes) -> None:
    # SSE carries no CR: a reader hands back each line break as LF.
    expected = payload.decode().replace("\r\n", "\n").replace("\r", "\n")
    assert await read_events(sse.event(payload)) == [expected]
    assert await read_events(sse.event(payload) + sse.event(b"next")) == [expected, "next"]


@pytest.mark.parametrize(
    ("text", "framed"),
    [
        ("", b":\n\n"),
        ("keep-alive", b": keep-alive\n\n"),
        ("a\r\nb\nc\rd", b": a b c d\n\n"),
    ],
)
def test_a_comment_is_one_line(text: str, framed: bytes) -> None:
    assert sse.comment(text) == framed


async def test_readers_skip_comments_between_events() -> None:
    body = sse.event(b"one") + sse.comment() + sse.comment("x\ndata: two") + sse.event(b"three")
    assert await read_events(body) == ["one", "three"]


def test_the_stream_headers() -> None:
    assert dict(sse.HEADERS) == {
        "Content-Type": "text/event-stream",
        "Cache-Control": "no-cache",
        "X-Accel-Buffering": "no",
    }


# The official transports, with our bytes as the agent's answer.


def answered_task() -> list[Task | TaskEvent]:
    """One task's stream: the Task, working, the answer, completed."""
    user = Message("m-1", Role.USER, (Part("hello"),), "t-1", "c-1")
    reply = Message("m-2", Role.AGENT, (Part("hi"),), "t-1", "c-1")
    return [
        Task("t-1", "c-1", TaskStatus(TaskState.SUBMITTED, MOMENT), history=(user,)),
        StatusUpdate("t-1", "c-1", TaskStatus(TaskState.WORKING, MOMENT), sequence=1),
        ArtifactUpdate("t-1", "c-1", Artifact("a-1", "answer", (Part("hi"),)), sequence=2),
        StatusUpdate("t-1", "c-1", TaskStatus(TaskState.COMPLETED, MOMENT, reply), sequence=3),
    ]


class Agent:
    """Answers each POST with a stream: the request decoded by `codec`, the items encoded
    by it and framed by sse.py, a keep-alive between them, then `ending`."""

    def __init__(self, codec: Codec, items: list[Task | TaskEvent], ending: A2AError | None):
        self.codec = codec
        self.items = items
        self.ending = ending
        self.operations: list[Operation] = []

    def answer(self, request: httpx.Request) -> httpx.Response:
        call = jsonrpc.parse_request(request.content)
        self.operations.append(self.codec.decode(call.method, call.params))
        body = b""
        for item in self.items:
            result = self.codec.encode_stream_event(item)
            body += sse.event(jsonrpc.result_response(call.id, result)) + sse.comment()
        if self.ending is not None:
            body += sse.error_event(call.id, self.codec.encode_error(self.ending))
        return httpx.Response(200, headers=sse.HEADERS, content=body)

    def client(self) -> httpx.AsyncClient:
        return httpx.AsyncClient(transport=httpx.MockTransport(self.answer))


def v1_transport(client: httpx.AsyncClient) -> ClientTransport:
    return JsonRpcTransport(client, a2a_pb2.AgentCard(), URL)


def v03_transport(client: httpx.AsyncClient) -> ClientTransport:
    return CompatJsonRpcTransport(client, None, URL)


TRANSPORTS = [
    pytest.param(V1, v1_transport, id="v1.0"),
    pytest.param(V03, v03_transport, id="v0.3"),
]
Transport = Callable[[httpx.AsyncClient], ClientTransport]
SEND = a2a_pb2.SendMessageRequest(
    message=a2a_pb2.Message(message_id="m-1", role=a2a_pb2.ROLE_USER, parts=[{"text": "hello"}])
)


async def read_stream(transport: ClientTransport, subscribe: bool) -> list[a2a_pb2.StreamResponse]:
    if subscribe:
        return [e async for e in transport.subscribe(a2a_pb2.SubscribeToTaskRequest(id="t-1"))]
    return [e async for e in transport.send_message_streaming(SEND)]


@pytest.mark.parametrize(("codec", "transport"), TRANSPORTS)
@pytest.mark.parametrize("subscribe", [False, True], ids=["send", "subscribe"])
async def test_the_official_clients_read_a_whole_stream(
    codec: Codec, transport: Transport, subscribe: bool
) -> None:
    agent = Agent(codec, answered_task(), ending=None)
    async with agent.client() as client:
        events = await read_stream(transport(client), subscribe)
    (operation,) = agent.operations
    if subscribe:
        assert operation == SubscribeToTask("t-1")
    else:
        assert isinstance(operation, SendMessage)
        assert operation.streaming and operation.message.text == "hello"
    assert [e.WhichOneof("payload") for e in events] == [
        "task",
        "status_update",
        "artifact_update",
        "status_update",
    ]
    task, working, answer, completed = events
    assert (task.task.id, task.task.status.state) == ("t-1", a2a_pb2.TASK_STATE_SUBMITTED)
    assert working.status_update.status.state == a2a_pb2.TASK_STATE_WORKING
    assert [part.text for part in answer.artifact_update.artifact.parts] == ["hi"]
    assert answer.artifact_update.last_chunk
    assert completed.status_update.status.state == a2a_pb2.TASK_STATE_COMPLETED
    assert completed.status_update.status.message.role == a2a_pb2.ROLE_AGENT
    assert {e.status_update.task_id for e in (working, completed)} == {"t-1"}


@pytest.mark.parametrize(("codec", "transport"), TRANSPORTS)
async def test_an_error_event_reaches_the_caller_with_its_code(
    codec: Codec, transport: Transport
) -> None:
    agent = Agent(codec, answered_task()[:1], ending=A2AError.task_not_found("t-1"))
    events = []
    async with agent.client() as client:
        with pytest.raises(TaskNotFoundError, match="t-1"):
            async for event in transport(client).subscribe(
                a2a_pb2.SubscribeToTaskRequest(id="t-1")
            ):
                events.append(event)
    assert [e.WhichOneof("payload") for e in events] == ["task"]
