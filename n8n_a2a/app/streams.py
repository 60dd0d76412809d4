"""The Server-Sent Events answer of SendStreamingMessage and SubscribeToTask: the task, then
each of its events until the final one, kept alive through proxies, so many per caller.

The binding frames each event: JSON-RPC as a response with the request's id, HTTP+JSON as
the StreamResponse itself (and an error as an `error` event of the binding's error body).
"""

from __future__ import annotations

from collections.abc import AsyncGenerator, Callable
from dataclasses import dataclass
from typing import Protocol, TypeGuard

import trio

from ..auth.caller import Caller
from ..budget import Reservation
from ..core.errors import AdapterError, SubscriberTooSlow
from ..executor.subscriptions import StreamQuota, TaskStream
from ..protocol import jsonrpc, sse
from ..protocol.codec import Codec
from ..protocol.errors import A2AError, RequestId
from ..protocol.model import JSONObject, Operation, SendMessage, SubscribeToTask, Task, TaskEvent
from .edge import JSONRPC, Edge, wire_error
from .exchange import Answer, LastPiece


class Frames(Protocol):
    """How a binding frames a stream's events."""

    @property
    def binding(self) -> str: ...

    @property
    def codec(self) -> Codec: ...

    def result(self, document: JSONObject) -> bytes:
        """The event of one StreamResponse."""

    def error(self, error: A2AError) -> bytes:
        """The stream's last event: a refusal."""


@dataclass(frozen=True, slots=True)
class JsonRpcFrames:
    """Each event a JSON-RPC response with the request's id (A2A spec §9.4.2)."""

    request_id: RequestId
    codec: Codec
    binding: str = JSONRPC

    def result(self, document: JSONObject) -> bytes:
        return sse.event(jsonrpc.result_response(self.request_id, document))

    def error(self, error: A2AError) -> bytes:
        return sse.error_event(self.request_id, self.codec.encode_error(error))


def answers_with_events(operation: Operation) -> TypeGuard[SendMessage | SubscribeToTask]:
    """Whether an operation is answered with an event stream (streams.py), not at once."""
    return isinstance(operation, SubscribeToTask) or (
        isinstance(operation, SendMessage) and operation.streaming
    )


class EventStreams:
    """Opens event streams, each caller's bounded by ADAPTER_MAX_STREAMS_PER_CALLER."""

    def __init__(self, edge: Edge) -> None:
        self._edge = edge
        self._quota = StreamQuota(edge.settings.max_streams_per_caller)

    async def open(
        self,
        frames: Frames,
        operation: SendMessage | SubscribeToTask,
        caller: Caller,
        method: str,
        held: Reservation | None = None,
    ) -> Answer:
        """The stream's answer; A2AError for a v1.0 caller refused at once. `held`: a
        streaming send's request bytes under the memory budget, for its call to give back.

        A v1.0 caller refused at once (an unknown or finished task, a full server) gets a
        plain JSON-RPC error, as the official v1.0 servers answer and every v1.0 client
        reads with its type. A v0.3 caller gets the stream's one error event: a2a-sdk 0.3
        loses the code of anything but an event. What goes wrong later (a reader too slow,
        a race with the check) is the stream's last event in both versions."""
        if frames.codec.facts.refuses_streams_plainly:
            self._quota.check(caller.owner)
            await self._edge.executor.check_stream(operation, caller)
        # No deadline: a stream lasts as long as its task.
        return Answer(
            self._events(frames, operation, caller, method, held), headers=dict(sse.HEADERS)
        )

    def refused(self, frames: Frames, error: A2AError, method: str) -> Answer:
        """A stream of one event: the refusal."""
        self._edge.log_refusal(frames.binding, method, error)
        return Answer(frames.error(error), headers=dict(sse.HEADERS))

    async def _events(
        self,
        frames: Frames,
        operation: SendMessage | SubscribeToTask,
        caller: Caller,
        method: str,
        held: Reservation | None,
    ) -> AsyncGenerator[bytes, None]:
        edge = self._edge

        def result(item: Task | TaskEvent) -> bytes:
            return frames.result(frames.codec.encode_stream_event(item))

        edge.metrics.stream_opened()
        try:
            with self._quota.hold(caller.owner):
                async with edge.executor.stream(operation, caller, held) as task_stream:
                    edge.metrics.request_answered(frames.binding, method, 0)
                    yield result(task_stream.task)
                    while True:
                        with trio.move_on_after(edge.settings.stream_keepalive) as idle:
                            event = await task_stream.next()
                        if idle.cancelled_caught:
                            yield sse.comment("keep-alive")  # proxies cut silent connections
                        elif event is None:
                            return
                        else:
                            piece, events = framed_together(task_stream, event, result)
                            edge.metrics.stream_event_sent(events)
                            yield piece
        except (A2AError, AdapterError) as error:
            if isinstance(error, SubscriberTooSlow):
                edge.metrics.stream_subscriber_dropped()
            refusal = wire_error(error)
            edge.log_refusal(frames.binding, method, refusal)
            yield frames.error(refusal)
        finally:
            edge.metrics.stream_closed()


def framed_together(
    task_stream: TaskStream, first: TaskEvent, result: Callable[[Task | TaskEvent], bytes]
) -> tuple[bytes, int]:
    """The event and every one that has come with it (a task's reply comes as its
    artifact and its final status in one step), framed as one piece: one write, not one
    each; a LastPiece when it holds the final event. And how many events it holds."""
    pieces = [result(first)]
    while (event := task_stream.next_come()) is not None:
        pieces.append(result(event))
    joined = b"".join(pieces)
    return LastPiece(joined) if task_stream.ended else joined, len(pieces)
