"""Where a push may go, as a table: URLs, addresses, host names and the allow-list."""

from __future__ import annotations

import ipaddress

import pytest

from n8n_a2a.protocol.push import (
    AllowList,
    PushAuthentication,
    PushConfig,
    address_refusal,
    header_value_problem,
    literal_address,
    refusal,
    scheme_problem,
    url_problem,
)


@pytest.mark.parametrize(
    "url",
    [
        "http://receiver.example/hook",
        "https://receiver.example:8443/a2a/hook?task=1",
        "HTTPS://Receiver.Example/hook",
        "http://127.0.0.1:9000/",
        "http://[::1]:9000/",
        "https://xn--bcher-kva.example/",
    ],
)
def test_urls_a_push_may_name(url: str) -> None:
    assert url_problem(url) is None


@pytest.mark.parametrize(
    ("url", "words"),
    [
        ("ftp://receiver.example/", "http:// or https://"),
        ("file:///etc/passwd", "http:// or https://"),
        ("receiver.example/hook", "http:// or https://"),
        ("http:///hook", "http:// or https://"),
        ("http://user:secret@receiver.example/", "credentials"),
        ("http://@receiver.example/", "credentials"),
        ("http://receiver.example:99999/", "not a valid URL"),
        ("http://127.0.0.1\\@evil.example/", "backslashes"),
        ("http://receiver.example/a b", "spaces"),
        ("http://receiver.example/\r\nX-Evil: 1", "control characters"),
        ("http://receiver.example/" + "x" * 2048, "at most 2048"),
    ],
)
def test_urls_a_push_may_not_name(url: str, words: str) -> None:
    problem = url_problem(url)
    assert problem is not None and words in problem


@pytest.mark.parametrize(
    ("address", "kind"),
    [
        ("127.0.0.1", "a loopback address"),
        ("127.255.0.9", "a loopback address"),
        ("::1", "a loopback address"),
        ("10.1.2.3", "a private address"),
        ("172.16.0.1", "a private address"),
        ("172.31.255.255", "a private address"),
        ("192.168.1.1", "a private address"),
        ("fc00::1", "a private address"),
        ("fd12:3456::1", "a private address"),
        ("169.254.169.254", "the cloud metadata address"),
        ("fd00:ec2::254", "the cloud metadata address"),
        ("169.254.10.1", "a link-local address"),
        ("fe80::1", "a link-local address"),
        ("fe80::1%eth0", "a link-local address"),
        ("224.0.0.251", "a multicast address"),
        ("ff02::1", "a multicast address"),
        ("0.0.0.0", "an unspecified address"),
        ("::", "an unspecified address"),
        ("100.64.0.1", "a reserved or special-purpose address, not a public one"),
        ("192.0.2.10", "a reserved or special-purpose address, not a public one"),
        ("240.0.0.1", "a reserved or special-purpose address, not a public one"),
        ("255.255.255.255", "a reserved or special-purpose address, not a public one"),
        ("2001:db8::1", "a reserved or special-purpose address, not a public one"),
        # IPv6 forms that carry an IPv4 address are judged as that address.
        ("::ffff:127.0.0.1", "a loopback address"),
        ("::ffff:169.254.169.254", "the cloud metadata address"),
        ("::ffff:10.0.0.1", "a private address"),
        ("2002:7f00:1::", "a loopback address"),
        ("64:ff9b::a00:1", "a private address"),
        ("::7f00:1", "a loopback address"),
        # Public addresses.
        ("8.8.8.8", None),
        ("172.32.0.1", None),
        ("2606:4700:4700::1111", None),
        ("::ffff:8.8.8.8", None),
        ("64:ff9b::808:808", None),
    ],
)
def test_address_kinds(address: str, kind: str | None) -> None:
    assert address_refusal(ipaddress.ip_address(address)) == kind


ALLOW = AllowList.parse("receiver.internal, 127.0.0.1, 10.20.0.0/16, ::1")
LOOPBACK = ipaddress.ip_address("127.0.0.1")
PUBLIC = ipaddress.ip_address("93.184.215.14")


@pytest.mark.parametrize(
    ("host", "addresses", "allow", "refused"),
    [
        # A public name, a public literal: nothing to refuse.
        ("receiver.example", [PUBLIC], AllowList(), None),
        ("93.184.215.14", [], AllowList(), None),
        # A literal address the policy refuses, unless the allow-list names it.
        ("169.254.169.254", [], AllowList(), "169.254.169.254 is the cloud metadata address"),
        ("169.254.169.254", [], ALLOW, "169.254.169.254 is the cloud metadata address"),
        ("127.0.0.1", [], AllowList(), "127.0.0.1 is a loopback address"),
        ("127.0.0.1", [], ALLOW, None),
        ("127.0.0.2", [], ALLOW, "127.0.0.2 is a loopback address"),
        ("10.20.3.4", [], ALLOW, None),
        ("10.21.3.4", [], ALLOW, "10.21.3.4 is a private address"),
        ("::1", [], ALLOW, None),
        ("[::1]", [], ALLOW, None),
        # A name is judged by every address it resolves to...
        ("sneaky.example", [LOOPBACK], AllowList(), "sneaky.example resolves to 127.0.0.1"),
        ("sneaky.example", [PUBLIC, LOOPBACK], AllowList(), "resolves to 127.0.0.1"),
        # ...and an allowed address does not let a name through: only the name does.
        ("sneaky.example", [LOOPBACK], ALLOW, "sneaky.example resolves to 127.0.0.1"),
        ("localhost", [LOOPBACK], ALLOW, "localhost resolves to 127.0.0.1, a loopback"),
        ("receiver.internal", [ipaddress.ip_address("10.9.9.9")], ALLOW, None),
        ("Receiver.Internal.", [LOOPBACK], ALLOW, None),
    ],
)
def test_where_a_push_may_go(
    host: str, addresses: list[ipaddress.IPv4Address], allow: AllowList, refused: str | None
) -> None:
    reason = refusal(host, addresses, allow)
    if refused is None:
        assert reason is None
    else:
        assert reason is not None and refused in reason
        assert "ADAPTER_PUSH_ALLOW_HOSTS" in reason


@pytest.mark.parametrize(
    ("raw", "names", "networks"),
    [
        ("", set(), []),
        (" , ,", set(), []),
        ("localhost", {"localhost"}, []),
        ("Receiver.Internal., 127.0.0.1", {"receiver.internal"}, ["127.0.0.1/32"]),
        ("10.0.0.0/8,[fd00::1],fd00::/8", set(), ["10.0.0.0/8", "fd00::1/128", "fd00::/8"]),
        ("bridge_1.bots.svc.cluster.local", {"bridge_1.bots.svc.cluster.local"}, []),
    ],
)
def test_allow_list_entries(raw: str, names: set[str], networks: list[str]) -> None:
    allow = AllowList.parse(raw)
    assert allow.names == names
    assert [str(network) for network in allow.networks] == networks


@pytest.mark.parametrize(
    "entry", ["10.0.0.1/8", "999.1.1.1", "1.2.3", "http://x/", "a b", "-x.example", "*.example"]
)
def test_allow_list_refuses_what_is_neither_a_name_nor_an_address(entry: str) -> None:
    with pytest.raises(ValueError, match="is neither a host name"):
        AllowList.parse(f"localhost,{entry}")


def test_literal_addresses_in_urls() -> None:
    assert literal_address("[::1]") == ipaddress.ip_address("::1")
    assert literal_address("10.0.0.1") == ipaddress.ip_address("10.0.0.1")
    assert literal_address("2130706433") is None  # a name to the guard: resolved, then judged
    assert literal_address("receiver.example") is None


@pytest.mark.parametrize(
    ("value", "ok"),
    [
        ("eyJhbGciOi.tok-en_1+/=", True),
        ("two words", True),
        (" leading", False),
        ("trailing ", False),
        ("line\nbreak", False),
        ("ünicode", False),
        ("", False),
        ("x" * 4097, False),
    ],
)
def test_header_values(value: str, ok: bool) -> None:
    assert (header_value_problem(value) is None) is ok


def test_schemes_are_tokens() -> None:
    assert scheme_problem("Bearer") is None
    assert scheme_problem("Basic") is None
    assert scheme_problem("Bearer x") is not None
    assert scheme_problem("") is not None


def test_authentication_without_credentials_sends_no_header() -> None:
    assert PushAuthentication("Bearer", "abc").header == "Bearer abc"
    assert PushAuthentication("Bearer").header is None


def test_an_inline_config_takes_its_task_and_its_id_from_the_task() -> None:
    inline = PushConfig("", "", "http://r.example/", token="t")
    assert inline.for_task("task-1") == PushConfig("task-1", "task-1", "http://r.example/", "t")
    named = PushConfig("", "mine", "http://r.example/")
    assert named.for_task("task-1").id == "mine"
