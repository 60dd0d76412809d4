"""The codecs of the versions served, and negotiation (A2A spec §3.6): which one answers a
request."""

from __future__ import annotations

import re

from .codec import Codec
from .errors import A2AError, ErrorCode
from .facts import V0_3, V1_0, V1_1
from .v03 import V03Shapes
from .v1 import V1Shapes

V1 = Codec(V1_0, V1Shapes())
V03 = Codec(V0_3, V03Shapes())
#: A2A 1.1 as drafted: served to a caller that asks for it, never declared on the card
#: (no released client speaks it; see facts.V1_1).
V11 = Codec(V1_1, V1Shapes(V1_1.version))
#: The released versions served: the card's interfaces.
SUPPORTED = {codec.facts.version: codec for codec in (V1, V03)}
#: Every version a request may ask for.
SERVED = {**SUPPORTED, V11.facts.version: V11}
#: The version the HTTP+JSON binding serves (rest.py): v0.3's REST shape is the v0.3
#: proto's, not v03.py's. Here, so that the card names it without the binding's tables.
REST_VERSION = V1.facts.version
#: Every method of every version served: a metric's label is one of these, or "other".
METHODS = frozenset(name for codec in SUPPORTED.values() for name in codec.facts.methods)

# major[.minor[.patch]] in ASCII digits, a few of them: str.isdigit() and int() also take
# "¹" or "٣", and int() refuses more than 4,300 digits.
_VERSION = re.compile(r"(?P<major>[0-9]{1,3})(?:\.(?P<minor>[0-9]{1,3})(?:\.[0-9]{1,3})?)?")


def codec_for(requested: str | None) -> Codec:
    """The codec for an `A2A-Version` value; absent or empty means 0.3.

    Only major.minor counts, so "1.0.0" is "1.0" and "1" is "1.0".
    """
    if requested is None or not requested.strip():
        return V03
    found = _VERSION.fullmatch(requested.strip())
    if found:
        key = f"{int(found['major'])}.{int(found['minor'] or 0)}"
        if key in SERVED:
            return SERVED[key]
    raise A2AError(
        ErrorCode.VERSION_NOT_SUPPORTED,
        f"A2A version {requested.strip()[:32]!r} is not supported; "
        f"this agent speaks {', '.join(sorted(SUPPORTED))} (and the 1.1 draft)",
    )


def negotiate(requested: str | None) -> tuple[Codec, A2AError | None]:
    """The codec whose shapes answer a request, and the -32009 to answer if its version is
    not served: every error still needs a shape, and v1.0 is the version that has -32009."""
    try:
        return codec_for(requested), None
    except A2AError as unsupported:
        return V1, unsupported
