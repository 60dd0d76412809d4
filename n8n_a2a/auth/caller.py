"""Who is calling: the caller, the owner of the tasks it may touch, and why a token is refused.

Pure: no I/O. An owner is an opaque digest, never a token or a subject as such, so a
task table holds no credential and no person's id; it is compared, never shown. The
anonymous caller (no token, in the default mode) is the owner None.
"""

from __future__ import annotations

import enum
import hashlib
import json
from collections.abc import Mapping
from dataclasses import dataclass, field

from ..protocol.errors import A2AError, ErrorCode

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

#: The `typ` headers an access token may carry (less any `application/`, RFC 7515 §4.1.9):
#: RFC 9068's at+jwt, or the JWT that most issuers still write (none at all is as common).
_ACCESS_TOKEN_TYPES = frozenset({"jwt", "at+jwt"})
#: Claims only an ID token carries (OpenID Connect Core §2, §3.3.2.11).
_ID_TOKEN_CLAIMS = ("nonce", "at_hash", "c_hash", "s_hash")


class AuthFailure(A2AError):
    """A caller refused: HTTP 401 (403 for a scope it lacks) with a Bearer challenge, and a
    JSON-RPC -32600 error."""

    def __init__(self, reason: AuthReason, message: str | None = None) -> None:
        super().__init__(ErrorCode.INVALID_REQUEST, message or _SAID[reason])
        self.reason = reason

    @property
    def status(self) -> int:
        """401: no token or a token refused; 403: a good token that does not reach far enough
        (RFC 6750 §3.1)."""
        return 403 if self.reason is AuthReason.INSUFFICIENT_SCOPE else 401


def is_access_token(header: Mapping[str, object], claims: Mapping[str, object]) -> bool:
    """Whether a JWT may be an access token: an ID token proves who signed in to a client,
    not that the client may call this agent, even when its audience happens to fit."""
    kind = header.get("typ")
    if kind is not None:
        if not isinstance(kind, str):
            return False
        if kind.lower().removeprefix("application/") not in _ACCESS_TOKEN_TYPES:
            return False
    if claims.get("typ") == "ID":  # Keycloak marks its ID tokens so
        return False
    return not any(name in claims for name in _ID_TOKEN_CLAIMS)


def granted_scopes(claims: Mapping[str, object]) -> frozenset[str]:
    """The scopes a token grants: its `scope` claim (RFC 9068 §2.2.3, RFC 8693 §4.2), a
    space-separated string, or the `scp` list some issuers write instead."""
    for name in ("scope", "scp"):
        granted = claims.get(name)
        if isinstance(granted, str):
            return frozenset(granted.split())
        if isinstance(granted, list):
            return frozenset(item for item in granted if isinstance(item, str))
    return frozenset()
