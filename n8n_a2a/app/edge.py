"""What every route of the HTTP edge shares: the adapter's parts, how a refusal is counted,
and the one table that answers the adapter's own errors (core/errors.py) on the wire,
with their codes and statuses."""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ..auth.signin import ProtectedResource, bearer_challenge
from ..budget import MemoryBudget
from ..config import Settings
from ..core.errors import (
    AdapterError,
    AtCapacity,
    AuthFailure,
    AuthReason,
    BodyTooLarge,
    StoreUnavailable,
    SubscriberTooSlow,
)
from ..executor import Executor
from ..http.slots import PROBE_PATHS
from ..observability import traces
from ..observability.metrics import Metrics
from ..protocol.errors import A2AError, ErrorCode
from ..protocol.urls import canonical_resource
from ..push.service import PushNotifications
from .exchange import Answer
from .negotiation import Negotiation

#: Liveness, readiness and the metrics (health.py, on the operator's app): the paths the
#: connection limits let a probe through on (http/slots.py).
HEALTH_PATHS = PROBE_PATHS

#: The bindings, as metrics and logs name them.
JSONRPC = "jsonrpc"
HTTP_JSON = "http_json"

if TYPE_CHECKING:  # the oidc extra; only there with ADAPTER_OIDC_ISSUER
    from ..auth.verifier import OidcVerifier

logger = logging.getLogger(__name__)

#: The adapter's own errors as the wire answers them: the JSON-RPC code (in HTTP+JSON, the
#: status that code has there), whichever store, stream, route or verifier raised them.
WIRE_CODES: dict[type[AdapterError], ErrorCode] = {
    StoreUnavailable: ErrorCode.SERVER_BUSY,  # retry later
    SubscriberTooSlow: ErrorCode.SERVER_BUSY,  # the stream ends; the task goes on
    AtCapacity: ErrorCode.SERVER_BUSY,  # nothing done; retry later
    BodyTooLarge: ErrorCode.INVALID_REQUEST,  # with the status below, in either binding
    AuthFailure: ErrorCode.INVALID_REQUEST,  # with the status below, in either binding
}
#: Those answered with an HTTP status of their own in either binding (a JSON-RPC error
#: travels with 200 otherwise, an HTTP+JSON one with its code's status).
WIRE_STATUSES: dict[type[AdapterError], int] = {
    BodyTooLarge: 413,
    AuthFailure: 401,  # no token, or a token refused; but see AUTH_STATUSES
}
#: A refused caller's HTTP status where it is not 401: 403 for a good token that does not
#: reach far enough (RFC 6750 §3.1).
AUTH_STATUSES = {AuthReason.INSUFFICIENT_SCOPE: 403}


def wire_error(error: A2AError | AdapterError) -> A2AError:
    """The error as the wire answers it: an A2AError as it is, the adapter's own by the table."""
    if isinstance(error, A2AError):
        return error
    return A2AError(WIRE_CODES[type(error)], error.message)


#: Seconds a caller told to retry later (-32000, or 503) is asked to wait first.
RETRY_AFTER = 1


def retry_later(error: A2AError, answer: Answer) -> Answer:
    """The answer, with Retry-After when it tells the caller to retry later (-32000 in
    JSON-RPC, 503 in HTTP+JSON: a full budget or bound, a store out of reach)."""
    if error.code is ErrorCode.SERVER_BUSY:
        answer.headers["Retry-After"] = str(RETRY_AFTER)
    return answer


def wire_status(error: AdapterError, otherwise: int) -> int:
    """The HTTP status the error is answered with, by the tables; `otherwise`, the
    binding's own, for one that has none."""
    if isinstance(error, AuthFailure) and error.reason in AUTH_STATUSES:
        return AUTH_STATUSES[error.reason]
    return WIRE_STATUSES.get(type(error), otherwise)


def auth_status(failure: AuthFailure) -> int:
    return wire_status(failure, 401)


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
    #: ADAPTER_MEMORY_BUDGET (None: nothing counted, as in some tests).
    budget: MemoryBudget | None = None

    def refused_caller(self, failure: AuthFailure, answer: Answer) -> Answer:
        """A refusal for the caller's token (answered with `auth_status(failure)`), counted,
        with the Bearer challenge."""
        self.metrics.auth_failed(failure.reason)
        answer.headers["WWW-Authenticate"] = bearer_challenge(failure, self.resource)
        return answer

    def log_refusal(self, binding: str, method: str, error: A2AError) -> None:
        """Count and log an A2A error answered to a caller, in whatever binding or stream."""
        self.metrics.request_answered(binding, method, error.code)
        traces.active.refused(int(error.code))
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


async def traced(
    binding: str, negotiation: Negotiation, answer: Callable[[Negotiation], Awaitable[Answer]]
) -> Answer:
    """The request answered within its server span (tracing on), which continues the
    caller's trace context. `binding`: as A2A names it (JSONRPC, HTTP+JSON)."""
    with traces.active.server(binding, negotiation.trace_headers) as span:
        span.set("a2a.version", negotiation.codec.facts.version)
        answered = await answer(negotiation)
        span.set("http.response.status_code", answered.status)
        if answered.status >= 500:
            span.fail(f"HTTP {answered.status}")
        return answered
