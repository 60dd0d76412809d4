"""Who is calling: the caller, the owner of the tasks it may touch, what an access token is.

Pure: no I/O. What an owner is (an opaque digest of a token, or of an issuer and a
subject) is core/owners.py's, below the tasks that hold it. Why a token is refused
(AuthReason, AuthFailure) is in core/errors.py, with the adapter's other errors.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from ..core.owners import Owner


@dataclass(frozen=True, slots=True)
class Caller:
    """Who asks, and what of the A2A request travels to the workflow besides the message, as
    headers: the caller's token (as X-Subject-Token) and its W3C trace context.

    `owner` says whose tasks the caller may touch; it stays in the adapter.
    """

    subject_token: str | None = None
    trace_headers: tuple[tuple[str, str], ...] = ()
    owner: Owner = field(default=None, repr=False)


#: The `typ` headers an access token may carry (less any `application/`, RFC 7515 §4.1.9):
#: RFC 9068's at+jwt, or the JWT that most issuers still write (none at all is as common).
_ACCESS_TOKEN_TYPES = frozenset({"jwt", "at+jwt"})
#: Claims only an ID token carries (OpenID Connect Core §2, §3.3.2.11).
_ID_TOKEN_CLAIMS = ("nonce", "at_hash", "c_hash", "s_hash")


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
