"""Push notification configs, and where the adapter may POST them.

Pure: the config the codecs decode into and encode from, the checks a URL must pass
before anything is looked up, and the address policy (which addresses a push may go
to, given ADAPTER_PUSH_ALLOW_HOSTS) as a function over parsed addresses, what an address
is coming from addresses.py. Resolving a name, connecting and telling the caller belong
to n8n_a2a/push/, which judges each address with `refusal`.
"""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

if TYPE_CHECKING:  # the registry of addresses: imported by the first address judged
    from .addresses import IPAddress, IPNetwork, Kind

#: The variable that lets a push reach an address the policy refuses.
ALLOW_VARIABLE = "ADAPTER_PUSH_ALLOW_HOSTS"
# What one config may hold, field by field: a task keeps ADAPTER_PUSH_MAX_CONFIGS of them
# for as long as it is kept, so each field is bounded (docs/operating.md, "Memory").
MAX_URL_LENGTH = 2048
#: A token or credentials: a JWT or an opaque key fits in 4 KiB.
MAX_SECRET_LENGTH = 4096
#: An authentication scheme (`Bearer`, `Basic`, ...): an HTTP token, and a short one.
MAX_SCHEME_LENGTH = 64
MAX_CONFIG_ID_LENGTH = 256


@dataclass(frozen=True, slots=True)
class PushAuthentication:
    """How the receiver wants the adapter to authenticate: `Authorization: scheme credentials`."""

    scheme: str
    credentials: str | None = None

    @property
    def header(self) -> str | None:
        """The Authorization header's value; none without credentials (a scheme alone says
        nothing a receiver could check)."""
        return f"{self.scheme} {self.credentials}" if self.credentials else None


@dataclass(frozen=True, slots=True)
class PushConfig:
    """Where one task's updates go. `version` is the A2A version of the request that made
    it, which decides what its receiver gets: a v1.0 StreamResponse or a v0.3 Task."""

    task_id: str
    id: str
    url: str
    token: str | None = None
    authentication: PushAuthentication | None = None
    version: str = "1.0"

    def for_task(self, task_id: str) -> PushConfig:
        """The config of an inline send, once its task exists; an id left empty becomes
        the task's, as the SDKs do."""
        return replace(self, task_id=task_id, id=self.id or task_id)


@dataclass(frozen=True, slots=True)
class CreatePushConfig:
    """v1.0 `CreateTaskPushNotificationConfig`, v0.3 `tasks/pushNotificationConfig/set`."""

    config: PushConfig

    @property
    def task_id(self) -> str:
        return self.config.task_id


@dataclass(frozen=True, slots=True)
class GetPushConfig:
    """v1.0 `GetTaskPushNotificationConfig`, v0.3 `tasks/pushNotificationConfig/get`
    (whose config id may be absent: then the config named after the task)."""

    task_id: str
    config_id: str


@dataclass(frozen=True, slots=True)
class ListPushConfigs:
    task_id: str
    page_size: int | None = None
    page_token: str | None = None


@dataclass(frozen=True, slots=True)
class DeletePushConfig:
    task_id: str
    config_id: str


@dataclass(frozen=True, slots=True)
class PushConfigPage:
    configs: tuple[PushConfig, ...]
    next_page_token: str = ""


PushOperation = CreatePushConfig | GetPushConfig | ListPushConfigs | DeletePushConfig

# What a config may carry.

# Characters that make no sense in a URL and that parsers read differently (a backslash
# is a path in one and the end of the host in another).
_UNSAFE_IN_URL = re.compile(r"[\x00-\x20\x7f\\]")
# RFC 9110 token: an authentication scheme.
_TOKEN = re.compile(r"[!#$%&'*+.^_`|~0-9A-Za-z-]+")
# A header value: visible ASCII, spaces only inside.
_HEADER_VALUE = re.compile(r"[\x21-\x7e](?:[\x20-\x7e]*[\x21-\x7e])?")


def url_problem(url: str) -> str | None:
    """Why `url` cannot be a push URL, before any name in it is looked up; None if it can."""
    if len(url) > MAX_URL_LENGTH:
        return f"must be at most {MAX_URL_LENGTH} characters"
    if _UNSAFE_IN_URL.search(url):
        return "must not contain spaces, control characters or backslashes"
    try:
        parts = urlsplit(url)
        parts.port  # noqa: B018 - raises ValueError for a port that is not a number
    except ValueError as error:
        return f"is not a valid URL: {error}"
    if parts.scheme.lower() not in ("http", "https") or not parts.hostname:
        return "must be an http:// or https:// URL with a host"
    if "@" in parts.netloc:
        return "must not carry credentials (user:password@); use authentication instead"
    return None


def scheme_problem(scheme: str) -> str | None:
    if len(scheme) > MAX_SCHEME_LENGTH:
        return f"must be at most {MAX_SCHEME_LENGTH} characters"
    return None if _TOKEN.fullmatch(scheme) else "must be an HTTP authentication scheme (a token)"


def header_value_problem(value: str) -> str | None:
    """Why a token or credentials cannot travel in a header; None if they can."""
    if len(value) > MAX_SECRET_LENGTH:
        return f"must be at most {MAX_SECRET_LENGTH} characters"
    if not _HEADER_VALUE.fullmatch(value):
        return "must be printable ASCII without leading or trailing spaces"
    return None


# Where a push may go.


@dataclass(frozen=True, slots=True)
class AllowList:
    """ADAPTER_PUSH_ALLOW_HOSTS: host names, addresses and networks a push may reach even
    though the policy refuses their addresses.

    A name allows URLs with that host, whatever it resolves to; an address or network
    allows URLs that name an address in it. A name is never let through for the address
    it resolves to: DNS is the caller's to choose, the allow-list the operator's.
    """

    names: frozenset[str] = frozenset()
    networks: tuple[IPNetwork, ...] = ()

    @classmethod
    def parse(cls, raw: str) -> AllowList:
        """Comma-separated entries; ValueError naming the first one that is neither."""
        names: set[str] = set()
        networks: list[IPNetwork] = []
        for entry in (e.strip() for e in raw.split(",")):
            if not entry:
                continue
            try:
                networks.append(ipaddress.ip_network(entry.removeprefix("[").removesuffix("]")))
                continue
            except ValueError:
                pass
            name = _host_name(entry)
            if not _NAME.fullmatch(name) or name.replace(".", "").isdigit():
                raise ValueError(
                    f"{entry!r} is neither a host name, an IP address nor a network "
                    "(CIDR, with no bits set past the prefix, e.g. 10.0.0.0/8)"
                )
            names.add(name)
        return cls(frozenset(names), tuple(networks))

    def allows_name(self, host: str) -> bool:
        return _host_name(host) in self.names

    def allows_address(self, address: IPAddress) -> bool:
        return any(address in network for network in self.networks)


# A DNS name, lower-cased: labels of letters, digits, '-' and '_', dot-separated.
_LABEL = r"[a-z0-9_][a-z0-9_-]{0,62}"
_NAME = re.compile(rf"(?=.{{1,253}}$){_LABEL}(?:\.{_LABEL})*")


def _host_name(host: str) -> str:
    return host.strip().lower().removesuffix(".")


def literal_address(host: str) -> IPAddress | None:
    """The address a URL's host names literally (`[::1]` included); None for a name."""
    try:
        return ipaddress.ip_address(host.removeprefix("[").removesuffix("]"))
    except ValueError:
        return None


@dataclass(frozen=True, slots=True)
class Refusal:
    """The policy's no: the address it refused and what kind of address that is.

    `literal`: the URL names the address itself, so the caller wrote it. Otherwise it is
    what the host's name resolved to, which tells of the operator's network, not the
    caller's request.
    """

    address: IPAddress
    kind: Kind
    literal: bool


def refusal(host: str, addresses: Sequence[IPAddress], allow: AllowList) -> Refusal | None:
    """Why a push to `host` must not go to these addresses (what it resolved to; a literal
    address is judged alone); None if it may."""
    if allow.allows_name(host):
        return None
    literal = literal_address(host)
    if literal is not None and allow.allows_address(literal):
        return None
    # Its table and dataclasses are a cost to every start, and only a push is judged.
    from .addresses import non_public

    for address in addresses if literal is None else (literal,):
        kind = non_public(address)
        if kind is not None:
            return Refusal(address, kind, literal=literal is not None)
    return None
