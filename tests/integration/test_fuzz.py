"""The JSON-RPC endpoint under generated requests: whatever arrives, a clean answer.

Each example is one POST to the real adapter (in front of the stub webhook): a method of
either version or junk, params shaped like the real ones with mutations (wrong types,
lone surrogates, NaN, numbers past a double, deep nesting, odd keys), an id of any JSON
type, and random A2A-Version, Content-Type and Authorization headers, to an adapter that
takes any caller or one that requires a token. Every answer must be: no 5xx, strict JSON
(UTF-8, no NaN, no lone surrogate), a JSON-RPC envelope with the request's id (type
included; null only when the id could not be read), in the shape of the version asked
for, and no traceback in the log. Afterwards a valid send still completes.

Hypothesis and pytest-trio: pytest-trio runs each example of an async `@given` test in a
trio run of its own, so examples could not share servers started by trio fixtures (and
starting servers per example would be slow). Here one trio test starts the stub and the
adapters, then runs a plain sync `@given` function in a worker thread
(`trio.to_thread.run_sync`): it talks to the servers with a sync httpx client while the
trio loop, free in the main thread, serves them.
"""

from __future__ import annotations

import json
import logging
import math
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, TypeVar

import httpx
import pytest
import trio
from hypothesis import HealthCheck, given, seed, settings
from hypothesis import strategies as st

from n8n_a2a.protocol.versions import V03, V1
from tests.support.adapter import AdapterFactory
from tests.support.jsonrpc import V1 as V1_HEADER
from tests.support.jsonrpc import rpc, send_v03, send_v1
from tests.support.stub_webhook import StubWebhook

EXAMPLES = 300
# The same examples on every run and every machine: a failure in CI is one to replay.
SEED = 20261129


@dataclass(frozen=True)
class Raw:
    """JSON text written as it is: what json.dumps cannot write (1e400, 5,000 digits)."""

    text: str


def write(value: Any) -> str:
    """JSON as a careless client writes it: NaN, and lone surrogates as \\ud800 escapes."""
    if isinstance(value, Raw):
        return value.text
    if isinstance(value, dict):
        return "{" + ",".join(f"{write(k)}:{write(v)}" for k, v in value.items()) + "}"
    if isinstance(value, list):
        return "[" + ",".join(write(item) for item in value) + "]"
    return json.dumps(value)  # ensure_ascii and allow_nan: escapes, NaN, Infinity


T = TypeVar("T")


def mostly(usual: st.SearchStrategy[T], odd: st.SearchStrategy[T]) -> st.SearchStrategy[T]:
    """`usual` two times in three, else `odd` (st.one_of flattens, so cannot weigh)."""
    return st.sampled_from([usual, usual, odd]).flatmap(lambda chosen: chosen)


# Values.

odd_text = st.one_of(
    st.text(max_size=12),
    st.text(st.characters(exclude_categories=()), max_size=6),  # surrogates included
    st.sampled_from(["\ud800", "ok \ud83d", "\udfff", "\x00", "é😀", " "]),
)
numbers = mostly(
    st.integers(-(2**70), 2**70) | st.floats(allow_nan=False, allow_infinity=False),
    st.floats()  # NaN and both infinities
    | st.sampled_from([Raw("1e400"), Raw("-1e400"), Raw("1" * 5000), Raw("-0"), 10**300]),
)
scalars = st.one_of(st.none(), st.booleans(), numbers, odd_text)


def nested(depth: int) -> Raw:
    return Raw('{"a":' * depth + "1" + "}" * depth)


# Nesting within reason (the adapter must keep it or refuse it cleanly), and past any
# parser's stack.
deep = st.sampled_from([10, 60, 101, 150, 400, 5000]).map(nested)
values = mostly(
    st.recursive(
        scalars,
        lambda children: (
            st.lists(children, max_size=3) | st.dictionaries(odd_text, children, max_size=3)
        ),
        max_leaves=8,
    ),
    deep,
)
ids = mostly(
    st.integers(-(2**64), 2**64) | st.text(max_size=8),
    st.one_of(
        st.none(),
        st.floats(),
        odd_text,
        st.booleans(),
        st.lists(st.integers(), max_size=2),
        st.dictionaries(st.text(max_size=3), st.integers(), max_size=2),
        st.sampled_from([Raw("1e400"), Raw("1" * 5000), 10**30, 1.0, -0.0]),
    ),
)

# Requests.

METHODS = sorted({*V1.facts.methods, *V03.facts.methods})
# Sends and ListTasks most often: they are what keeps and shows what callers sent.
methods = mostly(
    st.sampled_from(["SendMessage", "message/send", "ListTasks"]) | st.sampled_from(METHODS),
    st.sampled_from(METHODS).map(str.lower) | odd_text | values,
)
VERSIONS = ["1.0", "0.3", "1", "1.0.0", "0.3.0", "", " 1.0 ", "2.0", "0.2", "1.1", "¹", "²"]
VERSIONS += ["1.²", "1" * 4301, "1.0.0.0", "v1", "1." + "0" * 40, "\u0663.\u0660"]
versions = st.one_of(
    st.sampled_from([None, "1.0", "0.3"]),
    st.sampled_from(VERSIONS),
    st.text(st.characters(min_codepoint=0x21, max_codepoint=0xFF), min_size=1, max_size=10),
)
CONTENT_TYPES = [
    "application/json",
    "application/a2a+json",
    "application/json; charset=utf-8",
    "text/plain",
    "application/x-www-form-urlencoded",
    "application/jsonx",
    None,
]
# Authorization headers, and whether each carries a usable Bearer token.
AUTHORIZATIONS = {
    None: False,
    "Bearer good.token-1": True,
    "bearer   abc": True,
    "Bearer": False,
    "Bearer two words": False,
    "Basic dXNlcjpwdw==": False,
}


# What an HTTP/1.1 header value can carry (RFC 9110 field-value): the rest goes in the query.
_HEADER_VALUE = re.compile(r"([\x21-\x7e\x80-\xff]([\t\x20-\x7e\x80-\xff]*[\x21-\x7e\x80-\xff])?)?")


@st.composite
def message_params(draw: st.DrawFn, v1: bool) -> dict[str, Any]:
    # "answer:" keeps clear of the stub's other verbs ("hold" would never answer).
    text = "answer:" + draw(odd_text)
    part: dict[str, Any] = {"text": text} if v1 else {"kind": "text", "text": text}
    message: dict[str, Any] = {
        "messageId": draw(mostly(st.uuids().map(str), odd_text)),
        "role": "ROLE_USER" if v1 else "user",
        "parts": [part],
    }
    if not v1:
        message["kind"] = "message"
    if draw(st.booleans()):
        message["contextId"] = draw(odd_text)
    if draw(st.booleans()):
        message["metadata"] = draw(st.dictionaries(odd_text, values, max_size=3))
    if draw(st.booleans()):
        part["metadata"] = draw(st.dictionaries(odd_text, values, max_size=2))
    configuration: dict[str, Any] = {}
    if draw(st.booleans()):
        configuration["returnImmediately" if v1 else "blocking"] = draw(st.booleans())
    if draw(st.booleans()):
        configuration["historyLength"] = draw(st.integers(0, 3))
    return {"message": message, "configuration": configuration}


@st.composite
def params_for(draw: st.DrawFn, method: Any) -> dict[str, Any]:
    if method in ("SendMessage", "SendStreamingMessage"):
        return draw(message_params(v1=True))
    if method in ("message/send", "message/stream"):
        return draw(message_params(v1=False))
    if method == "ListTasks":
        return draw(
            st.fixed_dictionaries(
                {},
                optional={
                    "pageSize": st.integers(1, 100),
                    "status": st.sampled_from(["TASK_STATE_COMPLETED", "TASK_STATE_FAILED"]),
                    "contextId": odd_text,
                    "historyLength": st.integers(0, 3),
                    "includeArtifacts": st.booleans(),
                },
            )
        )
    return {"id": draw(odd_text)}


def slots(document: Any) -> list[tuple[Any, Any]]:
    """Every (container, key) in a document: the places a mutation can strike."""
    found: list[tuple[Any, Any]] = []
    if isinstance(document, dict):
        for key, value in document.items():
            found.append((document, key))
            found.extend(slots(value))
    elif isinstance(document, list):
        for index, value in enumerate(document):
            found.append((document, index))
            found.extend(slots(value))
    return found


@st.composite
def mutated(draw: st.DrawFn, document: dict[str, Any]) -> dict[str, Any]:
    for _ in range(draw(st.sampled_from([0, 0, 1, 2, 3]))):
        places = slots(document)
        if not places:
            break
        container, key = draw(st.sampled_from(places))
        action = draw(st.sampled_from(["replace", "delete", "add"]))
        if action == "replace":
            container[key] = draw(values)
        elif action == "delete":
            del container[key]
        elif isinstance(container, dict):
            container[draw(odd_text)] = draw(values)
        else:
            container.append(draw(values))
    return document


@dataclass(frozen=True)
class Probe:
    body: bytes
    headers: dict[bytes, bytes]
    query: dict[str, str]
    guarded: bool  # sent to the adapter that requires a token
    authorized: bool  # carries a usable Bearer token


@st.composite
def probes(draw: st.DrawFn) -> Probe:
    method = draw(methods)
    envelope: dict[str, Any] = {"jsonrpc": "2.0", "id": draw(ids), "method": method}
    envelope["params"] = draw(mutated(draw(params_for(method))))
    broken = draw(st.sampled_from([None, None, None, None, "jsonrpc", "id", "method", "params"]))
    if broken is not None:
        envelope[broken] = draw(st.one_of(st.just(Raw("")), values))  # Raw(""): no value
        if envelope[broken] == Raw(""):
            del envelope[broken]
    body = write(envelope).encode("utf-8", "surrogatepass")
    odd_bodies = [
        b"[" + body + b"]",  # a batch
        body[: len(body) // 2],  # cut short
        b"",
        b"\xff\xfe{}",
        b'{"jsonrpc":"2.0","id":NaN,"method":"GetTask","params":{}}',
    ]
    body = draw(mostly(st.just(body), st.sampled_from(odd_bodies)))
    headers: dict[bytes, bytes] = {}
    content_type = draw(mostly(st.just("application/json"), st.sampled_from(CONTENT_TYPES)))
    if content_type is not None:
        headers[b"Content-Type"] = content_type.encode()
    query: dict[str, str] = {}
    # Most probes ask for the method's own version, so that they reach it.
    version = draw(mostly(st.just(_natural_version(method)), versions))
    if version is not None:
        if _HEADER_VALUE.fullmatch(version) and draw(st.booleans()):
            headers[b"A2A-Version"] = version.encode("latin-1")
        else:
            query["A2A-Version"] = version
    authorization = draw(
        mostly(
            st.sampled_from([None, "Bearer good.token-1"]), st.sampled_from(list(AUTHORIZATIONS))
        )
    )
    if authorization is not None:
        headers[b"Authorization"] = authorization.encode()
    guarded = draw(st.sampled_from([False, False, True]))
    return Probe(body, headers, query, guarded, AUTHORIZATIONS[authorization])


def _natural_version(method: Any) -> str | None:
    return "1.0" if isinstance(method, str) and method in V1.facts.methods else None


# The oracle: what the answer to a probe must be, decided without the adapter's code.


def _refuse_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def json_with_constants_refused(data: str | bytes) -> Any:
    return json.loads(data, parse_constant=_refuse_constant)


def strict_json(data: bytes) -> Any:
    """Parse as RFC 8259 does: UTF-8, no NaN or Infinity, no lone surrogate, finite numbers."""
    document = json_with_constants_refused(data.decode("utf-8"))
    pending = [document]
    while pending:
        value = pending.pop()
        if isinstance(value, str):
            value.encode("utf-8")  # a lone surrogate raises
        elif isinstance(value, float) and not math.isfinite(value):
            raise ValueError("a number out of range")
        elif isinstance(value, dict):
            pending.extend(value.keys())
            pending.extend(value.values())
        elif isinstance(value, list):
            pending.extend(value)
    return document


_UNREADABLE = object()


def readable_id(body: bytes) -> Any:
    """The request's id, or _UNREADABLE when the body is not JSON (NaN is not) or its id
    is not a string, number or null that JSON can carry back."""
    try:
        document = json_with_constants_refused(body)
    except (ValueError, RecursionError):
        return _UNREADABLE
    if not isinstance(document, dict) or "id" not in document:
        return _UNREADABLE
    request_id = document["id"]
    try:
        strict_json(json.dumps(request_id).encode())
    except ValueError:
        return _UNREADABLE  # a lone surrogate, or a number past a double (1e400)
    if isinstance(request_id, bool) or not isinstance(request_id, str | int | float | None):
        return _UNREADABLE
    return request_id


# The A2A-Version values each version answers to; other spellings of 1.0 and 0.3 are
# left unjudged, and anything else is a version not served.
_V1_VALUES = {"1.0", "1", "1.0.0"}
_V03_VALUES = {"", "0.3", "0.3.0"}
_NUMERIC = re.compile(r"[0-9]{1,4}(\.[0-9]{1,4}){0,2}")
_EARLY_CODES = {-32700, -32600, -32602, -32005, -32009}


def version_asked(probe: Probe) -> str | None:
    """The version a probe asks for: 1.0, 0.3, "unknown", or None for an odd spelling of
    a version served ("01.00"), left unjudged."""
    header = probe.headers.get(b"A2A-Version", b"").decode("latin-1")
    value = (header or probe.query.get("A2A-Version", "")).strip()
    if value in _V1_VALUES:
        return "1.0"
    if value in _V03_VALUES:
        return "0.3"
    if _NUMERIC.fullmatch(value):
        major, minor, *_ = [int(number) for number in value.split(".")] + [0]
        if (major, minor) in {(1, 0), (0, 3)}:
            return None
    return "unknown"


def problems_with(probe: Probe, reply: httpx.Response, log: list[logging.LogRecord]) -> list[str]:
    """What is wrong with the answer to `probe`, one short kind per problem."""
    found = []
    if reply.status_code >= 500:
        found.append(f"HTTP {reply.status_code}")
    if probe.guarded and not probe.authorized:
        if reply.status_code != 401:
            found.append("no 401 for a caller without a token")
        elif not reply.headers.get("www-authenticate", "").startswith("Bearer"):
            found.append("401 without WWW-Authenticate: Bearer")
    elif reply.status_code != 200:
        found.append(f"HTTP {reply.status_code}")
    if any(record.exc_info or record.levelno >= logging.ERROR for record in log):
        found.append("a traceback or an error in the log")
    try:
        documents = [strict_json(data) for data in bodies(reply)]
    except (ValueError, RecursionError):
        return [*found, "not strict JSON"]
    if not documents:
        return [*found, "an empty stream"]
    for document in documents:
        found += problems_with_response(probe, document)
    return found


def bodies(reply: httpx.Response) -> list[bytes]:
    """The JSON-RPC responses in a reply: its body, or each event of a stream."""
    if not reply.headers.get("content-type", "").startswith("text/event-stream"):
        return [reply.content]
    events = reply.content.split(b"\n\n")
    return [
        b"\n".join(line.removeprefix(b"data: ") for line in event.split(b"\n"))
        for event in events
        if event.startswith(b"data: ")
    ]


def problems_with_response(probe: Probe, document: object) -> list[str]:
    """What is wrong with one JSON-RPC response to `probe`."""
    found: list[str] = []
    if not isinstance(document, dict) or document.get("jsonrpc") != "2.0":
        return ["not a JSON-RPC response"]
    expected = readable_id(probe.body)
    if expected is _UNREADABLE:
        if document.get("id", "missing") is not None:
            found.append("an id for a request whose id could not be read")
    elif (
        "id" not in document
        or document["id"] != expected
        or type(document["id"]) is not type(expected)
    ):
        found.append("not the request's id")
    error = document.get("error")
    if error is None:
        return found
    if not isinstance(error.get("code"), int) or not isinstance(error.get("message"), str):
        return [*found, "a malformed error object"]
    version = version_asked(probe)
    if version == "unknown" and error["code"] not in _EARLY_CODES:
        found.append("a version not served reached the method")
    # v1.0 errors with an A2A code carry an ErrorInfo, v0.3 ones do not; a version not
    # served is answered in v1.0's shape, the version that defines -32009.
    a2a_code = -32099 <= error["code"] <= -32001
    if version is not None and ("data" in error) != (a2a_code and version != "0.3"):
        found.append("an error in the other version's shape")
    return found


@dataclass
class Servers:
    open: str
    guarded: str
    records: Callable[[], list[logging.LogRecord]]
    client: httpx.Client = field(default_factory=lambda: httpx.Client(timeout=30))

    def ask(self, probe: Probe) -> tuple[httpx.Response, list[logging.LogRecord]]:
        seen = len(self.records())
        reply = self.client.post(
            self.guarded if probe.guarded else self.open,
            content=probe.body,
            headers=probe.headers,
            params=probe.query,
        )
        return reply, self.records()[seen:]


FUZZ = settings(
    max_examples=EXAMPLES,
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)


def fuzz(servers: Servers) -> None:
    @seed(SEED)
    @FUZZ
    @given(probes())
    def each(probe: Probe) -> None:
        reply, log = servers.ask(probe)
        assert problems_with(probe, reply, log) == [], (probe, reply.text[:2000])

    each()


async def test_the_endpoint_answers_anything_cleanly(
    stub: StubWebhook, start_adapter: AdapterFactory, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.WARNING)
    servers = Servers(
        open=await start_adapter(stub.url),
        guarded=await start_adapter(stub.url, require_token=True),
        records=lambda: caplog.records,
    )
    with servers.client:
        await trio.to_thread.run_sync(fuzz, servers)
    assert stub.received, "no example reached the workflow"
    # The adapter still serves, and nothing it took in broke the task table.
    v1 = (await rpc(servers.open, send_v1("answer:still here"), V1_HEADER))["result"]["task"]
    assert v1["status"]["state"] == "TASK_STATE_COMPLETED"
    v03 = (await rpc(servers.open, send_v03("answer:still here")))["result"]
    assert v03["status"]["state"] == "completed"
    listed = await rpc(
        servers.open,
        {"jsonrpc": "2.0", "id": 1, "method": "ListTasks", "params": {"pageSize": 100}},
        V1_HEADER,
    )
    assert listed["result"]["tasks"]
    # Webhook calls of non-blocking sends end after their example: their log lines too.
    assert not [r for r in caplog.records if r.exc_info or r.levelno >= logging.ERROR]
