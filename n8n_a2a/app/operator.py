"""The operator's app, on quart-trio: health, readiness, metrics, the RFC 9728 metadata,
and what no route serves. Imported when first asked for (front.py): a start that serves
the A2A routes alone never loads quart."""

from __future__ import annotations

from quart_trio import QuartTrio

from .edge import Edge
from .errors import ErrorAnswers
from .health import HealthRoutes
from .resource_metadata import ProtectedResourceRoute


def operator_app(edge: Edge) -> QuartTrio:
    app = QuartTrio(__name__)
    # No route of this app takes a body; one sent all the same is bounded.
    app.config["MAX_CONTENT_LENGTH"] = edge.settings.max_body_bytes
    # The connection's read deadline bounds a request's body, not quart's own 60 s.
    app.config["BODY_TIMEOUT"] = None
    if edge.resource is not None:
        ProtectedResourceRoute(edge.resource).add_to(app)
    HealthRoutes(edge).add_to(app)
    ErrorAnswers().add_to(app)
    return app
