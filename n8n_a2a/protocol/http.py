"""What the JSON-RPC endpoint reads from HTTP headers: the caller's token and the body's type."""

from __future__ import annotations

import re

from .errors import A2AError, ErrorCode

# RFC 6750 b64token: these characters cannot break out of a header or a JSON string.
_BEARER = re.compile(r"Bearer +([A-Za-z0-9\-._~+/]+=*) *", re.IGNORECASE)
_TRACEPARENT = re.compile(
    r"(?P<version>[0-9a-f]{2})-(?P<trace>[0-9a-f]{32})-(?P<parent>[0-9a-f]{16})-[0-9a-f]{2}"
)
# W3C: at most 32 list members of printable ASCII; 512 characters is the propagation floor.
_TRACESTATE = re.compile(r"[\x20-\x7e]{1,512}")
_JSON_TYPE = re.compile(r"application/([a-z0-9.+-]+\+)?json", re.IGNORECASE)


def bearer_token(authorization: str | None) -> str | None:
    """The caller's Bearer token, None without one; a malformed one is refused, unquoted."""
    if authorization is None or not authorization.strip():
        return None
    found = _BEARER.fullmatch(authorization.strip())
    if found:
        return found.group(1)
    if authorization.strip().lower().startswith("bearer"):
        raise A2AError(
            ErrorCode.INVALID_REQUEST, "The Authorization header's Bearer token is malformed"
        )
    return None  # another scheme (Basic, ...) is not a token to pass on


def trace_headers(traceparent: str | None, tracestate: str | None) -> tuple[tuple[str, str], ...]:
    """The W3C trace context to pass on, when `traceparent` is well-formed (else none)."""
    if traceparent is None:
        return ()
    found = _TRACEPARENT.fullmatch(traceparent.strip().lower())
    if (
        found is None
        or found["version"] == "ff"
        or set(found["trace"]) == {"0"}
        or set(found["parent"]) == {"0"}
    ):
        return ()
    headers = [("traceparent", found.group(0))]
    if tracestate is not None and _TRACESTATE.fullmatch(tracestate.strip()):
        headers.append(("tracestate", tracestate.strip()))
    return tuple(headers)


def is_json(content_type: str | None) -> bool:
    """application/json or application/*+json (such as application/a2a+json), any parameters."""
    media_type = (content_type or "").split(";", 1)[0].strip()
    return _JSON_TYPE.fullmatch(media_type) is not None
