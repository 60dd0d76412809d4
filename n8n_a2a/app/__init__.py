"""The HTTP edge on quart-trio: one module per route family, composed here.

card.py (the Agent Card), resource_metadata.py (RFC 9728's metadata, with an issuer), jsonrpc.py
(the JSON-RPC endpoint) and rest.py (the HTTP+JSON binding), with streams.py for their
event streams; health.py (health, readiness, metrics), errors.py (what no route
answers); negotiation.py reads what every request asks for, operations.py does what it
asks.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from quart_trio import QuartTrio

from ..config import Settings
from ..executor import Executor
from ..observability.metrics import Metrics
from ..push.service import PushNotifications
from .card import CardRoute
from .edge import Edge, protected_resource
from .errors import ErrorAnswers
from .health import HealthRoutes
from .jsonrpc import JsonRpcEndpoint
from .resource_metadata import ProtectedResourceRoute
from .rest import RestBinding
from .streams import EventStreams

if TYPE_CHECKING:  # the oidc extra; only there with ADAPTER_OIDC_ISSUER
    from ..auth.verifier import OidcVerifier


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
    resource = protected_resource(settings)
    edge = Edge(settings, executor, metrics, push, verifier, store_problem, resource)
    CardRoute(settings, verifier).add_to(app)
    if resource is not None:
        ProtectedResourceRoute(resource).add_to(app)
    # One stream quota per caller, whichever binding opens its streams.
    streams = EventStreams(edge)
    JsonRpcEndpoint(edge, streams).add_to(app)
    RestBinding(edge, streams).add_to(app)
    HealthRoutes(edge).add_to(app)
    ErrorAnswers(edge).add_to(app)
    return app
