"""The adapter's own errors, all in one place: plain exceptions, whatever wire the request
came by.

The wire's errors (A2AError, its codes) are protocol/errors.py's, the outbound calls'
webhook/errors.py's; these are the adapter's: its store out of reach, a subscriber too
slow, a bound full, a body too large, a caller refused. The edge answers each
AdapterError with a JSON-RPC code and an HTTP status, from one table (app/edge.py,
`wire_error`), so a store or a verifier never picks a code. A message is shown to the
caller as it is: it never holds a token. The last three are never answered as
themselves: a message remembered twice (the intake answers from the first), a move the
lifecycle forbids (a bug) and an issuer's keys not had (the verifier answers that as an
AuthFailure). Pure: no I/O.
"""

from __future__ import annotations

import enum

from ..protocol.model import TaskState
from .sent import Sent


class AdapterError(Exception):
    """An error of the adapter's own; `message` is what the caller is told."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class StoreUnavailable(AdapterError):
    """The store cannot be reached (its database is down, or not ready yet): the caller is
    told to retry, and nothing was half-written."""

    def __init__(self, reason: str) -> None:
        super().__init__(f"The task store is unavailable ({reason}); retry later")
        self.reason = reason


class SubscriberTooSlow(AdapterError):
    """The subscriber's buffer filled up: its stream ends, the task goes on."""

    def __init__(self, task_id: str) -> None:
        super().__init__(
            f"This stream fell too far behind task {task_id} and was closed; the task goes "
            "on: GetTask or SubscribeToTask shows where it is"
        )


class AtCapacity(AdapterError):
    """A bound of the adapter's is full (call slots, tasks kept, streams of one caller,
    push lookups) or it is shutting down: nothing was done, the caller may retry later.
    `message` names the bound's setting."""


class BodyTooLarge(AdapterError):
    """A request's body is larger than ADAPTER_MAX_BODY_BYTES (announced, or as read):
    nothing of it is judged."""

    def __init__(self, max_body_bytes: int) -> None:
        super().__init__(
            "The request body is larger than ADAPTER_MAX_BODY_BYTES "
            f"({max_body_bytes:,} bytes), the most the adapter reads"
        )


class AuthReason(enum.Enum):
    """Why a request is refused before anything else of it is judged (a metric label)."""

    NO_TOKEN = "no_token"
    MALFORMED = "malformed"
    BAD_SIGNATURE = "bad_signature"
    EXPIRED = "expired"
    NOT_YET_VALID = "not_yet_valid"
    WRONG_ISSUER = "wrong_issuer"
    WRONG_AUDIENCE = "wrong_audience"
    UNKNOWN_KEY = "unknown_key"
    ISSUER_UNREACHABLE = "issuer_unreachable"
    NOT_ACCESS_TOKEN = "not_access_token"
    INSUFFICIENT_SCOPE = "insufficient_scope"


# Fixed texts: nothing of the token, not even its claims, is ever quoted back or logged.
_SAID = {
    AuthReason.NO_TOKEN: "Authentication required: send the header Authorization: Bearer <token>",
    AuthReason.MALFORMED: (
        "The bearer token is not a well-formed signed JWT with iss, sub, aud and exp"
    ),
    AuthReason.BAD_SIGNATURE: (
        "The bearer token's signature does not verify with the issuer's keys, or uses an "
        "algorithm this agent does not accept"
    ),
    AuthReason.EXPIRED: "The bearer token has expired: get a new one",
    AuthReason.NOT_YET_VALID: "The bearer token is not valid yet",
    AuthReason.WRONG_ISSUER: (
        "The bearer token was not issued by this agent's issuer (the Agent Card names it)"
    ),
    AuthReason.WRONG_AUDIENCE: "The bearer token is not meant for this agent (aud)",
    AuthReason.UNKNOWN_KEY: "The bearer token is signed with a key its issuer does not publish",
    AuthReason.ISSUER_UNREACHABLE: (
        "The bearer token cannot be verified now: the issuer's keys could not be fetched; "
        "try again later"
    ),
    # Which mark gave an ID token away is for the metric: a guesser learns nothing here.
    AuthReason.NOT_ACCESS_TOKEN: "The bearer token is refused: send an access token for this agent",
    AuthReason.INSUFFICIENT_SCOPE: "The bearer token lacks a scope this agent requires",
}


class AuthFailure(AdapterError):
    """A caller refused, before anything else of its request is judged."""

    def __init__(self, reason: AuthReason, message: str | None = None) -> None:
        super().__init__(message or _SAID[reason])
        self.reason = reason


class AlreadySent(Exception):
    """A store was asked to remember a message its caller had sent already (the same
    owner, the same messageId): nothing was recorded. `first`: that first sending, which
    the intake answers from (core/sent.py), never a second run."""

    def __init__(self, first: Sent) -> None:
        super().__init__(f"message {first.message_id} was sent before (task {first.task_id})")
        self.first = first


class IllegalTransition(Exception):
    """A store was asked for a move the lifecycle does not allow (core/lifecycle.py's
    check_move): a bug, never client input."""

    def __init__(self, task_id: str, current: TaskState, to: TaskState) -> None:
        super().__init__(f"task {task_id}: {current.value} -> {to.value}")
        self.task_id = task_id
        self.current = current
        self.to = to


class KeysUnavailable(Exception):
    """The issuer's discovery document or key set could not be had (auth/verifier.py); the
    message says why."""
