"""Where a push may go, as a table: URLs, addresses, host names and the allow-list."""

from __future__ import annotations

import ipaddress

import pytest

from n8n_a2a.protocol.addresses import IPAddress, Kind
from n8n_a2a.protocol.push import (
    AllowList,
    PushAuthentication,
    PushConfig,
    Refusal,
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


ip = ipaddress.ip_address
ALLOW = AllowList.parse("receiver.internal, 127.0.0.1, 10.20.0.0/16, ::1")
LOOPBACK = ip("127.0.0.1")
METADATA = ip("169.254.169.254")
PUBLIC = ip("93.184.215.14")


@pytest.mark.parametrize(
    ("host", "addresses", "allow", "refused"),
    [
        # A public name, a public literal: nothing to refuse.
        ("receiver.example", [PUBLIC], AllowList(), None),
        ("93.184.215.14", [], AllowList(), None),
        # A literal address the policy refuses, unless the allow-list names it.
        ("169.254.169.254", [], AllowList(), Refusal(METADATA, Kind.CLOUD_METADATA, True)),
        ("169.254.169.254", [], ALLOW, Refusal(METADATA, Kind.CLOUD_METADATA, True)),
        ("127.0.0.1", [], AllowList(), Refusal(LOOPBACK, Kind.LOOPBACK, True)),
        ("127.0.0.1", [], ALLOW, None),
        ("127.0.0.2", [], ALLOW, Refusal(ip("127.0.0.2"), Kind.LOOPBACK, True)),
        ("10.20.3.4", [], ALLOW, None),
        ("10.21.3.4", [], ALLOW, Refusal(ip("10.21.3.4"), Kind.PRIVATE, True)),
        ("::1", [], ALLOW, None),
        ("[::1]", [], ALLOW, None),
        ("[::ffff:0:7f00:1]", [], AllowList(), Refusal(ip("::ffff:0:7f00:1"), Kind.LOOPBACK, True)),
        # A literal is judged alone, whatever the lookup would say.
        ("93.184.215.14", [LOOPBACK], AllowList(), None),
        # A name is judged by every address it resolves to...
        ("sneaky.example", [LOOPBACK], AllowList(), Refusal(LOOPBACK, Kind.LOOPBACK, False)),
        (
            "sneaky.example",
            [PUBLIC, LOOPBACK],
            AllowList(),
            Refusal(LOOPBACK, Kind.LOOPBACK, False),
        ),
        # ...and an allowed address does not let a name through: only the name does.
        ("sneaky.example", [LOOPBACK], ALLOW, Refusal(LOOPBACK, Kind.LOOPBACK, False)),
        ("localhost", [LOOPBACK], ALLOW, Refusal(LOOPBACK, Kind.LOOPBACK, False)),
        ("receiver.internal", [ip("10.9.9.9")], ALLOW, None),
        ("Receiver.Internal.", [LOOPBACK], ALLOW, None),
    ],
)
def test_where_a_push_may_go(
    host: str, addresses: list[IPAddress], allow: AllowList, refused: Refusal | None
) -> None:
    assert refusal(host, addresses, allow) == refused


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
