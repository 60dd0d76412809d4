"""The Server-Sent Events answer of SendStreamingMessage and SubscribeToTask: the task, then
each of its events until the final one, kept alive through proxies, so many per caller."""

from __future__ import annotations

from collections.abc import AsyncIterator

import trio
from quart import Response

from ..identity import Caller
from ..protocol import jsonrpc, sse
from ..protocol.codec import Codec, Verb
from ..protocol.errors import A2AError
from ..protocol.model import SendMessage, SubscribeToTask, Task, TaskEvent
from ..streams import StreamQuota, SubscriberTooSlow
from .edge import Edge


class EventStreams:
    """Opens event streams, each caller's bounded by ADAPTER_MAX_STREAMS_PER_CALLER."""

    def __init__(self, edge: Edge) -> None:
        self._edge = edge
        self._quota = StreamQuota(edge.settings.max_streams_per_caller)

    async def open(
        self,
        request_id: jsonrpc.RequestId,
        codec: Codec,
        operation: SendMessage | SubscribeToTask,
        caller: Caller,
        method: str,
    ) -> Response:
        """The stream's response; A2AError for a v1.0 caller refused at once.

        A v1.0 caller refused at once (an unknown or finished task, a full server) gets a
        plain JSON-RPC error, as the official v1.0 servers answer and every v1.0 client
        reads with its type. A v0.3 caller gets the stream's one error event: a2a-sdk 0.3
        loses the code of anything but an event. What goes wrong later (a reader too slow,
        a race with the check) is the stream's last event in both versions."""
        if codec.refuses_streams_plainly:
            self._quota.check(caller.owner)
            await self._edge.executor.check_stream(operation, caller)
        events = self._events(request_id, codec, operation, caller, method)
        response = Response(events, headers=dict(sse.HEADERS))
        response.timeout = None  # a stream lasts as long as its task
        return response

    def refuses_as_event(self, codec: Codec, method: str) -> bool:
        """Whether a stream method's request refused before it opens (its params) is the
        stream's one error event: for v0.3, whose clients read a code only from an event."""
        verb = codec.methods.get(method)
        return verb in (Verb.SEND_STREAMING, Verb.SUBSCRIBE) and not codec.refuses_streams_plainly

    def refused(
        self, request_id: jsonrpc.RequestId, codec: Codec, error: A2AError, method: str
    ) -> Response:
        """A stream of one event: the refusal."""
        self._edge.log_refusal(method, error)
        event = sse.error_event(request_id, codec.encode_error(error))
        return Response(event, headers=dict(sse.HEADERS))

    async def _events(
        self,
        request_id: jsonrpc.RequestId,
        codec: Codec,
        operation: SendMessage | SubscribeToTask,
        caller: Caller,
        method: str,
    ) -> AsyncIterator[bytes]:
        edge = self._edge

        def result(item: Task | TaskEvent) -> bytes:
            return sse.event(jsonrpc.result_response(request_id, codec.encode_stream_event(item)))

        edge.metrics.stream_opened()
        try:
            with self._quota.hold(caller.owner):
                async with edge.executor.stream(operation, caller) as task_stream:
                    edge.metrics.request_answered(method, 0)
                    yield result(task_stream.task)
                    while True:
                        with trio.move_on_after(edge.settings.stream_keepalive) as idle:
                            event = await task_stream.next()
                        if idle.cancelled_caught:
                            yield sse.comment("keep-alive")  # proxies cut silent connections
                        elif event is None:
                            return
                        else:
                            edge.metrics.stream_event_sent()
                            yield result(event)
        except A2AError as error:
            if isinstance(error, SubscriberTooSlow):
                edge.metrics.stream_subscriber_dropped()
            edge.log_refusal(method, error)
            yield sse.error_event(request_id, codec.encode_error(error))
        finally:
            edge.metrics.stream_closed()
