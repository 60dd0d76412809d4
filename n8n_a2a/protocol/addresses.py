"""What an IP address is, as far as a push is concerned: public, or which kind of not.

Judged by tables kept here: the IANA IPv4 and IPv6 Special-Purpose Address Registries
(as of 2025), the multicast blocks, and the IPv6 forms that carry an IPv4 address. Not by
`ipaddress`'s `is_global` and `is_private`: those are the running Python's own tables,
and 3.11's predate the registries' 2024 entries (to it, 192.0.0.8 and 64:ff9b:1::/48 are
global).
"""

from __future__ import annotations

import enum
import ipaddress
from collections.abc import Callable
from dataclasses import dataclass

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address
IPNetwork = ipaddress.IPv4Network | ipaddress.IPv6Network


class Kind(enum.Enum):
    """A kind of address that is no place for a push, in the general words a caller hears."""

    UNSPECIFIED = "an unspecified address"
    LOOPBACK = "a loopback address"
    CLOUD_METADATA = "the cloud metadata address"
    LINK_LOCAL = "a link-local address"
    MULTICAST = "a multicast address"
    PRIVATE = "a private address"
    SPECIAL_PURPOSE = "a reserved or special-purpose address, not a public one"


@dataclass(frozen=True, slots=True)
class Entry:
    """A registry row. `globally_reachable` is None where the registry says N/A: a block
    it deprecated, or one that carries an IPv4 address and is as reachable as that is.
    `kind` is what the block is when it is not public; SPECIAL_PURPOSE blocks may be."""

    network: IPNetwork
    name: str
    rfc: str
    globally_reachable: bool | None
    kind: Kind = Kind.SPECIAL_PURPOSE


def _entry(
    network: str,
    name: str,
    rfc: str,
    globally_reachable: bool | None,
    kind: Kind = Kind.SPECIAL_PURPOSE,
) -> Entry:
    return Entry(ipaddress.ip_network(network), name, rfc, globally_reachable, kind)


#: Every entry of both Special-Purpose Address Registries, and the multicast and the
#: site-local blocks that live in neighbouring registries. The most specific entry that
#: holds an address is the one that speaks for it.
REGISTRY: tuple[Entry, ...] = (
    # IANA IPv4 Special-Purpose Address Registry.
    _entry("0.0.0.0/8", '"This network"', "RFC 791 §3.2", False),
    _entry(
        "0.0.0.0/32", '"This host on this network"', "RFC 1122 §3.2.1.3", False, Kind.UNSPECIFIED
    ),
    _entry("10.0.0.0/8", "Private-Use", "RFC 1918", False, Kind.PRIVATE),
    _entry("100.64.0.0/10", "Shared Address Space", "RFC 6598", False),
    _entry("127.0.0.0/8", "Loopback", "RFC 1122 §3.2.1.3", False, Kind.LOOPBACK),
    _entry("169.254.0.0/16", "Link Local", "RFC 3927", False, Kind.LINK_LOCAL),
    _entry("172.16.0.0/12", "Private-Use", "RFC 1918", False, Kind.PRIVATE),
    _entry("192.0.0.0/24", "IETF Protocol Assignments", "RFC 6890 §2.1", False),
    _entry("192.0.0.0/29", "IPv4 Service Continuity Prefix", "RFC 7335", False),
    _entry("192.0.0.8/32", "IPv4 dummy address", "RFC 7600", False),
    _entry("192.0.0.9/32", "Port Control Protocol Anycast", "RFC 7723", True),
    _entry("192.0.0.10/32", "Traversal Using Relays around NAT Anycast", "RFC 8155", True),
    _entry("192.0.0.170/32", "NAT64/DNS64 Discovery", "RFC 8880, RFC 7050 §2.2", False),
    _entry("192.0.0.171/32", "NAT64/DNS64 Discovery", "RFC 8880, RFC 7050 §2.2", False),
    _entry("192.0.2.0/24", "Documentation (TEST-NET-1)", "RFC 5737", False),
    _entry("192.31.196.0/24", "AS112-v4", "RFC 7535", True),
    _entry("192.52.193.0/24", "AMT", "RFC 7450", True),
    _entry("192.88.99.0/24", "Deprecated (6to4 Relay Anycast)", "RFC 7526", None),
    _entry("192.88.99.2/32", "6a44-relay anycast address", "RFC 6751", False),
    _entry("192.168.0.0/16", "Private-Use", "RFC 1918", False, Kind.PRIVATE),
    _entry("192.175.48.0/24", "Direct Delegation AS112 Service", "RFC 7534", True),
    _entry("198.18.0.0/15", "Benchmarking", "RFC 2544", False),
    _entry("198.51.100.0/24", "Documentation (TEST-NET-2)", "RFC 5737", False),
    _entry("203.0.113.0/24", "Documentation (TEST-NET-3)", "RFC 5737", False),
    _entry("240.0.0.0/4", "Reserved", "RFC 1112 §4", False),
    _entry("255.255.255.255/32", "Limited Broadcast", "RFC 8190, RFC 919 §7", False),
    # IANA IPv6 Special-Purpose Address Registry.
    _entry("::1/128", "Loopback Address", "RFC 4291", False, Kind.LOOPBACK),
    _entry("::/128", "Unspecified Address", "RFC 4291", False, Kind.UNSPECIFIED),
    _entry("::ffff:0:0/96", "IPv4-mapped Address", "RFC 4291", False),
    _entry("64:ff9b::/96", "IPv4-IPv6 Translat.", "RFC 6052", True),
    _entry("64:ff9b:1::/48", "IPv4-IPv6 Translat.", "RFC 8215", False),
    _entry("100::/64", "Discard-Only Address Block", "RFC 6666", False),
    _entry("100:0:0:1::/64", "Dummy IPv6 Prefix", "RFC 9780", False),
    _entry("2001::/23", "IETF Protocol Assignments", "RFC 2928", False),
    _entry("2001::/32", "TEREDO", "RFC 4380, RFC 8190", None),
    _entry("2001:1::1/128", "Port Control Protocol Anycast", "RFC 7723", True),
    _entry("2001:1::2/128", "Traversal Using Relays around NAT Anycast", "RFC 8155", True),
    _entry("2001:1::3/128", "DNS-SD Service Registration Protocol Anycast", "RFC 9665", True),
    _entry("2001:2::/48", "Benchmarking", "RFC 5180, RFC Errata 1752", False),
    _entry("2001:3::/32", "AMT", "RFC 7450", True),
    _entry("2001:4:112::/48", "AS112-v6", "RFC 7535", True),
    _entry("2001:10::/28", "Deprecated (previously ORCHID)", "RFC 4843", None),
    _entry("2001:20::/28", "ORCHIDv2", "RFC 7343", True),
    _entry("2001:30::/28", "Drone Remote ID Protocol Entity Tags (DETs) Prefix", "RFC 9374", True),
    _entry("2001:db8::/32", "Documentation", "RFC 3849", False),
    _entry("2002::/16", "6to4", "RFC 3056", None),
    _entry("2620:4f:8000::/48", "Direct Delegation AS112 Service", "RFC 7534", True),
    _entry("3fff::/20", "Documentation", "RFC 9637", False),
    _entry("5f00::/16", "Segment Routing (SRv6) SIDs", "RFC 9602", False),
    _entry("fc00::/7", "Unique-Local", "RFC 4193, RFC 8190", False, Kind.PRIVATE),
    _entry("fe80::/10", "Link-Local Unicast", "RFC 4291", False, Kind.LINK_LOCAL),
    # Not special-purpose entries, and no place for a push either: multicast (a POST is
    # unicast), and IPv6 site-local, the private range unique-local replaced.
    _entry("224.0.0.0/4", "Multicast", "RFC 5771", None, Kind.MULTICAST),
    _entry("ff00::/8", "Multicast", "RFC 4291 §2.7", None, Kind.MULTICAST),
    _entry("fec0::/10", "Site-Local Unicast (deprecated)", "RFC 3879", False, Kind.PRIVATE),
)

#: The one IPv6 block unicast addresses are handed out from (RFC 4291 §2.4, the IANA IPv6
#: Address Space registry): an IPv6 address outside it, and in no entry, is unassigned.
GLOBAL_UNICAST = ipaddress.IPv6Network("2000::/3")

#: Where clouds answer instance metadata (with credentials): AWS, Azure, GCP and the
#: others on 169.254.169.254, AWS also on fd00:ec2::254.
CLOUD_METADATA = frozenset(
    {ipaddress.ip_address("169.254.169.254"), ipaddress.ip_address("fd00:ec2::254")}
)

_IPV4_BITS = 0xFFFFFFFF


def _last_32_bits(value: int) -> tuple[int, ...]:
    return (value & _IPV4_BITS,)


def _rfc6052(value: int, prefix_length: int) -> int:
    """The IPv4 address after a translation prefix of that length (RFC 6052 §2.2): right
    after it, skipping bits 64-71 (the u octet, always zero) when it spans them."""
    if prefix_length == 96:
        return value & _IPV4_BITS
    without_u = (value >> 64 << 56) | (value & ((1 << 56) - 1))
    return (without_u >> (120 - prefix_length - 32)) & _IPV4_BITS


def _local_use_translation(value: int) -> tuple[int, ...]:
    # A network may cut the local-use /48 into any RFC 6052 prefix length it likes (RFC
    # 8215): every place its IPv4 address could sit is judged.
    return tuple(_rfc6052(value, length) for length in (96, 64, 56, 48))


def _sixtofour(value: int) -> tuple[int, ...]:
    return ((value >> 80) & _IPV4_BITS,)


def _teredo(value: int) -> tuple[int, ...]:
    # The server's address, then the client's, stored inverted (RFC 4380 §4).
    return ((value >> 64) & _IPV4_BITS, ~value & _IPV4_BITS)


@dataclass(frozen=True, slots=True)
class Embedding:
    """An IPv6 form that carries IPv4 addresses: a packet to it may end up at them.
    `local_use`: the form's translator is the local network's, so no address in it is
    public, whatever it carries."""

    network: ipaddress.IPv6Network
    name: str
    rfc: str
    positions: Callable[[int], tuple[int, ...]]
    local_use: bool = False

    def carried(self, address: ipaddress.IPv6Address) -> tuple[ipaddress.IPv4Address, ...]:
        found = self.positions(int(address))
        return tuple(ipaddress.IPv4Address(value) for value in dict.fromkeys(found))


def _embedding(
    network: str,
    name: str,
    rfc: str,
    positions: Callable[[int], tuple[int, ...]],
    *,
    local_use: bool = False,
) -> Embedding:
    return Embedding(ipaddress.IPv6Network(network), name, rfc, positions, local_use)


EMBEDDINGS: tuple[Embedding, ...] = (
    _embedding("::ffff:0:0/96", "IPv4-mapped", "RFC 4291 §2.5.5.2", _last_32_bits),
    _embedding("::ffff:0:0:0/96", "IPv4-translated (SIIT)", "RFC 2765 §2.1", _last_32_bits),
    _embedding("::/96", "IPv4-compatible (deprecated)", "RFC 4291 §2.5.5.1", _last_32_bits),
    _embedding("64:ff9b::/96", "IPv4/IPv6 translation", "RFC 6052 §2.1", _last_32_bits),
    _embedding(
        "64:ff9b:1::/48",
        "Local-use IPv4/IPv6 translation",
        "RFC 8215",
        _local_use_translation,
        local_use=True,
    ),
    _embedding("2002::/16", "6to4", "RFC 3056 §2", _sixtofour),
    _embedding("2001::/32", "Teredo", "RFC 4380 §4", _teredo),
)


def registered(address: IPAddress) -> Entry | None:
    """The most specific entry that holds the address; None if none does."""
    holding = (entry for entry in REGISTRY if address in entry.network)
    return max(holding, key=lambda entry: entry.network.prefixlen, default=None)


def embedding(address: ipaddress.IPv6Address) -> Embedding | None:
    """The IPv6 form the address is in, if it is one that carries IPv4 addresses."""
    return next((form for form in EMBEDDINGS if address in form.network), None)


def non_public(address: IPAddress) -> Kind | None:
    """What kind of address this is, when a push must not go there; None for a public one.

    An IPv6 form that carries IPv4 addresses is judged by them, unless the registry names
    the address itself (::1 is a loopback address, not 0.0.0.1 in IPv4-compatible form).
    """
    if address in CLOUD_METADATA:
        return Kind.CLOUD_METADATA
    entry = registered(address)
    if entry is not None and entry.kind is not Kind.SPECIAL_PURPOSE:
        return entry.kind
    if isinstance(address, ipaddress.IPv6Address):
        form = embedding(address)
        if form is not None:
            for carried in form.carried(address):
                kind = non_public(carried)
                if kind is not None:
                    return kind
            return Kind.SPECIAL_PURPOSE if form.local_use else None
        if entry is None and address not in GLOBAL_UNICAST:
            return Kind.SPECIAL_PURPOSE
    if entry is not None and not entry.globally_reachable:
        return Kind.SPECIAL_PURPOSE
    return None
