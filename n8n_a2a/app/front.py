"""The app hypercorn serves: the A2A routes on plain ASGI, the rest on quart-trio.

The A2A routes (the Agent Card, the JSON-RPC endpoint, the HTTP+JSON binding) carry the
adapter's traffic and are answered here from the ASGI scope (exchange.py): through quart
a blocking send cost about a tenth more instructions (its request and response objects,
contexts, signals and routing), and importing quart, flask and werkzeug took most of the
start. The operator's app (operator.py: health, metrics, the RFC 9728 metadata, and the
JSON 404 of a path nobody serves) is quart's, built at its first request, its import run
in a worker thread so that the A2A routes go on meanwhile.
"""

from __future__ import annotations

import gc
import logging
import re
from collections.abc import Awaitable, Callable
from functools import partial
from typing import TYPE_CHECKING

import trio

from ..budget import MemoryBudget
from ..config import Settings
from ..executor import Executor
from ..observability.metrics import Metrics
from ..protocol.errors import A2AError
from ..protocol.versions import V1
from ..push.service import PushNotifications
from .admission import answer_room
from .card import CardRoute, card_paths
from .edge import HEALTH_PATHS, Edge, protected_resource
from .exchange import Answer, Asked, not_allowed, send_answer
from .jsonrpc import JsonRpcEndpoint, error_response, introduction
from .streams import EventStreams

if TYPE_CHECKING:
    # Its types only: importing hypercorn.typing imports h2's events (http/unused.py).
    from hypercorn.typing import ASGIFramework, ASGIReceiveCallable, ASGISendCallable, Scope

    from ..auth.verifier import OidcVerifier  # the oidc extra; only with ADAPTER_OIDC_ISSUER
    from .rest import RestBinding  # imported at the binding's first request

logger = logging.getLogger(__name__)

#: An A2A route: the request, answered.
Route = Callable[[Asked], Awaitable[Answer]]

_SLASHES = re.compile("/{2,}")
#: The methods of the HTTP+JSON binding's paths; any other is a plain 405.
REST_METHODS = ("DELETE", "GET", "POST")


def merged_slashes(path: str) -> str:
    """The path a route is found by: each run of slashes one slash, as quart's (werkzeug's)
    routing merged them. A client that joins a public URL ending in "/" with
    "/message:send" asks for "//message:send" (the A2A TCK does)."""
    return _SLASHES.sub("/", path) if "//" in path else path


class Front:
    """Routes each request: the A2A routes here, anything else to the operator's app."""

    def __init__(self, edge: Edge) -> None:
        settings = edge.settings
        self._edge = edge
        # One stream quota per caller, whichever binding opens its streams.
        self._streams = EventStreams(edge)
        self._card = CardRoute(settings, edge.verifier)
        self._rpc = JsonRpcEndpoint(edge, self._streams)
        self._rest: RestBinding | None = None  # made at its first request: _rest_binding
        self._card_paths = frozenset(card_paths(settings))
        self._rpc_path = settings.rpc_path
        # The binding's paths are under the public URL's, where the JSON-RPC endpoint is;
        # the card's and the operator's are not the binding's, whatever that path.
        self._rest_root = settings.rpc_path.rstrip("/")
        resource_paths = () if edge.resource is None else edge.resource.metadata_paths
        self._operator_paths = frozenset((*HEALTH_PATHS, *resource_paths))
        self._operator = OperatorApp(edge)

    async def __call__(
        self, scope: Scope, receive: ASGIReceiveCallable, send: ASGISendCallable
    ) -> None:
        if scope["type"] == "lifespan":
            await _lifespan(receive, send)
            return
        if scope["type"] != "http":
            await self._operator(scope, receive, send)  # a WebSocket's: nobody serves it
            return
        path = merged_slashes(scope["path"])
        route = self._route(scope["method"], path)
        if route is None:
            await self._operator(scope, receive, send)
            return
        asked = Asked(scope, receive, self._edge.settings.max_body_bytes)
        try:
            try:
                answer = await route(asked)
            except Exception:
                # The traceback goes to the log; the caller gets its binding's error without it.
                logger.exception("unhandled error on %s %s", asked.method, asked.path)
                answer = self._internal_error(path, asked)
            await send_answer(answer, send, answer_room(self._edge, asked))
        finally:
            asked.settle()

    def _route(self, method: str, path: str) -> Route | None:
        """The A2A route of a request, or None for the operator's app."""
        if path in self._card_paths:
            return self._card.card if method == "GET" else partial(_refused, allowed="GET")
        if path == self._rpc_path:
            if method == "POST":
                return self._rpc.rpc
            return self._introduce if method == "GET" else partial(_refused, allowed="POST")
        if path in self._operator_paths or not path.startswith(self._rest_root + "/"):
            return None
        if method not in REST_METHODS:
            return partial(_refused, allowed=", ".join(REST_METHODS))
        return partial(self._rest_binding().serve, path=path.removeprefix(self._rest_root))

    def _rest_binding(self) -> RestBinding:
        """The HTTP+JSON binding, imported at its first request: its routes' table and
        codecs (app/rest.py, protocol/rest.py) are a cost to the start, and to a deployment
        whose callers all speak JSON-RPC, for nothing."""
        if self._rest is None:
            from .rest import RestBinding

            self._rest = RestBinding(self._edge, self._streams)
        return self._rest

    async def _introduce(self, asked: Asked) -> Answer:
        """A GET of the endpoint (a browser, a first curl): 405, and what to POST."""
        return introduction(self._edge.settings)

    def _internal_error(self, path: str, asked: Asked) -> Answer:
        internal = A2AError.internal()
        if path != self._rpc_path and path not in self._card_paths:
            from .rest import refuse  # a binding's request: the binding is imported

            return refuse(self._edge, internal, asked.headers.get("Accept"))
        return error_response(None, V1, internal)


async def _refused(asked: Asked, allowed: str) -> Answer:
    return not_allowed(allowed)


async def _lifespan(receive: ASGIReceiveCallable, send: ASGISendCallable) -> None:
    """The server's start and stop: nothing of the app's to do at either (the executor, the
    stores and the webhook client are the server's, opened before it serves)."""
    while True:
        event = await receive()
        if event["type"] == "lifespan.startup":
            await send({"type": "lifespan.startup.complete"})
        elif event["type"] == "lifespan.shutdown":
            await send({"type": "lifespan.shutdown.complete"})
            return


class OperatorApp:
    """The operator's app, built at its first request. The import runs in a worker thread
    (quart, flask and werkzeug take a few hundred milliseconds): the A2A routes are served
    meanwhile; the requests for this app wait for it. What it made is frozen once built."""

    def __init__(self, edge: Edge) -> None:
        self._edge = edge
        self._app: ASGIFramework | None = None
        self._built: trio.Event | None = None

    async def __call__(
        self, scope: Scope, receive: ASGIReceiveCallable, send: ASGISendCallable
    ) -> None:
        app = await self._app_built()
        await app(scope, receive, send)

    async def _app_built(self) -> ASGIFramework:
        if self._app is not None:
            return self._app
        if self._built is None:
            self._built = trio.Event()
            try:
                make = await trio.to_thread.run_sync(_operator_factory)
                self._app = make(self._edge)
                # What its import made (quart, flask, werkzeug, asyncio, and what the start
                # left to their first use: ssl, hashlib) lives as long as the process, as
                # what the start made: frozen as the command froze that (__main__.py), no
                # pass of the collector scans it. Left young, it had the next young pass come
                # some 7,000 allocations sooner, over 50,000 objects (17 M instructions).
                gc.freeze()
            finally:
                self._built.set()
        await self._built.wait()
        if self._app is None:
            raise RuntimeError("the operator's app could not be built: see the first error")
        return self._app


def _operator_factory() -> Callable[[Edge], ASGIFramework]:
    from .operator import operator_app

    return operator_app


def create_app(
    settings: Settings,
    executor: Executor,
    metrics: Metrics,
    push: PushNotifications,
    verifier: OidcVerifier | None = None,
    store_problem: Callable[[], str | None] = lambda: None,
    budget: MemoryBudget | None = None,
) -> Front:
    """The app; with a verifier (ADAPTER_OIDC_ISSUER) every request's token is verified.
    `store_problem` says why the task store is not ready (None: it is); `budget`:
    ADAPTER_MEMORY_BUDGET, which each request's body and answer are charged to."""
    resource = protected_resource(settings)
    edge = Edge(settings, executor, metrics, push, verifier, store_problem, resource, budget)
    return Front(edge)
