"""How a client learns to sign in here: the issuer's authorization code flow for the card,
this agent as an OAuth protected resource (RFC 9728), and the Bearer challenge.

Pure: the discovery document comes in as a value (auth/verifier.py fetches it). A client that signs
its users in reads the flow off the card's oauth2 scheme; one that follows RFC 9728 reads
`resource_metadata` off a 401 and finds the issuer and the scopes there.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from urllib.parse import urlsplit

from ..core.errors import AuthFailure, AuthReason
from ..protocol.card import OAuthFlow
from ..protocol.model import JSONObject

#: RFC 9728 §3: inserted between the resource's host and its path.
METADATA_PREFIX = "/.well-known/oauth-protected-resource"
#: An endpoint longer than this is no issuer's: it stays off the card.
_MAX_URL_CHARS = 2048


@dataclass(frozen=True, slots=True)
class ProtectedResource:
    """This agent as RFC 9728 describes a resource: its URL, whose tokens it takes, the
    scopes they must carry."""

    resource: str
    issuer: str
    scopes: tuple[str, ...]
    name: str

    @property
    def metadata_path(self) -> str:
        """Where the metadata is (RFC 9728 §3.1): the well-known prefix, then the resource's
        own path as it is (a slash right after the host dropped), so agents behind one host
        each have theirs."""
        path = urlsplit(self.resource).path
        return METADATA_PREFIX + ("" if path == "/" else path)

    @property
    def metadata_paths(self) -> tuple[str, ...]:
        """Where the metadata is served: with and without a last slash, since a client
        that derives the location from the resource's URL may have kept it or not."""
        trimmed = self.metadata_path.rstrip("/")
        return (trimmed,) if trimmed == METADATA_PREFIX else (trimmed, trimmed + "/")

    @property
    def metadata_url(self) -> str:
        parts = urlsplit(self.resource)
        return f"{parts.scheme}://{parts.netloc}{self.metadata_path}"

    def metadata(self) -> JSONObject:
        """The protected resource metadata document (RFC 9728 §2)."""
        return {
            "resource": self.resource,
            "authorization_servers": [self.issuer],
            "scopes_supported": list(self.scopes),
            "bearer_methods_supported": ["header"],
            "resource_name": self.name,
        }


def bearer_challenge(failure: AuthFailure, resource: ProtectedResource | None) -> str:
    """The WWW-Authenticate value of a refusal (RFC 6750 §3): no error code for a request
    that carried no token, else why; with an issuer, where to learn how to get a token
    (RFC 9728 §5.1) and the scopes it must carry."""
    params = ['realm="a2a"']
    if failure.reason is not AuthReason.NO_TOKEN:
        scope = failure.reason is AuthReason.INSUFFICIENT_SCOPE
        code = "insufficient_scope" if scope else "invalid_token"
        description = failure.message.replace("\\", "").replace('"', "'")
        params += [f'error="{code}"', f'error_description="{description}"']
    if resource is not None:
        if resource.scopes:
            params.append(f'scope="{" ".join(resource.scopes)}"')
        params.append(f'resource_metadata="{resource.metadata_url}"')
    return "Bearer " + ", ".join(params)


def authorization_code_flow(
    discovery: Mapping[str, object], metadata_url: str, *, allow_http: bool = False
) -> OAuthFlow | None:
    """The issuer's authorization code flow as its discovery document (OpenID Connect
    Discovery §3, RFC 8414 §2) describes it; None for an issuer without one (a machine-only
    issuer: its clients find it through the openIdConnect scheme), or whose endpoints
    are not https URLs fit for a card (http only with `allow_http`)."""
    authorization_url = _endpoint(discovery.get("authorization_endpoint"), allow_http)
    token_url = _endpoint(discovery.get("token_endpoint"), allow_http)
    if authorization_url is None or token_url is None:
        return None
    # Absent lists mean their defaults: code among the response types, and the grants
    # authorization_code and implicit (Discovery §3).
    responses = discovery.get("response_types_supported", ["code"])
    grants = discovery.get("grant_types_supported", ["authorization_code", "implicit"])
    if not isinstance(responses, list) or "code" not in responses:
        return None
    if not isinstance(grants, list) or "authorization_code" not in grants:
        return None
    # A refresh is a grant at the token endpoint (RFC 6749 §6): its URL, where allowed.
    refresh_url = token_url if "refresh_token" in grants else None
    methods = discovery.get("code_challenge_methods_supported")
    pkce = isinstance(methods, list) and "S256" in methods
    return OAuthFlow(metadata_url, authorization_url, token_url, refresh_url, pkce)


def _endpoint(value: object, allow_http: bool) -> str | None:
    """An endpoint as the card may show it: https (http only where allowed), printable
    ASCII without spaces, no fragment (RFC 6749 §3.1), within bounds."""
    if not isinstance(value, str) or len(value) > _MAX_URL_CHARS:
        return None
    if not value.isascii() or not value.isprintable() or " " in value or "#" in value:
        return None
    try:
        parts = urlsplit(value)
    except ValueError:
        return None
    schemes = ("https", "http") if allow_http else ("https",)
    return value if parts.scheme in schemes and parts.hostname else None
