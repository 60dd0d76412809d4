"""What every route of the HTTP edge shares: the adapter's parts, and how a refusal is counted."""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from quart import Response

from ..config import Settings
from ..executor import Executor
from ..metrics import Metrics
from ..protocol.errors import A2AError
from ..push.service import PushNotifications

#: The bindings, as metrics and logs name them.
JSONRPC = "jsonrpc"
HTTP_JSON = "http_json"

if TYPE_CHECKING:  # the oidc extra; only there with ADAPTER_OIDC_ISSUER
    from ..auth import OidcVerifier

logger = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class Edge:
    """The parts a route acts with. `store_problem` says why the task store is not ready
    (None: it is); with a `verifier` (ADAPTER_OIDC_ISSUER) every caller's token is verified."""

    settings: Settings
    executor: Executor
    metrics: Metrics
    push: PushNotifications
    verifier: OidcVerifier | None
    store_problem: Callable[[], str | None]

    def log_refusal(self, binding: str, method: str, error: A2AError) -> None:
        """Count and log an A2A error answered to a caller, in whatever binding or stream."""
        self.metrics.request_answered(binding, method, error.code)
        code = int(error.code)
        fields = {"event": "rpc_error", "binding": binding, "method": method, "code": code}
        logger.info("A2A error %d: %s", error.code, error.message, extra={"fields": fields})


def json_response(body: bytes, status: int = 200) -> Response:
    return Response(body, status=status, content_type="application/json")
