"""What every route of the HTTP edge shares: the adapter's parts, and how a refusal is counted."""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from quart import Response

from ..auth.caller import AuthFailure
from ..auth.signin import ProtectedResource, bearer_challenge, canonical_resource
from ..config import Settings
from ..executor import Executor
from ..observability.metrics import Metrics
from ..protocol.errors import A2AError
from ..push.service import PushNotifications

#: The bindings, as metrics and logs name them.
JSONRPC = "jsonrpc"
HTTP_JSON = "http_json"

if TYPE_CHECKING:  # the oidc extra; only there with ADAPTER_OIDC_ISSUER
    from ..auth.verifier import OidcVerifier

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
    #: This agent as a protected resource of its issuer (None without an issuer).
    resource: ProtectedResource | None = None

    def refused_caller(self, failure: AuthFailure, response: Response) -> Response:
        """A refusal for the caller's token (answered with `failure.status`), counted, with
        the Bearer challenge."""
        self.metrics.auth_failed(failure.reason)
        response.headers["WWW-Authenticate"] = bearer_challenge(failure, self.resource)
        return response

    def log_refusal(self, binding: str, method: str, error: A2AError) -> None:
        """Count and log an A2A error answered to a caller, in whatever binding or stream."""
        self.metrics.request_answered(binding, method, error.code)
        code = int(error.code)
        fields = {"event": "rpc_error", "binding": binding, "method": method, "code": code}
        logger.info("A2A error %d: %s", error.code, error.message, extra={"fields": fields})


def protected_resource(settings: Settings) -> ProtectedResource | None:
    """With ADAPTER_OIDC_ISSUER, this agent as RFC 9728 describes it."""
    if settings.oidc_issuer is None:
        return None
    return ProtectedResource(
        canonical_resource(settings.public_url),
        settings.oidc_issuer,
        settings.oidc_scopes,
        settings.agent_name,
    )


def json_response(body: bytes, status: int = 200) -> Response:
    return Response(body, status=status, content_type="application/json")
