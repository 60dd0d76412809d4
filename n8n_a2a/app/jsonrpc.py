"""The JSON-RPC binding's endpoint: decode, perform, encode, and every refusal on the way.

Thin on purpose: decode with protocol/, act with operations.py or streams.py, encode with
protocol/. A first contact that is not JSON-RPC at all is told what to send instead.
"""

from __future__ import annotations

import json
import logging
from functools import partial

from ..auth.caller import Caller
from ..config import Settings
from ..core.errors import AdapterError, AtCapacity, AuthFailure, BodyTooLarge
from ..observability import traces
from ..protocol import jsonrpc
from ..protocol.codec import Codec
from ..protocol.errors import A2AError, ErrorCode, InvalidRequest, RequestId
from ..protocol.http import is_json
from ..protocol.model import Operation, SendMessage
from ..protocol.versions import METHODS
from . import admission
from .card import card_url
from .edge import JSONRPC, Edge, auth_status, retry_later, traced, wire_error, wire_status
from .exchange import Answer, Asked, json_answer
from .negotiation import Negotiation
from .operations import perform
from .streams import EventStreams, JsonRpcFrames, answers_with_events

logger = logging.getLogger(__name__)

#: The most of a refused caller's body read for its id; the rest is read and dropped.
REFUSED_BODY_BYTES = 64 * 1024
_EXAMPLE = '{"jsonrpc": "2.0", "id": 1, "method": "SendMessage", "params": {"message": ...}}'


class JsonRpcEndpoint:
    """POST of the JSON-RPC endpoint (the public URL's path)."""

    def __init__(self, edge: Edge, streams: EventStreams) -> None:
        self._edge = edge
        self._streams = streams

    async def rpc(self, asked: Asked) -> Answer:
        negotiation = Negotiation.of(asked.headers, asked.args)
        if traces.active.enabled:
            return await traced("JSONRPC", negotiation, partial(self._answer, asked=asked))
        return await self._answer(negotiation, asked)

    async def _answer(self, negotiation: Negotiation, asked: Asked) -> Answer:
        edge = self._edge
        codec = negotiation.codec
        try:
            # Before anything else (type, body, version): a request refused for its token is
            # judged on nothing but that; its body is read only for the id to echo.
            owner = await negotiation.owner(edge.verifier, edge.settings.require_token)
        except AuthFailure as failure:
            request_id = await _readable_id(asked)
            status = auth_status(failure)
            refused = refuse(edge, request_id, codec, wire_error(failure), status=status)
            return edge.refused_caller(failure, refused)
        try:
            body = await asked.body(admission.room(edge, asked, owner))
        except BodyTooLarge as large:
            return refuse(edge, None, codec, wire_error(large), status=wire_status(large, 200))
        except AtCapacity as full:
            # The memory budget had no room for the body: it was dropped, id and all.
            return refuse(edge, None, codec, wire_error(full))
        if not is_json(asked.content_type):
            error = A2AError(
                ErrorCode.CONTENT_TYPE_NOT_SUPPORTED,
                f"Content-Type must be application/json, not {asked.content_type or 'none'!r}",
            )
            return refuse(edge, _salvage_id(body), codec, error)
        try:
            call = jsonrpc.parse_request(body)
        except InvalidRequest as error:
            return refuse(edge, error.request_id, codec, _introduced(error, body, edge.settings))
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
        return await self._performed(asked, codec, operation, request_id, caller, method)

    async def _performed(
        self,
        asked: Asked,
        codec: Codec,
        operation: Operation,
        request_id: RequestId,
        caller: Caller,
        method: str,
    ) -> Answer:
        edge = self._edge
        try:
            held = await admission.held_for(asked, operation)
            if answers_with_events(operation):
                frames = JsonRpcFrames(request_id, codec)
                return await self._streams.open(frames, operation, caller, method, held)
            answer = admission.answer_room(edge, asked)
            result = await perform(edge, codec, operation, caller, held, answer)
        except (A2AError, AdapterError) as error:
            return refuse(edge, request_id, codec, wire_error(error), method)
        except Exception:
            # The traceback goes to the log; the caller gets the error without it, with the
            # request's id, as every other answer echoes it.
            logger.exception("unhandled error in %s", method)
            return error_response(request_id, codec, A2AError.internal())
        edge.metrics.request_answered(JSONRPC, method, 0)
        answered = json_answer(jsonrpc.result_response(request_id, result))
        answered.files_its_own = isinstance(operation, SendMessage)
        return answered


def method_label(method: str) -> str:
    """The method as a metric label: from a bounded set, whatever a client sends."""
    return method if method in METHODS else "other"


def refuse(
    edge: Edge,
    request_id: RequestId,
    codec: Codec,
    error: A2AError,
    method: str = "none",
    status: int = 200,
) -> Answer:
    """The JSON-RPC error answer, counted and logged."""
    edge.log_refusal(JSONRPC, method, error)
    return error_response(request_id, codec, error, status)


def error_response(
    request_id: RequestId, codec: Codec, error: A2AError, status: int = 200
) -> Answer:
    # JSON-RPC errors travel with HTTP 200: the SDK clients turn any other status into a
    # transport error and lose the A2A error code.
    return retry_later(
        error,
        json_answer(jsonrpc.error_response(request_id, codec.encode_error(error)), status=status),
    )


def introduction(settings: Settings) -> Answer:
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
    answer = json_answer(json.dumps(document).encode(), status=405)
    answer.headers["Allow"] = "POST"
    return answer


def _introduced(error: InvalidRequest, body: bytes | bytearray, settings: Settings) -> A2AError:
    """The envelope's refusal; for a JSON object that is no JSON-RPC request at all (no
    `jsonrpc` or no `method`), with what to send instead."""
    if error.code is not ErrorCode.INVALID_REQUEST or not _is_not_json_rpc(body):
        return error
    return InvalidRequest(
        error.code,
        f"{error.message}. This is an A2A JSON-RPC 2.0 endpoint: POST {_EXAMPLE} with the "
        f"header A2A-Version: 1.0; the Agent Card is at {card_url(settings)}",
        error.request_id,
    )


def _is_not_json_rpc(body: bytes | bytearray) -> bool:
    # Read again only on this refusal's path: parse_request read it as JSON already.
    try:
        document = json.loads(body)
    except (ValueError, RecursionError):
        return False
    return isinstance(document, dict) and not {"jsonrpc", "method"} <= document.keys()


async def _readable_id(asked: Asked) -> RequestId:
    """The request's id for an answer that comes before the body is judged (null when its
    body's opening is not JSON-RPC): a refused caller's body is read no further than
    that, and charged to nobody."""
    return _salvage_id(await asked.opening(REFUSED_BODY_BYTES))


def _salvage_id(body: bytes | bytearray) -> RequestId:
    """The request's id, when a body sent with the wrong Content-Type is JSON-RPC anyway."""
    try:
        return jsonrpc.parse_request(body).id
    except InvalidRequest as error:
        return error.request_id
