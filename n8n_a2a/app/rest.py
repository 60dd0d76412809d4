"""The HTTP+JSON binding's routes, under the public URL's path beside the JSON-RPC endpoint.

Thin as jsonrpc.py is: protocol/rest.py finds the route and makes its params, the codec
decodes them into the same Operation a JSON-RPC request makes, operations.py or streams.py
performs it. Only the framing differs: HTTP statuses and google.rpc.Status errors.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import partial

from ..core.errors import AdapterError, AtCapacity, AuthFailure, BodyTooLarge
from ..observability import traces
from ..protocol import rest, sse
from ..protocol.codec import Codec
from ..protocol.errors import A2AError, ErrorCode, NoRoute
from ..protocol.http import is_json
from ..protocol.model import JSONObject, SendMessage
from ..protocol.writing import dump, written
from . import admission
from .edge import HTTP_JSON, Edge, auth_status, retry_later, traced, wire_error, wire_status
from .exchange import Answer, Asked
from .negotiation import Negotiation
from .operations import perform
from .streams import EventStreams, answers_with_events


@dataclass(frozen=True, slots=True)
class RestFrames:
    """Each event the StreamResponse itself; an error an `error` event of the error body,
    which both SDKs' REST clients read so."""

    codec: Codec
    binding: str = HTTP_JSON

    def result(self, document: JSONObject) -> bytes:
        return sse.event(dump(document))

    def error(self, error: A2AError) -> bytes:
        return sse.event(rest.error_body(error, rest.error_status(error)), name="error")


class RestBinding:
    """GET, POST and DELETE of the binding's paths (spec §11), relative to the public URL:
    `path` is the request's, less the public URL's."""

    def __init__(self, edge: Edge, streams: EventStreams) -> None:
        self._edge = edge
        self._streams = streams

    async def serve(self, asked: Asked, path: str) -> Answer:
        negotiation = Negotiation.of(asked.headers, asked.args)
        if traces.active.enabled:
            answer = partial(self._answer, asked=asked, path=path)
            return await traced("HTTP+JSON", negotiation, answer)
        return await self._answer(negotiation, asked, path)

    async def _answer(self, negotiation: Negotiation, asked: Asked, path: str) -> Answer:
        edge = self._edge
        accept = asked.headers.get("Accept")
        try:
            # Before anything else, as on the JSON-RPC endpoint: a refused token is all.
            owner = await negotiation.owner(edge.verifier, edge.settings.require_token)
        except AuthFailure as failure:
            answer = refuse(edge, wire_error(failure), accept, "none", auth_status(failure))
            return edge.refused_caller(failure, answer)
        try:
            matched, ids = rest.route(asked.method, path)
        except NoRoute as error:
            return refuse(edge, error, accept)
        method = matched.method
        traces.active.named(method)
        codec, unsupported = rest.codec_for(negotiation.requested)
        refusal = unsupported or negotiation.malformed_token
        if refusal is not None:
            return refuse(edge, refusal, accept, method)
        caller = negotiation.caller(owner)
        held = admission.room(edge, asked, owner)
        body: bytes | bytearray = b""
        if matched.body:
            try:
                body = await asked.body(held)
            except BodyTooLarge as large:
                return refuse(edge, wire_error(large), accept, method, wire_status(large, 0))
            except AtCapacity as full:
                return refuse(edge, wire_error(full), accept, method)  # its body was dropped
            if body and not body.isspace() and not is_json(asked.content_type):
                wrong_type = A2AError(
                    ErrorCode.CONTENT_TYPE_NOT_SUPPORTED,
                    f"Content-Type must be {rest.JSON} or {rest.MEDIA_TYPE}, not "
                    f"{asked.content_type or 'none'!r}",
                )
                return refuse(edge, wrong_type, accept, method)
        try:
            operation = codec.decode(
                method, rest.params_of(matched, ids, asked.args, body), edge.settings.modes
            )
            del body  # done with: a file's bytes live on in the operation alone
            held = await admission.held_for(asked, operation)
            if answers_with_events(operation):
                frames = RestFrames(codec)
                return await self._streams.open(frames, operation, caller, method, held)
            room = admission.answer_room(edge, asked)
            result = await perform(edge, codec, operation, caller, held, room)
        except (A2AError, AdapterError) as error:
            return refuse(edge, wire_error(error), accept, method)
        edge.metrics.request_answered(HTTP_JSON, method, 0)
        answered = Answer(written(result), content_type=rest.answer_type(accept))
        answered.files_its_own = isinstance(operation, SendMessage)
        return answered


def refuse(
    edge: Edge, error: A2AError, accept: str | None, method: str = "other", status: int = 0
) -> Answer:
    """The binding's error answer, counted and logged, in the type `accept` asks for;
    `status` overrides the error's own (401 or 403 for a token refused; 413)."""
    edge.log_refusal(HTTP_JSON, method, error)
    status = status or rest.error_status(error)
    answer = Answer(rest.error_body(error, status), status, rest.answer_type(accept))
    if isinstance(error, NoRoute) and error.allowed:
        answer.headers["Allow"] = ", ".join(error.allowed)
    return retry_later(error, answer)
