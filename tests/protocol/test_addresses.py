"""What an address is, as a table: every registry entry from inside and from just outside,
every IPv6 form that carries an IPv4 address, and the addresses a push may reach."""

from __future__ import annotations

import ipaddress

import pytest

from n8n_a2a.protocol.addresses import EMBEDDINGS, REGISTRY, Kind, embedding, non_public

UNSPECIFIED = Kind.UNSPECIFIED
LOOPBACK = Kind.LOOPBACK
METADATA = Kind.CLOUD_METADATA
LINK_LOCAL = Kind.LINK_LOCAL
MULTICAST = Kind.MULTICAST
PRIVATE = Kind.PRIVATE
SPECIAL = Kind.SPECIAL_PURPOSE

IPV4 = [
    # 0.0.0.0/8 "This network", and 0.0.0.0/32 in it.
    ("0.0.0.0", UNSPECIFIED),
    ("0.0.0.1", SPECIAL),
    ("0.255.255.255", SPECIAL),
    ("1.0.0.0", None),
    # 10.0.0.0/8 Private-Use.
    ("9.255.255.255", None),
    ("10.0.0.0", PRIVATE),
    ("10.255.255.255", PRIVATE),
    ("11.0.0.0", None),
    # 100.64.0.0/10 Shared Address Space.
    ("100.63.255.255", None),
    ("100.64.0.0", SPECIAL),
    ("100.127.255.255", SPECIAL),
    ("100.128.0.0", None),
    # 127.0.0.0/8 Loopback.
    ("126.255.255.255", None),
    ("127.0.0.1", LOOPBACK),
    ("127.255.255.255", LOOPBACK),
    ("128.0.0.0", None),
    # 169.254.0.0/16 Link Local, with the cloud metadata address in it.
    ("169.253.255.255", None),
    ("169.254.0.0", LINK_LOCAL),
    ("169.254.169.254", METADATA),
    ("169.254.169.253", LINK_LOCAL),
    ("169.254.255.255", LINK_LOCAL),
    ("169.255.0.0", None),
    # 172.16.0.0/12 Private-Use.
    ("172.15.255.255", None),
    ("172.16.0.0", PRIVATE),
    ("172.31.255.255", PRIVATE),
    ("172.32.0.0", None),
    # 192.0.0.0/24 IETF Protocol Assignments, and the entries in it: the /29, the dummy
    # address, two globally reachable anycast addresses, NAT64/DNS64 discovery.
    ("191.255.255.255", None),
    ("192.0.0.0", SPECIAL),
    ("192.0.0.7", SPECIAL),
    ("192.0.0.8", SPECIAL),
    ("192.0.0.9", None),
    ("192.0.0.10", None),
    ("192.0.0.11", SPECIAL),
    ("192.0.0.170", SPECIAL),
    ("192.0.0.171", SPECIAL),
    ("192.0.0.255", SPECIAL),
    ("192.0.1.0", None),
    # 192.0.2.0/24 TEST-NET-1.
    ("192.0.2.0", SPECIAL),
    ("192.0.2.255", SPECIAL),
    ("192.0.3.0", None),
    # Globally reachable: 192.31.196.0/24 AS112-v4, 192.52.193.0/24 AMT,
    # 192.175.48.0/24 AS112 direct delegation.
    ("192.31.196.1", None),
    ("192.52.193.1", None),
    ("192.175.48.1", None),
    # 192.88.99.0/24, deprecated 6to4 relay anycast, with the 6a44 relay in it.
    ("192.88.98.255", None),
    ("192.88.99.1", SPECIAL),
    ("192.88.99.2", SPECIAL),
    ("192.88.100.0", None),
    # 192.168.0.0/16 Private-Use.
    ("192.167.255.255", None),
    ("192.168.0.0", PRIVATE),
    ("192.168.255.255", PRIVATE),
    ("192.169.0.0", None),
    # 198.18.0.0/15 Benchmarking.
    ("198.17.255.255", None),
    ("198.18.0.0", SPECIAL),
    ("198.19.255.255", SPECIAL),
    ("198.20.0.0", None),
    # 198.51.100.0/24 TEST-NET-2, 203.0.113.0/24 TEST-NET-3.
    ("198.51.100.1", SPECIAL),
    ("198.51.101.0", None),
    ("203.0.112.255", None),
    ("203.0.113.1", SPECIAL),
    ("203.0.114.0", None),
    # 224.0.0.0/4 multicast, 240.0.0.0/4 reserved, 255.255.255.255 limited broadcast.
    ("223.255.255.255", None),
    ("224.0.0.0", MULTICAST),
    ("239.255.255.255", MULTICAST),
    ("240.0.0.0", SPECIAL),
    ("255.255.255.254", SPECIAL),
    ("255.255.255.255", SPECIAL),
]

IPV6 = [
    ("::", UNSPECIFIED),
    ("::1", LOOPBACK),
    # 100::/64 Discard-Only, 100:0:0:1::/64 Dummy IPv6 Prefix.
    ("100::1", SPECIAL),
    ("100::ffff:ffff:ffff:ffff", SPECIAL),
    ("100:0:0:1::1", SPECIAL),
    # 2001::/23 IETF Protocol Assignments, and its globally reachable entries.
    ("2001:1::1", None),
    ("2001:1::2", None),
    ("2001:1::3", None),
    ("2001:1::4", SPECIAL),
    ("2001:2::1", SPECIAL),
    ("2001:3::1", None),
    ("2001:4:112::1", None),
    ("2001:4:113::1", SPECIAL),
    ("2001:10::1", SPECIAL),
    ("2001:20::1", None),
    ("2001:2f:ffff::1", None),
    ("2001:30::1", None),
    ("2001:3f:ffff::1", None),
    ("2001:40::1", SPECIAL),
    ("2001:1ff:ffff::1", SPECIAL),
    ("2001:200::1", None),
    # 2001:db8::/32 and 3fff::/20 Documentation.
    ("2001:db8::1", SPECIAL),
    ("2001:db9::1", None),
    ("3fff::1", SPECIAL),
    ("3fff:fff:ffff::1", SPECIAL),
    ("3fff:1000::1", None),
    # 2620:4f:8000::/48 AS112 direct delegation: globally reachable.
    ("2620:4f:8000::1", None),
    ("2620:4f:7fff::1", None),
    # 5f00::/16 SRv6 SIDs.
    ("5f00::1", SPECIAL),
    # fc00::/7 Unique-Local, with AWS's metadata address; fec0::/10 site-local.
    ("fc00::1", PRIVATE),
    ("fdff:ffff::1", PRIVATE),
    ("fd00:ec2::254", METADATA),
    ("fec0::1", PRIVATE),
    # fe80::/10 Link-Local.
    ("fe80::1", LINK_LOCAL),
    ("fe80::1%eth0", LINK_LOCAL),
    ("febf:ffff::1", LINK_LOCAL),
    # ff00::/8 multicast.
    ("ff02::1", MULTICAST),
    ("ff0e::1", MULTICAST),
    # Outside 2000::/3 and every entry: unassigned.
    ("4000::1", SPECIAL),
    ("1fff:ffff::1", SPECIAL),
    ("e000::1", SPECIAL),
    ("fbff:ffff::1", SPECIAL),
    # Public.
    ("2606:4700::1111", None),
    ("2606:4700:4700::1111", None),
    ("2001:4860:4860::8888", None),
]

# Each form that carries an IPv4 address, judged by it.
EMBEDDED = [
    # ::ffff:0:0/96 IPv4-mapped.
    ("::ffff:127.0.0.1", LOOPBACK),
    ("::ffff:169.254.169.254", METADATA),
    ("::ffff:10.0.0.1", PRIVATE),
    ("::ffff:192.0.0.8", SPECIAL),
    ("::ffff:8.8.8.8", None),
    # ::ffff:0:0:0/96 IPv4-translated (SIIT).
    ("::ffff:0:7f00:1", LOOPBACK),
    ("::ffff:0:a9fe:a9fe", METADATA),
    ("::ffff:0:808:808", None),
    # ::/96 IPv4-compatible (past :: and ::1, which are themselves).
    ("::7f00:1", LOOPBACK),
    ("::a00:1", PRIVATE),
    ("::2", SPECIAL),
    ("::808:808", None),
    # 64:ff9b::/96, the well-known translation prefix; just past it is unassigned.
    ("64:ff9b::a00:1", PRIVATE),
    ("64:ff9b::a9fe:a9fe", METADATA),
    ("64:ff9b::808:808", None),
    ("64:ff9b::1:808:808", SPECIAL),
    # 64:ff9b:1::/48, local-use translation: what it carries, and refused even when public.
    ("64:ff9b:1::7f00:1", LOOPBACK),
    ("64:ff9b:1::808:808", SPECIAL),
    # 2002::/16 6to4.
    ("2002:7f00:1::1", LOOPBACK),
    ("2002:a9fe:a9fe::1", METADATA),
    ("2002:c0a8:101::1", PRIVATE),
    ("2002:808:808::1", None),
    # 2001::/32 Teredo: the server's address (bits 32-63) and the client's (inverted).
    ("2001:0:4136:e378:8000:63bf:3fff:fdd2", SPECIAL),  # RFC 4380's client, 192.0.2.45
    ("2001:0:a00:1::f7f7:f7f7", PRIVATE),  # server 10.0.0.1
    ("2001:0:808:808::80ff:fffe", LOOPBACK),  # client 127.0.0.1
    ("2001:0:808:808::f7f7:f7f7", None),  # both 8.8.8.8
]


@pytest.mark.parametrize(("address", "kind"), IPV4 + IPV6 + EMBEDDED)
def test_address_kinds(address: str, kind: Kind | None) -> None:
    assert non_public(ipaddress.ip_address(address)) is kind


# What the review found Python 3.11.7's `is_global` let through.
@pytest.mark.parametrize("address", ["::ffff:0:7f00:1", "64:ff9b:1::7f00:1", "192.0.0.8"])
def test_what_python_3_11_calls_global_is_refused(address: str) -> None:
    assert non_public(ipaddress.ip_address(address)) is not None


@pytest.mark.parametrize(
    "address",
    [
        "64:ff9b:1:c000:2:2100::",  # /48: around the u octet (RFC 6052 §2.4's example)
        "64:ff9b:1:c0:0:221::",  # /56
        "64:ff9b:1:0:c0:2:2100:0",  # /64
        "64:ff9b:1::c000:221",  # /96
    ],
)
def test_a_local_use_prefix_carries_its_address_wherever_rfc_6052_puts_it(address: str) -> None:
    ipv6 = ipaddress.IPv6Address(address)
    form = embedding(ipv6)
    assert form is not None and form.local_use
    assert ipaddress.IPv4Address("192.0.2.33") in form.carried(ipv6)


@pytest.mark.parametrize(
    ("address", "carried"),
    [
        ("::ffff:192.0.2.1", ["192.0.2.1"]),
        ("::ffff:0:c000:201", ["192.0.2.1"]),
        ("::c000:201", ["192.0.2.1"]),
        ("64:ff9b::192.0.2.33", ["192.0.2.33"]),
        ("2002:c000:201::1", ["192.0.2.1"]),
        ("2001:0:4136:e378:8000:63bf:3fff:fdd2", ["65.54.227.120", "192.0.2.45"]),
        ("2606:4700::1111", None),
    ],
)
def test_the_ipv4_addresses_each_form_carries(address: str, carried: list[str] | None) -> None:
    ipv6 = ipaddress.IPv6Address(address)
    form = embedding(ipv6)
    found = None if form is None else [str(ipv4) for ipv4 in form.carried(ipv6)]
    assert found == carried


@pytest.mark.parametrize("address", ["8.8.8.8", "1.1.1.1", "93.184.215.14", "2606:4700::1111"])
def test_public_addresses(address: str) -> None:
    assert non_public(ipaddress.ip_address(address)) is None


def test_the_table_is_well_formed() -> None:
    networks = [entry.network for entry in REGISTRY]
    assert len(networks) == len(set(networks))
    for entry in REGISTRY:
        assert entry.name and entry.rfc.startswith("RFC ")
        # A kind that refuses whatever the flag says must agree with the flag.
        if entry.kind is not Kind.SPECIAL_PURPOSE:
            assert not entry.globally_reachable, entry
    forms = [form.network for form in EMBEDDINGS]
    assert all(a == b or not a.overlaps(b) for a in forms for b in forms)
