"""Who is calling: the caller, the owner of the tasks it may touch, and why a token is refused.

Pure: no I/O. An owner is an opaque digest, never a token or a subject as such, so a
task table holds no credential and no person's id; it is compared, never shown. The
anonymous caller (no token, in the default mode) is the owner None.
"""

from __future__ import annotations

import enum
import hashlib
import json
from dataclasses import dataclass, field

from .protocol.errors import A2AError, ErrorCode

#: A task's owner: None for the anonymous caller, else an opaque digest.
Owner = str | None


@dataclass(frozen=True, slots=True)
class Caller:
    """Who asks, and what of the A2A request travels to the workflow besides the message, as
    headers: the caller's token (as X-Subject-Token) and its W3C trace context.

    `owner` says whose tasks the caller may touch; it stays in the adapter.
    """

    subject_token: str | None = None
    trace_headers: tuple[tuple[str, str], ...] = ()
    owner: Owner = field(default=None, repr=False)


def token_owner(token: str | None) -> Owner:
    """The default owner: the SHA-256 of the bearer token (a new token is a new owner)."""
    if token is None:
        return None
    return "token:" + hashlib.sha256(token.encode()).hexdigest()


def subject_owner(issuer: str, subject: str) -> str:
    """The owner of a verified token: its issuer and subject, whatever token carries them, so
    a caller whose token is refreshed keeps its tasks."""
    return "oidc:" + hashlib.sha256(json.dumps([issuer, subject]).encode()).hexdigest()


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
}


class AuthFailure(A2AError):
    """A caller refused: HTTP 401 with a Bearer challenge and a JSON-RPC -32600 error."""

    def __init__(self, reason: AuthReason, message: str | None = None) -> None:
        super().__init__(ErrorCode.INVALID_REQUEST, message or _SAID[reason])
        self.reason = reason

    @property
    def challenge(self) -> str:
        """The WWW-Authenticate value (RFC 6750 §3): a request that carried no token gets
        no error code, one whose token failed gets `invalid_token` and why."""
        if self.reason is AuthReason.NO_TOKEN:
            return 'Bearer realm="a2a"'
        description = self.message.replace("\\", "").replace('"', "'")
        return f'Bearer realm="a2a", error="invalid_token", error_description="{description}"'
