"""What the JSON-RPC endpoint reads from HTTP headers: the caller's token and the body's type."""

from __future__ import annotations

import re

from .errors import A2AError, ErrorCode

# RFC 6750 b64token: these characters cannot break out of a header or a JSON string.
_BEARER = re.compile(r"Bearer +([A-Za-z0-9\-._~+/]+=*) *", re.IGNORECASE)
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


def is_json(content_type: str | None) -> bool:
    """application/json or application/*+json (such as application/a2a+json), any parameters."""
    media_type = (content_type or "").split(";", 1)[0].strip()
    return _JSON_TYPE.fullmatch(media_type) is not None
