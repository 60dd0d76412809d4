"""One negotiation per request, whatever its route: what the request's head asks for.

The A2A version and the codec whose shapes answer, the bearer token and who the caller
is, the W3C trace context to pass on. Read from the head alone, before any body.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

from ..auth.caller import Caller
from ..core.errors import AuthFailure, AuthReason
from ..core.owners import Owner, token_owner
from ..observability import traces
from ..protocol.codec import Codec
from ..protocol.errors import A2AError
from ..protocol.http import bearer_token, trace_headers
from ..protocol.versions import negotiate

if TYPE_CHECKING:  # the oidc extra; only there with ADAPTER_OIDC_ISSUER
    from ..auth.verifier import OidcVerifier

VERSION_HEADER = "A2A-Version"


class Lookup(Protocol):
    """A request's headers or query arguments: a value by name, None without one."""

    def get(self, key: str, /) -> str | None: ...


@dataclass(frozen=True, slots=True)
class Negotiation:
    """What a request asks for. `unsupported` is the -32009 to answer when its version is not
    served (`codec` then still gives the error its shape); `requested` is the A2A-Version
    asked for (None: none); `malformed_token` is the refusal
    of an Authorization header that is no well-formed Bearer token."""

    codec: Codec
    unsupported: A2AError | None
    requested: str | None
    token: str | None
    malformed_token: A2AError | None
    trace_headers: tuple[tuple[str, str], ...]

    @classmethod
    def of(cls, headers: Lookup, args: Lookup) -> Negotiation:
        """The negotiation of a request's headers and query arguments."""
        # Every answer, errors before the method included, takes the shapes of the version
        # asked for: none is v0.3 (spec §3.6.2). A browser can ask in the query.
        requested = headers.get(VERSION_HEADER) or args.get(VERSION_HEADER)
        codec, unsupported = negotiate(requested)
        malformed: A2AError | None = None
        try:
            token = bearer_token(headers.get("Authorization"))
        except A2AError as refused:
            token, malformed = None, refused
        trace = trace_headers(headers.get("traceparent"), headers.get("tracestate"))
        return cls(codec, unsupported, requested, token, malformed, trace)

    @property
    def plain_card(self) -> bool:
        """Whether the caller gets the plain card: it asked for a version served whose
        clients validate it (not merely for a version not served)."""
        return self.unsupported is None and self.codec.facts.plain_card

    @property
    def refused_later(self) -> A2AError | None:
        """The refusal a request gets once its JSON-RPC envelope is read (for its id)."""
        return self.unsupported or self.malformed_token

    async def owner(self, verifier: OidcVerifier | None, require_token: bool) -> Owner:
        """Whose tasks the caller may touch; AuthFailure for a caller to refuse (HTTP 401)."""
        malformed = self.malformed_token
        if malformed is not None and (verifier is not None or require_token):
            raise AuthFailure(AuthReason.MALFORMED, malformed.message)
        if verifier is not None:
            return await verifier.verify(self.token)
        if require_token and self.token is None:
            raise AuthFailure(AuthReason.NO_TOKEN)
        return token_owner(self.token)

    def caller(self, owner: Owner) -> Caller:
        # With tracing on, the work the request starts continues its span, not the caller's.
        return Caller(self.token, traces.active.context(self.trace_headers), owner)
