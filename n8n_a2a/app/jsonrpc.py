"""The JSON-RPC binding's endpoint: decode, perform, encode, and every refusal on the way.

Thin on purpose: decode with protocol/, act with operations.py or streams.py, encode with
protocol/. A first contact that is not JSON-RPC at all is told what to send instead.
"""

from __future__ import annotations

import json

from quart import Response, g, request
from quart_trio import QuartTrio
from werkzeug.exceptions import RequestEntityTooLarge

from ..config import Settings
from ..core.errors import AdapterError, AuthFailure
from ..observability import traces
from ..protocol import jsonrpc
from ..protocol.codec import Codec
from ..protocol.errors import A2AError, ErrorCode
from ..protocol.http import is_json
from ..protocol.versions import METHODS
from . import admission
from .card import card_url
from .edge import JSONRPC, Edge, auth_status, json_response, retry_later, traced, wire_error
from .negotiation import Negotiation, current
from .operations import perform
from .streams import EventStreams, JsonRpcFrames, answers_with_events

_EXAMPLE = '{"jsonrpc": "2.0", "id": 1, "method": "SendMessage", "params": {"message": ...}}'


class JsonRpcEndpoint:
    """POST of the JSON-RPC endpoint (the public URL's path)."""

    def __init__(self, edge: Edge, streams: EventStreams) -> None:
        self._edge = edge
        self._streams = streams

    def add_to(self, app: QuartTrio) -> None:
        app.add_url_rule(
            self._edge.settings.rpc_path, endpoint="rpc", view_func=self.rpc, methods=["POST"]
        )

    async def rpc(self) -> Response:
        negotiation = current()
        if traces.active.enabled:
            return await traced("JSONRPC", negotiation, self._answer)
        return await self._answer(negotiation)

    async def _answer(self, negotiation: Negotiation) -> Response:
        edge = self._edge
        codec = negotiation.codec
        try:
            # Before anything else (type, body, version): a request refused for its token is
            # judged on nothing but that; its body is read only for the id to echo.
            owner = await negotiation.owner(edge.verifier, edge.settings.require_token)
        except AuthFailure as failure:
            request_id = await _readable_id()
            status = auth_status(failure)
            refused = refuse(edge, request_id, codec, wire_error(failure), status=status)
            return edge.refused_caller(failure, refused)
        if (full := admission.refusal()) is not None:
            # The memory budget had no room for the body: it was dropped unread, id and all.
            return refuse(edge, None, codec, wire_error(full))
        body = await request.get_data(cache=False, as_text=False, parse_form_data=False)
        if not is_json(request.content_type):
            error = A2AError(
                ErrorCode.CONTENT_TYPE_NOT_SUPPORTED,
                f"Content-Type must be application/json, not {request.content_type or 'none'!r}",
            )
            return refuse(edge, _salvage_id(body), codec, error)
        try:
            call = jsonrpc.parse_request(body)
        except jsonrpc.InvalidRequest as error:
            return refuse(edge, error.request_id, codec, _introduced(error, body, edge.settings))
        g.jsonrpc_id = call.id  # for an answer to what nobody expected (errors.py)
        method = method_label(call.method)
        traces.active.named(method)
        if negotiation.refused_later is not None:
            return refuse(edge, call.id, codec, negotiation.refused_later, method)
        caller = negotiation.caller(owner)
        try:
            operation = codec.decode(call.method, call.params, edge.settings.modes)
        except A2AError as error:
            if codec.refuses_as_event(call.method):
                return self._streams.refused(JsonRpcFrames(call.id, codec), error, method)
            return refuse(edge, call.id, codec, error, method)
        # The body and its parsed params are done with: a file's bytes live on in the
        # operation alone while the send waits for its task to end.
        request_id = call.id
        del body, call
        try:
            held = await admission.held_for(operation)
            if answers_with_events(operation):
                frames = JsonRpcFrames(request_id, codec)
                return await self._streams.open(frames, operation, caller, method, held)
            result = await perform(edge, codec, operation, caller, held, admission.delivery())
        except (A2AError, AdapterError) as error:
            return refuse(edge, request_id, codec, wire_error(error), method)
        edge.metrics.request_answered(JSONRPC, method, 0)
        return json_response(jsonrpc.result_response(request_id, result))


def read_id() -> jsonrpc.RequestId:
    """The id of the request being answered, once its envelope was read (None before)."""
    found: jsonrpc.RequestId = g.get("jsonrpc_id")
    return found


def method_label(method: str) -> str:
    """The method as a metric label: from a bounded set, whatever a client sends."""
    return method if method in METHODS else "other"


def refuse(
    edge: Edge,
    request_id: jsonrpc.RequestId,
    codec: Codec,
    error: A2AError,
    method: str = "none",
    status: int = 200,
) -> Response:
    """The JSON-RPC error answer, counted and logged."""
    edge.log_refusal(JSONRPC, method, error)
    return error_response(request_id, codec, error, status)


def error_response(
    request_id: jsonrpc.RequestId, codec: Codec, error: A2AError, status: int = 200
) -> Response:
    # JSON-RPC errors travel with HTTP 200: the SDK clients turn any other status into a
    # transport error and lose the A2A error code.
    return retry_later(
        error,
        json_response(jsonrpc.error_response(request_id, codec.encode_error(error)), status=status),
    )


def introduction(settings: Settings) -> Response:
    """The answer to a GET of the endpoint (a browser, a first curl): 405, and what to POST."""
    message = (
        "This is an A2A JSON-RPC 2.0 endpoint: POST a JSON-RPC request to it, with the "
        "headers Content-Type: application/json and A2A-Version: 1.0"
    )
    example = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "SendMessage",
        "params": {
            "message": {
                "messageId": "1",
                "role": "ROLE_USER",
                "parts": [{"text": next(iter(settings.skill_examples), "Hello")}],
            }
        },
    }
    document = {
        "error": {"code": 405, "message": message},
        "example": example,
        "agentCard": card_url(settings),
    }
    response = json_response(json.dumps(document).encode(), status=405)
    response.headers["Allow"] = "POST"
    return response


def _introduced(error: jsonrpc.InvalidRequest, body: bytes, settings: Settings) -> A2AError:
    """The envelope's refusal; for a JSON object that is no JSON-RPC request at all (no
    `jsonrpc` or no `method`), with what to send instead."""
    if error.code is not ErrorCode.INVALID_REQUEST or not _is_not_json_rpc(body):
        return error
    return jsonrpc.InvalidRequest(
        error.code,
        f"{error.message}. This is an A2A JSON-RPC 2.0 endpoint: POST {_EXAMPLE} with the "
        f"header A2A-Version: 1.0; the Agent Card is at {card_url(settings)}",
        error.request_id,
    )


def _is_not_json_rpc(body: bytes) -> bool:
    # Read again only on this refusal's path: parse_request read it as JSON already.
    try:
        document = json.loads(body)
    except (ValueError, RecursionError):
        return False
    return isinstance(document, dict) and not {"jsonrpc", "method"} <= document.keys()


async def _readable_id() -> jsonrpc.RequestId:
    """The request's id for an answer that comes before the body is judged (null when the
    body is not JSON-RPC or is too large to read)."""
    try:
        body = await request.get_data(cache=False, as_text=False, parse_form_data=False)
    except RequestEntityTooLarge:
        return None
    return _salvage_id(body)


def _salvage_id(body: bytes) -> jsonrpc.RequestId:
    """The request's id, when a body sent with the wrong Content-Type is JSON-RPC anyway."""
    try:
        return jsonrpc.parse_request(body).id
    except jsonrpc.InvalidRequest as error:
        return error.request_id
