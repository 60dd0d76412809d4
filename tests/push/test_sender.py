"""One POST to a receiver: to the address the guard judged, the name kept for Host and TLS,
no redirect followed, one deadline, and what each answer means for a retry."""

from __future__ import annotations

import ipaddress
import ssl
from collections import Counter
from collections.abc import Awaitable, Callable, Sequence
from functools import partial
from typing import Any

import pytest
import trio
import trio.testing
import trustme

from n8n_a2a.protocol.addresses import IPAddress
from n8n_a2a.protocol.push import AllowList
from n8n_a2a.push.attempts import Answer
from n8n_a2a.push.sender import MAX_PER_ADDRESS, PushSender
from n8n_a2a.webhook.network import Origin, WebhookStream
from tests.support.push import Resolver
from tests.support.push_receiver import PushReceiver, start_push_receiver

LOOPBACK = AllowList.parse("127.0.0.1")
SECOND_LOOPBACK = ipaddress.ip_address("127.0.0.2")


async def post(url: str, allow: AllowList = LOOPBACK, **options: Any) -> Any:
    async with PushSender(allow, **options) as sender:
        return await sender.post(url, b'{"statusUpdate":{}}', {"Content-Type": "application/json"})


@pytest.fixture
async def receiver(nursery: trio.Nursery) -> PushReceiver:
    return await start_push_receiver(nursery)


@pytest.mark.parametrize(
    ("status", "answer"),
    [
        (200, Answer.DELIVERED),
        (204, Answer.DELIVERED),
        (408, Answer.RETRY),
        (429, Answer.RETRY),
        (500, Answer.RETRY),
        (503, Answer.RETRY),
        (400, Answer.REJECTED),
        (401, Answer.REJECTED),
        (404, Answer.REJECTED),
        (410, Answer.REJECTED),
    ],
)
async def test_what_each_answer_means(receiver: PushReceiver, status: int, answer: Answer) -> None:
    receiver.statuses = [status]
    attempt = await post(receiver.url)
    assert (attempt.answer, attempt.status, attempt.detail) == (answer, status, f"HTTP {status}")
    [delivery] = receiver.received
    assert delivery.path == "/hook"
    assert delivery.body == b'{"statusUpdate":{}}'
    assert delivery.headers["user-agent"].startswith("n8n-a2a/")


async def test_the_trust_store_is_read_by_the_first_https_post_not_by_the_start(
    receiver: PushReceiver, monkeypatch: pytest.MonkeyPatch
) -> None:
    made: list[ssl.SSLContext] = []
    create = ssl.create_default_context

    def counted() -> ssl.SSLContext:
        made.append(create())
        return made[-1]

    monkeypatch.setattr(ssl, "create_default_context", counted)
    async with PushSender(LOOPBACK):
        pass
    assert made == []  # a start and stop with no push config read no certificates
    async with PushSender(LOOPBACK) as sender:
        receiver.statuses = [200, 200]
        for _ in range(2):
            attempt = await sender.post(receiver.url, b"{}", {})
            assert attempt.answer is Answer.DELIVERED
        assert made == []  # http:// needs none
        https = receiver.url.replace("http://", "https://")
        for _ in range(2):  # a receiver that speaks no TLS: the handshake fails
            attempt = await sender.post(https, b"{}", {})
            assert attempt.answer is Answer.RETRY
            assert attempt.detail.startswith("cannot connect to 127.0.0.1: TLS: ")
    assert len(made) == 1
    assert len(receiver.received) == 2


async def test_a_redirect_is_not_followed(receiver: PushReceiver) -> None:
    receiver.statuses = [307]
    receiver.location = receiver.url + "/elsewhere"
    attempt = await post(receiver.url)
    assert attempt.answer is Answer.REJECTED
    assert "redirect (not followed)" in attempt.detail
    assert [d.path for d in receiver.received] == ["/hook"]


async def test_a_receiver_that_never_answers_costs_one_timeout(receiver: PushReceiver) -> None:
    receiver.hold = True
    started = trio.current_time()
    attempt = await post(receiver.url, timeout=0.3)
    assert attempt.answer is Answer.RETRY
    assert attempt.detail == "no answer within 0.3 s"
    assert trio.current_time() - started < 5


async def test_nobody_listening_is_a_retry() -> None:
    with trio.socket.socket() as probe:
        await probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    attempt = await post(f"http://127.0.0.1:{port}/hook")
    assert attempt.answer is Answer.RETRY
    assert "cannot connect to 127.0.0.1" in attempt.detail


async def test_a_refused_address_is_never_attempted(receiver: PushReceiver) -> None:
    attempt = await post(receiver.url, allow=AllowList())
    assert attempt.answer is Answer.BLOCKED
    assert "127.0.0.1 is a loopback address" in attempt.detail
    assert "ADAPTER_PUSH_ALLOW_HOSTS" in attempt.detail
    assert receiver.received == []


async def test_a_name_that_does_not_resolve_is_a_retry() -> None:
    attempt = await post("http://nowhere.invalid/hook", resolve=Resolver({}))
    assert attempt.answer is Answer.RETRY
    assert "does not resolve" in attempt.detail


async def test_the_post_goes_to_the_judged_address_with_the_name_as_host(
    nursery: trio.Nursery,
) -> None:
    # The system cannot resolve this name: only the guard's resolver can, so a delivery
    # proves that the POST went to the address judged, never to a lookup of its own.
    elsewhere = await start_push_receiver(nursery, host="127.0.0.1")
    judged = await start_push_receiver(nursery, host="127.0.0.2", port=elsewhere.port)
    resolve = Resolver({"bridge.test": [SECOND_LOOPBACK]})
    url = f"http://bridge.test:{judged.port}/hook"
    attempt = await post(url, allow=AllowList.parse("bridge.test"), resolve=resolve)
    assert attempt.answer is Answer.DELIVERED
    [delivery] = judged.received
    assert delivery.headers["host"] == f"bridge.test:{judged.port}"
    assert elsewhere.received == []
    assert resolve.asked == [("bridge.test", judged.port)]


class Rebinding(Resolver):
    """The first lookup says a public address, every later one loopback (DNS rebinding)."""

    async def __call__(self, host: str, port: int) -> Sequence[IPAddress]:
        self.asked.append((host, port))
        first = len(self.asked) == 1
        return [ipaddress.ip_address("93.184.215.14" if first else "127.0.0.1")]


class FakeConnection(WebhookStream):
    """A connection of FakeNetwork's: what is sent is kept; the answer is the network's."""

    def __init__(
        self, network: FakeNetwork, origin: Origin, tls: ssl.SSLContext | None, name: str
    ) -> None:
        self.network, self.origin, self.tls, self.server_hostname = network, origin, tls, name
        self.sent = b""
        self.answered = False

    async def send(self, data: bytes | memoryview) -> None:
        self.sent += data

    async def receive(self) -> bytes:
        if self.answered:
            return b""
        self.answered = True
        status = await self.network.answer(self)
        return b"HTTP/1.1 %d Whatever\r\nContent-Length: 0\r\n\r\n" % status

    def is_readable(self) -> bool:
        return False

    async def aclose(self) -> None:
        self.network.under_way[self.origin.host] -= 1


class FakeNetwork:
    """PushSender's `connect` to a network that is not there: each connection recorded
    (where it went, TLS against which name, what it carried) and counted while open; each
    answers the status `answer` gives it (awaited: it may hold the answer back)."""

    def __init__(self, answer: Callable[[FakeConnection], Awaitable[int]]) -> None:
        self.answer = answer
        self.connections: list[FakeConnection] = []
        self.under_way: Counter[str] = Counter()
        self.most = 0  # open at once, over all addresses

    async def __call__(
        self, origin: Origin, tls: ssl.SSLContext | None, server_hostname: str
    ) -> WebhookStream:
        connection = FakeConnection(self, origin, tls, server_hostname)
        self.connections.append(connection)
        self.under_way[origin.host] += 1
        self.most = max(self.most, self.under_way.total())
        return connection


def answering(status: int) -> Callable[[FakeConnection], Awaitable[int]]:
    async def answer(connection: FakeConnection) -> int:
        return status

    return answer


async def test_every_attempt_looks_up_and_judges_again_and_dials_what_it_judged() -> None:
    network = FakeNetwork(answering(503))
    resolve = Rebinding({})
    async with PushSender(AllowList(), resolve=resolve, connect=network) as sender:
        first = await sender.post("https://rebind.test/hook", b"{}", {})
        second = await sender.post("https://rebind.test/hook", b"{}", {})
    assert first.answer is Answer.RETRY
    assert second.answer is Answer.BLOCKED  # now it leads to loopback: not attempted
    [connection] = network.connections
    assert connection.origin == Origin("https", "93.184.215.14", 443)
    assert connection.tls is not None
    assert connection.server_hostname == "rebind.test"  # TLS checks the name
    assert connection.sent.startswith(b"POST /hook HTTP/1.1\r\nHost: rebind.test\r\n")
    assert len(resolve.asked) == 2


@pytest.fixture(scope="module")
def authority() -> trustme.CA:
    return trustme.CA()


async def tls_receiver(
    nursery: trio.Nursery, authority: trustme.CA, tmp_path: Any, name: str
) -> PushReceiver:
    certificate = authority.issue_cert(name)
    cert_file, key_file = tmp_path / f"{name}.pem", tmp_path / f"{name}.key"
    certificate.private_key_and_cert_chain_pem.write_to_path(str(cert_file))
    certificate.private_key_pem.write_to_path(str(key_file))
    return await start_push_receiver(
        nursery, host="127.0.0.2", certfile=str(cert_file), keyfile=str(key_file)
    )


@pytest.mark.parametrize(
    ("certified", "answer"), [("bridge.test", Answer.DELIVERED), ("other.test", Answer.RETRY)]
)
async def test_tls_checks_the_certificate_against_the_name_not_the_address(
    nursery: trio.Nursery, authority: trustme.CA, tmp_path: Any, certified: str, answer: Answer
) -> None:
    receiver = await tls_receiver(nursery, authority, tmp_path, certified)
    context = ssl.create_default_context()
    authority.configure_trust(context)
    attempt = await post(
        f"https://bridge.test:{receiver.port}/hook",
        allow=AllowList.parse("bridge.test"),
        resolve=Resolver({"bridge.test": [SECOND_LOOPBACK]}),
        ssl_context=context,
    )
    assert attempt.answer is answer
    assert len(receiver.received) == (1 if answer is Answer.DELIVERED else 0)
    if answer is Answer.RETRY:
        assert attempt.detail.startswith("cannot connect to 127.0.0.2: TLS: ")
        assert "certificate" in attempt.detail.lower()


async def test_receivers_that_never_answer_hold_no_turn_another_one_needs(
    nursery: trio.Nursery, receiver: PushReceiver
) -> None:
    # A pool limited over all hosts together (httpx's allowed 100 connections) makes the
    # 101st POST wait for one of the dead ones to time out. Here they wait for their
    # address's turns, holding no more connections than those.
    dead = await start_push_receiver(nursery, host="127.0.0.2")
    dead.hold = True
    both = AllowList.parse("127.0.0.1,127.0.0.2")
    async with PushSender(both, timeout=30.0) as sender, trio.open_nursery() as posts:
        for _ in range(110):
            posts.start_soon(sender.post, dead.url, b"{}", {})
        with trio.fail_after(10):
            await dead.wait_held(MAX_PER_ADDRESS)
            attempt = await sender.post(receiver.url, b"{}", {})
        assert attempt.answer is Answer.DELIVERED
        assert dead.held == MAX_PER_ADDRESS
        posts.cancel_scope.cancel()


class Tarpit(FakeNetwork):
    """A network that takes every POST and answers none until `released` is set."""

    def __init__(self) -> None:
        super().__init__(self._held)
        self.released = trio.Event()

    async def _held(self, connection: FakeConnection) -> int:
        await self.released.wait()
        return 200


PUBLIC_ADDRESSES = [ipaddress.ip_address(f"93.184.215.{n}") for n in range(1, 13)]
PUBLIC_NAMES = Resolver({f"r{n}.example": [a] for n, a in enumerate(PUBLIC_ADDRESSES)})


async def post_all(sender: PushSender, urls: list[str], answers: list[Answer]) -> None:
    async def one(url: str) -> None:
        answers.append((await sender.post(url, b"{}", {})).answer)

    async with trio.open_nursery() as nursery:
        for url in urls:
            nursery.start_soon(one, url)


async def test_past_the_process_limit_posts_wait_their_turn_and_none_is_lost() -> None:
    tarpit = Tarpit()
    answers: list[Answer] = []
    urls = [f"https://r{n}.example/hook" for n in range(12)]  # an address each
    async with (
        PushSender(
            AllowList(),
            resolve=PUBLIC_NAMES,
            connect=tarpit,
            max_concurrent=3,
        ) as sender,
        trio.open_nursery() as nursery,
    ):
        nursery.start_soon(post_all, sender, urls, answers)
        await trio.testing.wait_all_tasks_blocked()
        assert tarpit.under_way.total() == 3
        tarpit.released.set()
    assert tarpit.most == 3
    assert answers == [Answer.DELIVERED] * 12


async def test_past_the_limit_for_one_address_its_posts_wait_others_go_on() -> None:
    tarpit = Tarpit()
    answers: list[Answer] = []
    crowded = [f"https://r0.example/hook/{n}" for n in range(6)]
    async with (
        PushSender(
            AllowList(),
            resolve=PUBLIC_NAMES,
            connect=tarpit,
            max_per_address=2,
        ) as sender,
        trio.open_nursery() as nursery,
    ):
        nursery.start_soon(post_all, sender, [*crowded, "https://r1.example/hook"], answers)
        await trio.testing.wait_all_tasks_blocked()
        assert tarpit.under_way == {"93.184.215.1": 2, "93.184.215.2": 1}
        tarpit.released.set()
    assert answers == [Answer.DELIVERED] * 7


async def test_the_wait_for_a_turn_is_not_part_of_the_attempts_deadline(
    autojump_clock: trio.abc.Clock,
) -> None:
    started: list[float] = []

    async def answer(connection: FakeConnection) -> int:
        started.append(trio.current_time())
        if len(started) == 1:
            await trio.sleep_forever()  # the first receiver never answers
        return 204

    async with (
        PushSender(
            AllowList(),
            resolve=PUBLIC_NAMES,
            connect=FakeNetwork(answer),
            timeout=10.0,
            max_concurrent=1,
        ) as sender,
        trio.open_nursery() as nursery,
    ):
        nursery.start_soon(sender.post, "https://r0.example/hook", b"{}", {})
        await trio.testing.wait_all_tasks_blocked()
        second = await sender.post("https://r1.example/hook", b"{}", {})
    assert started == [0.0, 10.0]  # its turn came when the first one's attempt ended
    assert second.answer is Answer.DELIVERED


@pytest.mark.parametrize(
    ("reply", "reason"),
    [
        (b"ECHO token-1234 HTTP/1.1 200\r\n\r\n", "the reply's status line is no HTTP/1.1"),
        (b"HTTP/1.1 200 OK\r\nX-Echo token-1234\r\n\r\n", "the reply's header line is no field"),
        (
            b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\ntoken-1234\r\n",
            "a chunk's size line is no size",
        ),
    ],
)
async def test_a_broken_reply_is_a_retry_whose_detail_quotes_none_of_it(
    nursery: trio.Nursery, reply: bytes, reason: str
) -> None:
    """The receiver's reply may echo what it was sent (the notification token): the
    attempt, which is logged, says what was wrong with it, not what it held."""

    async def answer(stream: trio.SocketStream) -> None:
        await stream.receive_some()
        await stream.send_all(reply)

    [listener] = await nursery.start(partial(trio.serve_tcp, answer, 0, host="127.0.0.1"))
    port = listener.socket.getsockname()[1]
    attempt = await post(f"http://127.0.0.1:{port}/hook")
    assert (attempt.answer, attempt.detail) == (Answer.RETRY, reason)
