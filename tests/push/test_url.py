"""A push URL read as httpx read it (the host judged and dialled, Host, the target),
checked against httpx itself on every URL a push config can hold."""

from __future__ import annotations

import httpx
import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from n8n_a2a.protocol.push import url_problem
from n8n_a2a.push.url import PushURL, read_url

Reading = tuple[str, str, int, bytes, bytes] | None


def ours(url: str) -> Reading:
    try:
        read = read_url(url)
    except ValueError:
        return None
    return (read.scheme, read.host, read.port, read.target, read.host_header)


def httpx_reading(url: str) -> Reading:
    try:
        parsed = httpx.URL(url)
    except httpx.InvalidURL:
        return None
    port = parsed.port or (443 if parsed.scheme == "https" else 80)
    return (parsed.scheme, parsed.raw_host.decode(), port, parsed.raw_path, parsed.netloc)


HOSTS = [
    "bridge.example",
    "Bridge.EXAMPLE.",
    "bücher.example",
    "BÜCHER.example",
    "faß.example",
    "☃.example",
    "xn--bcher-kva.example",
    "a]b",
    "a<b>c^d",
    "%41.example",
    "127.0.0.1",
    "999.0.0.1",
    "01.2.3.4",
    "1.2.3",
    "0x7f.0.0.1",
    "[::1]",
    "[::FFFF:7F00:1]",
    "[fe80::1%25eth0]",
    "[v1.x]",
    "[1.2.3.4]",
    "",
]
PORTS = ["", ":", ":80", ":443", ":0", ":0080", ":8080", ":65535", ":65536", ":x", ":\uff18\uff10"]
PATH_CHARACTERS = st.sampled_from(list("/./..%2e%41azAZ09-_~!$&'()*+,;=:@[]|^{}`\"<>é€"))


@st.composite
def push_urls(draw: st.DrawFn) -> str:
    scheme = draw(st.sampled_from(["http", "https", "HTTPS", "ftp"]))
    host, port = draw(st.sampled_from(HOSTS)), draw(st.sampled_from(PORTS))
    path = draw(st.text(PATH_CHARACTERS, max_size=16))
    query = draw(st.none() | st.text(PATH_CHARACTERS | st.just("?"), max_size=8))
    fragment = draw(st.none() | st.text(PATH_CHARACTERS, max_size=4))
    url = f"{scheme}://{host}{port}"
    url += ("/" + path.lstrip("/") if path else "") + (f"?{query}" if query is not None else "")
    return url + (f"#{fragment}" if fragment is not None else "")


@given(push_urls())
@example("https://bücher.example:8443/a/./b/../c?q=é#top")
@example("http://bridge.example?")
@example("http://bridge.example/..")
@example("http://[::1]:9/")
def test_every_url_a_config_can_hold_reads_as_httpx_read_it(url: str) -> None:
    if url_problem(url) is not None:
        return  # refused when the config was set: never judged, never POSTed to
    expected = httpx_reading(url)
    if expected is not None and expected[4].endswith(b":0"):
        expected = None  # httpx read port 0 as none: connected to 80 or 443 (refused here)
    if url.startswith("HTTPS") and expected is not None and expected[4].endswith(b":443"):
        # httpx's quirk: a default port written out stays in Host if the scheme is in capitals.
        expected = (*expected[:4], expected[4].removesuffix(b":443"))
    assert ours(url) == expected


def test_the_parts_of_a_url() -> None:
    assert read_url("https://Bridge.Example:8443/hook/../in?x=1&y=%41#frag") == PushURL(
        "https", "bridge.example", 8443, b"/in?x=1&y=%41", b"bridge.example:8443"
    )
    assert read_url("http://[::1]/") == PushURL("http", "::1", 80, b"/", b"[::1]")
    assert read_url("https://bücher.example:443").host_header == b"xn--bcher-kva.example"


@pytest.mark.parametrize(
    ("url", "words"),
    [
        ("http://999.0.0.1/", "Invalid IPv4 address"),
        ("http://[v1.x]/", "Invalid IPv6 address"),
        ("http://☃.example/", "Invalid IDNA hostname"),
        ("http://bridge.example:65536/", "Invalid port"),
        ("http://bridge.example:0/", "Invalid port"),
        ("http://bridge.example:\uff18\uff10/", "Invalid port"),
        ("http://bridge.example/\r\n", "non-printable"),
        (" http://bridge.example/", "a space"),
        ("ftp://bridge.example/", "not http or https"),
        ("http:///hook", "no host"),
        ("http://user:secret@bridge.example/", "credentials"),
        ("http://[::1/", "Invalid IPv6 URL"),
    ],
)
def test_what_cannot_be_read_says_why(url: str, words: str) -> None:
    with pytest.raises(ValueError, match=words):
        read_url(url)
