"""A URL in the one spelling the adapter compares: its public URL as a resource (RFC 9728),
and every spelling of it a token's audience may hold.

Here, with the wire, so that the configuration that reads the URL and the sign-in that
names it spell it alike without one reaching up into the other.
"""

from __future__ import annotations

from urllib.parse import urlsplit, urlunsplit


def canonical_resource(url: str) -> str:
    """A resource's URL in one spelling: an http(s) URL's empty path is `/` (RFC 3986
    §6.2.3), as clients write it when they ask a token for it (RFC 8707's `resource`; the
    MCP auth library), so `http://host:8080` and `http://host:8080/` are one resource.
    Anything else (a client id as audience) is as it is."""
    parts = urlsplit(url)
    if parts.scheme in ("http", "https") and parts.netloc and not parts.path:
        return urlunsplit(parts._replace(path="/"))
    return url


def resource_spellings(url: str) -> tuple[str, ...]:
    """Every way of writing one resource that a token's `aud` may hold: the canonical
    one, and for a resource at a host's root the one without its `/` too."""
    canonical = canonical_resource(url)
    parts = urlsplit(canonical)
    if parts.scheme in ("http", "https") and parts.netloc and parts.path == "/":
        return canonical, urlunsplit(parts._replace(path=""))
    return (canonical,)
