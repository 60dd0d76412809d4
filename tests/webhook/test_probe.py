"""The probe of the webhook: n8n's answers to a CORS preflight, judged; and the preflight
itself, sent to a server on 127.0.0.1 that answers as n8n does, or otherwise."""

from __future__ import annotations

from functools import partial

import pytest
import trio

from n8n_a2a.webhook.probe import judge, probe


@pytest.mark.parametrize(
    ("status", "allowed", "registered", "says"),
    [
        (204, "OPTIONS, POST", True, "n8n has a POST webhook registered there"),
        (204, "post,get", True, "its workflow is published. No workflow ran."),
        (500, "", False, "no POST webhook registered there (a CORS preflight answered 500,"),
        (404, "", False, "no POST webhook registered there (a CORS preflight answered 404,"),
        (204, "GET", False, "answered HTTP 204 without allowing POST"),
        (405, "", False, "not n8n: another server may not answer preflights"),
    ],
)
def test_a_preflights_answer_says_whether_the_webhook_is_registered(
    status: int, allowed: str, registered: bool, says: str
) -> None:
    probed = judge(status, allowed)
    assert probed.registered is registered
    assert says in probed.finding


async def answering(head: bytes, stream: trio.SocketStream, asked: list[bytes]) -> None:
    """A server of one answer: it notes the request's head, answers `head`, and closes."""
    request = b""
    while b"\r\n\r\n" not in request:
        request += await stream.receive_some(4096)
    asked.append(request)
    await stream.send_all(head + b"Content-Length: 0\r\nConnection: close\r\n\r\n")
    await stream.aclose()


@pytest.mark.parametrize(
    ("head", "registered"),
    [
        (b"HTTP/1.1 204 No Content\r\nAccess-Control-Allow-Methods: OPTIONS, POST\r\n", True),
        (b"HTTP/1.1 404 Not Found\r\n", False),
    ],
)
async def test_the_preflight_asks_for_post_and_runs_nothing(
    nursery: trio.Nursery, head: bytes, registered: bool
) -> None:
    asked: list[bytes] = []
    [listener] = await nursery.start(
        partial(trio.serve_tcp, partial(answering, head, asked=asked), 0, host="127.0.0.1")
    )
    port = listener.socket.getsockname()[1]
    url = f"http://127.0.0.1:{port}/webhook/supply"
    probed = await probe(url, ca_bundle=None, patience=5)
    assert probed.registered is registered
    [request] = asked
    lines = request.decode().lower().split("\r\n")
    assert lines[0] == "options /webhook/supply http/1.1"
    assert "access-control-request-method: post" in lines
    assert "origin: http://127.0.0.1" in lines


async def test_a_webhook_out_of_reach_is_said_so() -> None:
    with trio.socket.socket() as taken:
        await taken.bind(("127.0.0.1", 0))
        port = taken.getsockname()[1]  # bound, never listening: refused
        probed = await probe(f"http://127.0.0.1:{port}/webhook/x", ca_bundle=None, patience=5)
    assert not probed.registered
    assert probed.finding.startswith("could not reach it: ConnectError")
