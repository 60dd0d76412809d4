"""Protocol version negotiation (A2A spec §3.6): which codec answers a request."""

from __future__ import annotations

from .codec import Codec
from .errors import A2AError, ErrorCode
from .v03 import V03Codec
from .v1 import V1Codec

V1 = V1Codec()
V03 = V03Codec()
SUPPORTED = {codec.version: codec for codec in (V1, V03)}


def codec_for(requested: str | None) -> Codec:
    """The codec for an `A2A-Version` value; absent or empty means 0.3.

    Only major.minor counts, so "1.0.0" is "1.0" and "1" is "1.0".
    """
    if requested is None or not requested.strip():
        return V03
    numbers = requested.strip().split(".")
    if 1 <= len(numbers) <= 3 and all(n.isdigit() for n in numbers):
        key = f"{int(numbers[0])}.{int(numbers[1]) if len(numbers) > 1 else 0}"
        if key in SUPPORTED:
            return SUPPORTED[key]
    raise A2AError(
        ErrorCode.VERSION_NOT_SUPPORTED,
        f"A2A version {requested.strip()[:32]!r} is not supported; "
        f"this agent speaks {', '.join(sorted(SUPPORTED))}",
    )
