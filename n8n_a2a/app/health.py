"""The operator's routes: liveness, readiness and the Prometheus metrics."""

from __future__ import annotations

import json
from urllib.parse import urlsplit

import trio
from quart import Response
from quart_trio import QuartTrio

from ..observability.exposition import render as render_metrics
from ..observability.metrics import CONTENT_TYPE as METRICS_CONTENT_TYPE
from .edge import HEALTH_PATHS, Edge

READY_CHECK_SECONDS = 2.0


class HealthRoutes:
    """GET /healthz, /readyz and /metrics. None of them ever calls the workflow."""

    def __init__(self, edge: Edge) -> None:
        self._edge = edge

    def add_to(self, app: QuartTrio) -> None:
        for path, view in zip(
            HEALTH_PATHS, (self.healthz, self.readyz, self.metrics_text), strict=True
        ):
            app.add_url_rule(path, view_func=view, methods=["GET"])

    async def healthz(self) -> Response:
        """Liveness: the process serves. Cheap."""
        return json_response(b'{"status":"ok"}')

    async def readyz(self) -> Response:
        """Readiness: accepting sends, the task store ready, the OIDC keys loaded and, when
        asked for, the webhook's host takes a TCP connection."""
        edge = self._edge
        problem = "shutting down" if not edge.executor.accepting else edge.store_problem()
        if problem is None and edge.verifier is not None and not edge.verifier.ready:
            problem = "the OIDC issuer's keys are not loaded yet (ADAPTER_OIDC_ISSUER)"
        if problem is None and edge.settings.ready_check_webhook:
            problem = await webhook_host_problem(edge.settings.webhook_url)
        if problem is not None:
            document = {"status": "not ready", "reason": problem}
            return json_response(json.dumps(document).encode(), status=503)
        return json_response(b'{"status":"ready"}')

    async def metrics_text(self) -> Response:
        return Response(render_metrics(self._edge.metrics), content_type=METRICS_CONTENT_TYPE)


def json_response(body: bytes, status: int = 200) -> Response:
    return Response(body, status=status, content_type="application/json")


async def webhook_host_problem(webhook_url: str) -> str | None:
    """Why the webhook's host takes no TCP connection now (None: it takes one)."""
    address = urlsplit(webhook_url)
    port = address.port or (443 if address.scheme == "https" else 80)
    with trio.move_on_after(READY_CHECK_SECONDS):
        try:
            stream = await trio.open_tcp_stream(address.hostname or "", port)
        except OSError as error:
            return f"the webhook's host does not take connections: {error}"
        await stream.aclose()
        return None
    return f"the webhook's host did not answer within {READY_CHECK_SECONDS:g} s"
