"""How one variable's text becomes a value: each reader returns it or raises ValueError
with what is wrong, worded to follow the variable's name."""

from __future__ import annotations

import importlib.util
import math
import re
import ssl
from collections.abc import Callable
from functools import partial
from typing import TypeVar
from urllib.parse import urlsplit

from ..protocol.media import ANY, MAX_MODES, TEXT, listed, media_type
from ..protocol.urls import canonical_resource

T = TypeVar("T")

_SKILL_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,127}$")
#: RFC 3986's unreserved and sub-delims characters, and the URL's own delimiters.
_URL_CHARACTERS = re.compile(r"[A-Za-z0-9\-._~!$&'()*+,;=:@/\[\]]+")
#: Scopes a token may be asked for (ADAPTER_OIDC_SCOPES).
MAX_SCOPES = 16
#: A scope token: printable ASCII but for the space, the quote and the backslash.
_SCOPE = re.compile(r"[\x21\x23-\x5b\x5d-\x7e]{1,128}")
_KEY_ID = re.compile(r"[\x21-\x7e]{1,128}")


def quoting(parse: Callable[[str], T]) -> Callable[[str], T]:
    """`parse`, its problem followed by the value it refused. Only for values that are no
    secret: a reader of a secret words its problems without the value."""

    def quoted(raw: str) -> T:
        try:
            return parse(raw)
        except ValueError as error:
            raise ValueError(f"{error} (got {raw!r})") from None

    return quoted


def text(raw: str) -> str:
    return raw


def waiting_path(raw: str) -> str:
    """A URL path from `/` to `/`, of URL characters: n8n's N8N_PATH then its
    N8N_ENDPOINT_WEBHOOK_WAIT (`/webhook-waiting/`)."""
    if not (raw.startswith("/") and raw.endswith("/") and _URL_CHARACTERS.fullmatch(raw)):
        raise ValueError(f"must be a URL path that starts and ends with '/' (got {raw!r})")
    if any(segment in (".", "..") for segment in raw.split("/")):
        raise ValueError(f"must name no '.' or '..' segment (got {raw!r})")
    return raw


def lines(raw: str) -> tuple[str, ...]:
    return tuple(line.strip() for line in raw.splitlines() if line.strip())


def skill_id(raw: str) -> str:
    if not _SKILL_ID.match(raw):
        raise ValueError(f"must be letters, digits, '_', '.' or '-' (got {raw!r})")
    return raw


def media_types(raw: str) -> tuple[str, ...]:
    """Comma-separated media types, `type/subtype` or `*/*`, each once, at most MAX_MODES."""
    found: list[str] = []
    for item in (piece.strip() for piece in raw.split(",")):
        essence = media_type(item) if item and ";" not in item else None
        if essence is None or (essence.endswith("/*") and essence != ANY):
            raise ValueError(f"must be media types such as text/plain or */*, not {item!r}")
        if essence not in found:
            found.append(essence)
    if len(found) > MAX_MODES:
        raise ValueError(f"must name at most {MAX_MODES} media types")
    return tuple(found)


def output_modes(raw: str) -> tuple[str, ...]:
    """Media types, text/plain (or */*) among them: every answer is text."""
    found = media_types(raw)
    if not listed(found, TEXT):
        raise ValueError("must include text/plain: every task's answer is text")
    return found


def http_url(raw: str) -> str:
    try:
        parts = urlsplit(raw)
        parts.port  # noqa: B018 - raises ValueError for a port that is not a number
    except ValueError as error:
        raise ValueError(f"is not a valid URL: {error}") from None
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ValueError(f"must be an http:// or https:// URL with a host (got {raw!r})")
    if parts.username is not None or parts.password is not None:
        # The adapter holds no credentials; one in a URL would also land in logs.
        raise ValueError("must not carry credentials (user:password@)")
    return raw


def public_url(raw: str) -> str:
    """The URL callers dial: an http(s) URL whose path the endpoint is served at, so no
    query or fragment, and only characters a URI and a header's quoted string carry as
    they are (RFC 3986's unreserved and sub-delims, ':', '@', '/'): no percent-encoding,
    which the route would not match. An empty path is `/`: the card, the resource a
    token is asked for, and the audience are then spelled alike, however it is written."""
    url = http_url(raw)
    parts = urlsplit(url)
    if parts.query or parts.fragment or "?" in url or "#" in url:
        raise ValueError("must not have a query or a fragment: its path is the endpoint")
    if not _URL_CHARACTERS.fullmatch(url):
        raise ValueError(
            "must be letters, digits and - . _ ~ ! $ & ' ( ) * + , ; = : @ / only "
            "(a host in punycode, no spaces, quotes or percent-encoding)"
        )
    return canonical_resource(url)


def oidc_audience(raw: str) -> str:
    """The `aud` a token must carry: a URL (the public URL, say) in its canonical
    spelling, an empty path as `/`; a client id as it is."""
    return canonical_resource(raw)


def ca_bundle(path: str) -> str:
    try:
        ssl.create_default_context(cafile=path)
    except FileNotFoundError:
        raise ValueError(f"no such file: {path}") from None
    except (ssl.SSLError, OSError, ValueError) as error:
        raise ValueError(f"is not a readable PEM CA file: {path} ({error})") from None
    return path


def oidc_issuer(raw: str) -> str:
    issuer = http_url(raw)
    try:
        # The optional extra: PyJWT, with cryptography for the asymmetric algorithms.
        from jwt.algorithms import has_crypto
    except ImportError:
        has_crypto = False
    if not has_crypto:
        raise ValueError("verifying tokens needs the oidc extra: pip install 'n8n-a2a[oidc]'")
    return issuer


def https_url(raw: str) -> str:
    url = http_url(raw)
    if urlsplit(url).scheme != "https":
        raise ValueError(f"must be an https:// URL (got {raw!r})")
    return url


def key_id(raw: str) -> str:
    """A JWS `kid`: printable ASCII, at most 128 characters, as a JWKS would name it."""
    if not _KEY_ID.fullmatch(raw):
        raise ValueError("must be at most 128 printable ASCII characters, no spaces")
    return raw


def scopes(raw: str) -> tuple[str, ...]:
    """OAuth scope names (RFC 6749 §3.3), space-separated, each once, at most MAX_SCOPES of
    at most 128 characters: the card and every challenge list them."""
    found: list[str] = []
    for name in raw.split():
        if not _SCOPE.fullmatch(name):
            raise ValueError(
                "must be scope names of at most 128 characters, without quotes or "
                f"backslashes, not {name!r}"
            )
        if name not in found:
            found.append(name)
    if len(found) > MAX_SCOPES:
        raise ValueError(f"must name at most {MAX_SCOPES} scopes")
    return tuple(found)


def store_url(raw: str) -> str:
    """A PostgreSQL URL. Never quoted back: it may hold a password."""
    scheme = raw.partition("://")[0].lower() if "://" in raw else ""
    if scheme not in ("postgresql", "postgres"):
        raise ValueError("must be a postgresql:// URL (postgresql://user@host/database)")
    if importlib.util.find_spec("psycopg") is None:
        raise ValueError("needs the PostgreSQL driver: pip install 'n8n-a2a[postgres]'")
    # The postgres extra: imported only when a store URL is set.
    import psycopg
    from psycopg.conninfo import conninfo_to_dict

    malformed = ValueError(
        "is not a valid postgresql:// URL (in the user name and password, write '@' as %40,"
        " '/' as %2F and '%' as %25)"
    )
    try:
        conninfo_to_dict(raw)
    except psycopg.Error:
        raise malformed from None  # libpq's message quotes the URL
    # libpq takes the user and password up to the first '@', unless a '/' comes first: a
    # further '@' (one in the password) would make a host of what follows it.
    userinfo, at, rest = raw.partition("://")[2].partition("@")
    if "@" in rest or (at and "/" in userinfo):
        raise malformed
    return raw


def lease(raw: str) -> float:
    value = seconds(raw)
    if value < 1:
        raise ValueError("must be a number of seconds, at least 1")
    return value


def host(raw: str) -> str:
    if any(c.isspace() for c in raw) or "/" in raw:
        raise ValueError("must be a host name or IP address")
    return raw


def port(raw: str) -> int:
    if not raw.isdigit() or not 0 <= int(raw) <= 65535:
        raise ValueError("must be a whole number from 0 to 65535")
    return int(raw)


def seconds(raw: str) -> float:
    try:
        value = float(raw)
    except ValueError:
        raise ValueError("must be a number of seconds") from None
    if not math.isfinite(value) or value <= 0:
        raise ValueError("must be a number of seconds greater than 0")
    return value


def boolean(raw: str) -> bool:
    if raw.lower() in ("true", "1", "yes"):
        return True
    if raw.lower() in ("false", "0", "no"):
        return False
    raise ValueError("must be true or false")


def one_of(*choices: str) -> Callable[[str], str]:
    """A reader of one of `choices`, in any case, answering it as written here."""

    def parse(raw: str) -> str:
        for choice in choices:
            if raw.lower() == choice.lower():
                return choice
        raise ValueError(f"must be one of {', '.join(choices)}")

    return parse


def at_least(minimum: int) -> Callable[[str], int]:
    """A reader of a whole number no smaller than `minimum`."""
    return partial(_whole_number, minimum=minimum)


def _whole_number(raw: str, minimum: int) -> int:
    if not raw.isdigit() or int(raw) < minimum:
        raise ValueError(f"must be a whole number, at least {minimum}")
    return int(raw)
