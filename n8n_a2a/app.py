"""The HTTP edge: the Agent Card and the JSON-RPC endpoint, on quart-trio.

Thin on purpose: decode with protocol/, act with the executor, encode with protocol/.
"""

from __future__ import annotations

import hashlib
import json
import logging
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from email.utils import format_datetime, parsedate_to_datetime
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

import trio
from quart import Response, request
from quart_trio import QuartTrio
from werkzeug.exceptions import HTTPException, RequestEntityTooLarge

from .config import Settings
from .executor import Executor
from .identity import AuthFailure, AuthReason, Owner, token_owner
from .metrics import CONTENT_TYPE as METRICS_CONTENT_TYPE
from .metrics import Metrics
from .protocol import jsonrpc, sse
from .protocol.card import agent_card
from .protocol.codec import Codec
from .protocol.errors import A2AError, ErrorCode
from .protocol.http import bearer_token, is_json, trace_headers
from .protocol.model import (
    CancelTask,
    GetTask,
    ListTasks,
    Operation,
    SendMessage,
    SubscribeToTask,
    Task,
    TaskEvent,
)
from .protocol.push import (
    CreatePushConfig,
    DeletePushConfig,
    GetPushConfig,
    ListPushConfigs,
    PushOperation,
)
from .protocol.versions import V03, V1, codec_for, negotiate
from .push.service import PushNotifications
from .streams import StreamQuota, SubscriberTooSlow
from .webhook import Caller

if TYPE_CHECKING:  # the oidc extra; only there with ADAPTER_OIDC_ISSUER
    from .auth import OidcVerifier

logger = logging.getLogger(__name__)

CARD_PATH = "/.well-known/agent-card.json"
_VERSION_HEADER = "A2A-Version"


@dataclass(frozen=True, slots=True)
class _CachedCard:
    body: bytes
    etag: str

    @classmethod
    def of(cls, card: dict[str, object]) -> _CachedCard:
        body = json.dumps(card, ensure_ascii=False, separators=(",", ":")).encode()
        return cls(body, '"' + hashlib.sha256(body).hexdigest()[:32] + '"')


def create_app(
    settings: Settings,
    executor: Executor,
    metrics: Metrics,
    push: PushNotifications,
    verifier: OidcVerifier | None = None,
    store_problem: Callable[[], str | None] = lambda: None,
) -> QuartTrio:
    """The app; with a verifier (ADAPTER_OIDC_ISSUER) every request's token is verified.
    `store_problem` says why the task store is not ready (None: it is)."""
    app = QuartTrio(__name__)
    app.config["MAX_CONTENT_LENGTH"] = settings.max_body_bytes
    # The card only changes with a restart: its Last-Modified is the start time.
    started = datetime.now(UTC).replace(microsecond=0)
    cards = {
        legacy: _CachedCard.of(agent_card(settings, legacy_fields=legacy))
        for legacy in (True, False)
    }

    streams = StreamQuota(settings.max_streams_per_caller)

    # Clients look for the card under the URL they were given; behind an ingress that
    # is the public URL's path, so the card is there too.
    card_paths = {CARD_PATH, settings.rpc_path.rstrip("/") + CARD_PATH}

    async def card() -> Response:
        # A v1.0 client gets the card the v1.0 schema validates; everyone else also
        # gets the top-level `url` that v0.3 clients need.
        try:
            legacy = codec_for(_requested_version()) is not V1
        except A2AError:
            legacy = True
        cached = cards[legacy]
        headers = {
            "ETag": cached.etag,
            "Last-Modified": format_datetime(started, usegmt=True),
            "Cache-Control": "public, max-age=300",
            "Vary": _VERSION_HEADER,
        }
        if _not_modified(cached.etag, started):
            return Response(b"", status=304, headers=headers)
        return Response(cached.body, content_type="application/json", headers=headers)

    for path in sorted(card_paths):
        app.add_url_rule(path, endpoint=f"card {path}", view_func=card, methods=["GET"])

    @app.post(settings.rpc_path)
    async def rpc() -> Response:
        # Every answer, errors before the method included, takes the shapes of the version
        # asked for: none is v0.3 (spec §3.6.2).
        codec, unsupported = negotiate(_requested_version())
        malformed: A2AError | None = None
        try:
            token = bearer_token(request.headers.get("Authorization"))
        except A2AError as refused:
            token, malformed = None, refused
        try:
            # Before anything else (type, body, version): a request refused for its token is
            # judged on nothing but that; its body is read only for the id to echo.
            owner = await identify(token, malformed)
        except AuthFailure as failure:
            metrics.auth_failed(failure.reason)
            return refuse(await _readable_id(), codec, failure, status=401)
        body = await request.get_data(cache=False, as_text=False, parse_form_data=False)
        if not is_json(request.content_type):
            error = A2AError(
                ErrorCode.CONTENT_TYPE_NOT_SUPPORTED,
                f"Content-Type must be application/json, not {request.content_type or 'none'!r}",
            )
            return refuse(_salvage_id(body), codec, error)
        try:
            call = jsonrpc.parse_request(body)
        except jsonrpc.InvalidRequest as error:
            return refuse(error.request_id, codec, error)
        method = _method_label(call.method)
        refused_later = unsupported or malformed
        if refused_later is not None:
            return refuse(call.id, codec, refused_later, method)
        caller = Caller(
            token,
            trace_headers(request.headers.get("traceparent"), request.headers.get("tracestate")),
            owner,
        )
        try:
            operation = codec.decode(call.method, call.params)
            if isinstance(operation, SubscribeToTask) or (
                isinstance(operation, SendMessage) and operation.streaming
            ):
                return await stream(call.id, codec, operation, caller, method)
            result = await _perform(codec, operation, caller)
        except A2AError as error:
            return refuse(call.id, codec, error, method)
        metrics.request_answered(method, 0)
        return _json(jsonrpc.result_response(call.id, result))

    async def identify(token: str | None, malformed: A2AError | None) -> Owner:
        """Whose tasks the caller may touch; AuthFailure for a caller to refuse (HTTP 401)."""
        if malformed is not None and (verifier is not None or settings.require_token):
            raise AuthFailure(AuthReason.MALFORMED, malformed.message)
        if verifier is not None:
            return await verifier.verify(token)
        if settings.require_token and token is None:
            raise AuthFailure(AuthReason.NO_TOKEN)
        return token_owner(token)

    def refuse(
        request_id: jsonrpc.RequestId,
        codec: Codec,
        error: A2AError,
        method: str = "none",
        status: int = 200,
    ) -> Response:
        log_refusal(method, error)
        response = _error(request_id, codec, error, status)
        if isinstance(error, AuthFailure):
            response.headers["WWW-Authenticate"] = error.challenge
        return response

    async def stream(
        request_id: jsonrpc.RequestId,
        codec: Codec,
        operation: SendMessage | SubscribeToTask,
        caller: Caller,
        method: str,
    ) -> Response:
        """Server-Sent Events: the task, then each of its events, until the final one.

        A v1.0 caller refused at once (an unknown or finished task, a full server) gets a
        plain JSON-RPC error, as the official v1.0 servers answer and every v1.0 client
        reads with its type. A v0.3 caller gets the stream's one error event: a2a-sdk 0.3
        loses the code of anything but an event. What goes wrong later (a reader too slow,
        a race with the check) is the stream's last event in both versions."""
        if codec is V1:
            try:
                streams.check(caller.owner)
                await executor.check_stream(operation, caller)
            except A2AError as error:
                return refuse(request_id, codec, error, method)

        def result(item: Task | TaskEvent) -> bytes:
            return sse.event(jsonrpc.result_response(request_id, codec.encode_stream_event(item)))

        async def events() -> AsyncIterator[bytes]:
            metrics.stream_opened()
            try:
                with streams.hold(caller.owner):
                    async with executor.stream(operation, caller) as task_stream:
                        metrics.request_answered(method, 0)
                        yield result(task_stream.task)
                        while True:
                            with trio.move_on_after(settings.stream_keepalive) as idle:
                                event = await task_stream.next()
                            if idle.cancelled_caught:
                                yield sse.comment("keep-alive")  # proxies cut silent connections
                            elif event is None:
                                return
                            else:
                                metrics.stream_event_sent()
                                yield result(event)
            except A2AError as error:
                if isinstance(error, SubscriberTooSlow):
                    metrics.stream_subscriber_dropped()
                log_refusal(method, error)
                yield sse.error_event(request_id, codec.encode_error(error))
            finally:
                metrics.stream_closed()

        response = Response(events(), headers=dict(sse.HEADERS))
        response.timeout = None  # a stream lasts as long as its task
        return response

    def log_refusal(method: str, error: A2AError) -> None:
        metrics.request_answered(method, error.code)
        fields = {"event": "rpc_error", "method": method, "code": int(error.code)}
        logger.info("JSON-RPC error %d: %s", error.code, error.message, extra={"fields": fields})

    async def _perform(codec: Codec, operation: Operation, caller: Caller) -> object:
        match operation:
            case SendMessage():
                return codec.encode_send_result(await executor.send(operation, caller))
            case GetTask(task_id, history_length):
                return codec.encode_task(await executor.get(task_id, caller, history_length))
            case CancelTask(task_id):
                return codec.encode_task(await executor.cancel(task_id, caller))
            case ListTasks():
                return codec.encode_page(await executor.list(operation, caller))
            case CreatePushConfig() | GetPushConfig() | ListPushConfigs() | DeletePushConfig():
                # A task the caller may not see is unknown here too, as GetTask answers.
                await executor.get(operation.task_id, caller)
                return await _perform_push(codec, operation, caller)
        raise AssertionError(f"not a JSON operation: {operation!r}")  # streams go elsewhere

    async def _perform_push(codec: Codec, operation: PushOperation, caller: Caller) -> object:
        match operation:
            case CreatePushConfig():
                return codec.encode_push_config(await push.create(operation, caller.owner))
            case GetPushConfig():
                return codec.encode_push_config(await push.get(operation))
            case ListPushConfigs():
                return codec.encode_push_page(await push.list(operation))
            case DeletePushConfig():
                await push.delete(operation)
                return codec.encode_push_deleted()

    @app.get("/healthz")
    async def healthz() -> Response:
        """Liveness: the process serves. Cheap, and never calls the workflow."""
        return _json(b'{"status":"ok"}')

    @app.get("/readyz")
    async def readyz() -> Response:
        """Readiness: accepting sends, the task store ready, the OIDC keys loaded and, when
        asked for, the webhook's host takes a TCP connection (the workflow itself is never
        called)."""
        problem = "shutting down" if not executor.accepting else store_problem()
        if problem is None and verifier is not None and not verifier.ready:
            problem = "the OIDC issuer's keys are not loaded yet (ADAPTER_OIDC_ISSUER)"
        if problem is None and settings.ready_check_webhook:
            problem = await _webhook_host_problem(settings.webhook_url)
        if problem is not None:
            document = {"status": "not ready", "reason": problem}
            return _json(json.dumps(document).encode(), status=503)
        return _json(b'{"status":"ready"}')

    @app.get("/metrics")
    async def metrics_text() -> Response:
        return Response(metrics.render(), content_type=METRICS_CONTENT_TYPE)

    @app.errorhandler(HTTPException)
    async def http_error(error: HTTPException) -> Response:
        if error.code == 413:
            too_large = A2AError(
                ErrorCode.INVALID_REQUEST,
                f"The request body is larger than {settings.max_body_bytes} bytes "
                "(ADAPTER_MAX_BODY_BYTES)",
            )
            return refuse(None, negotiate(_requested_version())[0], too_large, status=413)
        return _json(
            json.dumps({"error": {"code": error.code, "message": error.description}}).encode(),
            status=error.code or 500,
        )

    @app.errorhandler(Exception)
    async def internal_error(error: Exception) -> Response:
        # The traceback goes to the log; the caller gets a JSON-RPC error without it.
        logger.exception("unhandled error on %s %s", request.method, request.path)
        return _error(None, V1, A2AError(ErrorCode.INTERNAL_ERROR, "Internal error"))

    return app


_KNOWN_METHODS = frozenset(V1.methods) | frozenset(V03.methods)


def _method_label(method: str) -> str:
    # A metric label must come from a bounded set, whatever a client sends.
    return method if method in _KNOWN_METHODS else "other"


def _requested_version() -> str | None:
    return request.headers.get(_VERSION_HEADER) or request.args.get(_VERSION_HEADER)


_READY_CHECK_SECONDS = 2.0


async def _webhook_host_problem(webhook_url: str) -> str | None:
    address = urlsplit(webhook_url)
    port = address.port or (443 if address.scheme == "https" else 80)
    with trio.move_on_after(_READY_CHECK_SECONDS):
        try:
            stream = await trio.open_tcp_stream(address.hostname or "", port)
        except OSError as error:
            return f"the webhook's host does not take connections: {error}"
        await stream.aclose()
        return None
    return f"the webhook's host did not answer within {_READY_CHECK_SECONDS:g} s"


def _not_modified(etag: str, last_modified: datetime) -> bool:
    if_none_match = request.headers.get("If-None-Match")
    if if_none_match is not None:
        tags = {tag.strip().removeprefix("W/") for tag in if_none_match.split(",")}
        return etag in tags or "*" in tags
    if_modified_since = request.headers.get("If-Modified-Since")
    if if_modified_since is None:
        return False
    try:
        return parsedate_to_datetime(if_modified_since) >= last_modified
    except (TypeError, ValueError):
        return False


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


def _error(
    request_id: jsonrpc.RequestId, codec: Codec, error: A2AError, status: int = 200
) -> Response:
    # JSON-RPC errors travel with HTTP 200: the SDK clients turn any other status into a
    # transport error and lose the A2A error code.
    return _json(jsonrpc.error_response(request_id, codec.encode_error(error)), status=status)


def _json(body: bytes, status: int = 200) -> Response:
    return Response(body, status=status, content_type="application/json")
