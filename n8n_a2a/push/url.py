"""A push URL read the way httpx read it when it carried the POSTs: the host the guard
judges, and what the POST is then made of (the name for Host and TLS, the target).

The guard judges the host read here and the POST goes out with it: one reading, so no
other parser can see another host in the same URL. The reading is httpx's (0.28, its
_urlparse): the host lower-cased and IDNA-encoded (IDNA 2008, the `idna` package), an
IPv4- or IPv6-looking host checked as an address, the other ASCII characters of a name
percent-encoded as httpx encoded them; "." and ".." segments dropped from the path, the
path and query percent-encoded with the WHATWG URL standard's sets; the port left out
of Host when it is the scheme's. Stricter than httpx where protocol/push.py's url_problem
already refuses (so no push config holds such a URL): a scheme other than http(s), no
host, user:password@, a port that is no number from 1 to 65535, a leading or trailing
space. Two quirks of httpx are not kept: it named a scheme's default port in Host when
the scheme was written in capitals (`HTTP://host:80/`), and it read port 0 as none
(connecting to the scheme's port, with `host:0` in Host): here port 0 is refused.
"""

from __future__ import annotations

import ipaddress
import re
from dataclasses import dataclass
from urllib.parse import quote, urlsplit

from ..webhook.http11 import request_target

_DEFAULT_PORTS = {"http": 80, "https": 443}
# What httpx leaves as written of a name, besides the unreserved characters (which quote
# keeps): RFC 3986's sub-delims and what the WHATWG standard lets through. (A path and a
# query: webhook/http11.py's request_target.)
_NAME_KEEPS = "!$&'()*+,;=" + '"`{}%|\\'
_AUTHORITY = re.compile(r"(\[.*\]|[^:]*):?(.*)", re.DOTALL)
_IPV4_LOOKING = re.compile(r"[0-9]+\.[0-9]+\.[0-9]+\.[0-9]+")


@dataclass(frozen=True, slots=True)
class PushURL:
    """Where a POST goes and what it names: the scheme ("http" or "https"), the host to
    judge and check TLS against (ASCII: a name in its IDNA form, an IPv6 address without
    brackets), the port, the request target, and the Host header's value."""

    scheme: str
    host: str
    port: int
    target: bytes
    host_header: bytes


def read_url(url: str) -> PushURL:
    """The URL as a POST reads it; ValueError, saying why, for one it cannot read."""
    bad = next((c for c in url if c.isascii() and not c.isprintable()), None)
    if bad is not None:
        raise ValueError(f"Invalid non-printable ASCII character in URL, {bad!r}")
    if url[:1] == " " or url[-1:] == " ":
        raise ValueError("a space before or after the URL")
    parts = urlsplit(url)  # ValueError for brackets that hold no address
    if parts.scheme not in _DEFAULT_PORTS:
        raise ValueError("the scheme is not http or https")
    if "@" in parts.netloc:
        raise ValueError("the URL carries credentials (user:password@)")
    found = _AUTHORITY.fullmatch(parts.netloc)
    assert found is not None  # every string matches
    host, port = _host(found[1]), _port(found[2], parts.scheme)
    if not host:
        raise ValueError("the URL names no host")
    named = f"[{host}]" if ":" in host else host
    host_header = named if port == _DEFAULT_PORTS[parts.scheme] else f"{named}:{port}"
    # Even an empty query keeps its "?": httpx sent it.
    query = parts.query if "?" in url.partition("#")[0] else None
    target = request_target(_without_dot_segments(parts.path), query)
    return PushURL(parts.scheme, host, port, target, host_header.encode("ascii"))


def _host(host: str) -> str:
    """The host as httpx encoded it: an address checked, a name lower-cased and encoded."""
    if _IPV4_LOOKING.fullmatch(host):
        try:
            ipaddress.IPv4Address(host)
        except ipaddress.AddressValueError:
            raise ValueError(f"Invalid IPv4 address: {host!r}") from None
        return host
    if host[:1] == "[" and host[-1:] == "]":
        try:
            ipaddress.IPv6Address(host[1:-1])
        except ipaddress.AddressValueError:
            raise ValueError(f"Invalid IPv6 address: {host!r}") from None
        return host[1:-1]
    if host.isascii():
        return quote(host.lower(), safe=_NAME_KEEPS)
    import idna  # httpx's IDNA encoder: only an international name needs it

    try:
        return idna.encode(host.lower()).decode("ascii")
    except idna.IDNAError:
        raise ValueError(f"Invalid IDNA hostname: {host!r}") from None


def _port(port: str, scheme: str) -> int:
    if not port:
        return _DEFAULT_PORTS[scheme]
    if not (port.isascii() and port.isdigit()) or not 0 < int(port) <= 65535:
        raise ValueError(f"Invalid port: {port!r}")
    return int(port)


def _without_dot_segments(path: str) -> str:
    """The path without its "." and ".." segments (RFC 3986 5.2.4), as httpx read it."""
    segments = path.split("/")
    if "." not in segments and ".." not in segments:
        return path
    kept: list[str] = []
    for segment in segments:
        if segment == "..":
            if kept and kept != [""]:
                kept.pop()
        elif segment != ".":
            kept.append(segment)
    return "/".join(kept)
