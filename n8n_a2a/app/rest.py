"""The HTTP+JSON binding's routes, under the public URL's path beside the JSON-RPC endpoint.

Thin as jsonrpc.py is: protocol/rest.py finds the route and makes its params, the codec
decodes them into the same Operation a JSON-RPC request makes, operations.py or streams.py
performs it. Only the framing differs: HTTP statuses and google.rpc.Status errors.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import partial

from quart import Response, request
from quart_trio import QuartTrio

from ..core.errors import AdapterError, AuthFailure
from ..observability import traces
from ..protocol import rest, sse
from ..protocol.codec import Codec
from ..protocol.errors import A2AError, ErrorCode
from ..protocol.http import is_json
from ..protocol.jsonrpc import dump
from ..protocol.model import JSONObject
from . import admission
from .edge import HTTP_JSON, Edge, auth_status, retry_later, traced, wire_error
from .negotiation import Negotiation, current
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


_ENDPOINT = "rest"


class RestBinding:
    """GET, POST and DELETE of the binding's paths (spec §11), relative to the public URL."""

    def __init__(self, edge: Edge, streams: EventStreams) -> None:
        self._edge = edge
        self._streams = streams

    def add_to(self, app: QuartTrio) -> None:
        # Under the public URL's path, where the JSON-RPC endpoint is. The card, health and
        # metrics paths are static rules, which routing prefers.
        app.add_url_rule(
            self._edge.settings.rpc_path.rstrip("/") + "/<path:path>",
            endpoint=_ENDPOINT,
            view_func=self.serve,
            methods=["GET", "POST", "DELETE"],
        )

    async def serve(self, path: str) -> Response:
        negotiation = current()
        if traces.active.enabled:
            return await traced("HTTP+JSON", negotiation, partial(self._answer, path=path))
        return await self._answer(negotiation, path)

    async def _answer(self, negotiation: Negotiation, path: str) -> Response:
        edge = self._edge
        try:
            # Before anything else, as on the JSON-RPC endpoint: a refused token is all.
            owner = await negotiation.owner(edge.verifier, edge.settings.require_token)
        except AuthFailure as failure:
            answer = refuse(edge, wire_error(failure), "none", auth_status(failure))
            return edge.refused_caller(failure, answer)
        try:
            matched, ids = rest.route(request.method, "/" + path)
        except rest.NoRoute as error:
            return refuse(edge, error)
        method = matched.method
        traces.active.named(method)
        codec, unsupported = rest.codec_for(negotiation.requested)
        refusal = unsupported or negotiation.malformed_token
        if refusal is not None:
            return refuse(edge, refusal, method)
        caller = negotiation.caller(owner)
        if (full := admission.refusal()) is not None:
            return refuse(edge, wire_error(full), method)  # its body was dropped unread
        body = b""
        if matched.body:
            body = await request.get_data(cache=False, as_text=False, parse_form_data=False)
            if body.strip() and not is_json(request.content_type):
                wrong_type = A2AError(
                    ErrorCode.CONTENT_TYPE_NOT_SUPPORTED,
                    f"Content-Type must be {rest.JSON} or {rest.MEDIA_TYPE}, not "
                    f"{request.content_type or 'none'!r}",
                )
                return refuse(edge, wrong_type, method)
        try:
            operation = codec.decode(
                method, rest.params_of(matched, ids, request.args, body), edge.settings.modes
            )
            del body  # done with: a file's bytes live on in the operation alone
            held = await admission.held_for(operation)
            if answers_with_events(operation):
                frames = RestFrames(codec)
                return await self._streams.open(frames, operation, caller, method, held)
            result = await perform(edge, codec, operation, caller, held, admission.delivery())
        except (A2AError, AdapterError) as error:
            return refuse(edge, wire_error(error), method)
        edge.metrics.request_answered(HTTP_JSON, method, 0)
        return Response(dump(result), content_type=rest.answer_type(request.headers.get("Accept")))


def is_rest_request() -> bool:
    """Whether the request being answered is one of the binding's (for errors raised before
    or outside its route: a body too large, an internal error)."""
    return request.url_rule is not None and request.url_rule.endpoint == _ENDPOINT


def refuse(edge: Edge, error: A2AError, method: str = "other", status: int = 0) -> Response:
    """The binding's error answer, counted and logged; `status` overrides the error's own
    (401 or 403 for a token refused; 413)."""
    edge.log_refusal(HTTP_JSON, method, error)
    status = status or rest.error_status(error)
    response = Response(
        rest.error_body(error, status),
        status=status,
        content_type=rest.answer_type(request.headers.get("Accept")),
    )
    if isinstance(error, rest.NoRoute) and error.allowed:
        response.headers["Allow"] = ", ".join(error.allowed)
    return retry_later(error, response)
