"""The official @a2a-js/sdk client on Node, from its own npm install, against the real adapter.

Four modes: the SDK's defaults (v1.0 only); `legacyCompat` on both the transport
factory and the card resolver, which still picks the card's first, v1.0, interface;
`legacyCompat` with the card cut to its v0.3 interface, so the SDK's v0.3 transport
does the talking; and `v1.0 REST`, the SDK given its HTTP+JSON transport alone, which
picks the card's HTTP+JSON interface. Over JSON-RPC the SDK requires the response id to
match the request's exactly, type included, so every passing call also checks that, on
every SSE event of its streams too (`sendMessageStream`, `resubscribeTask`: the card says
it streams).
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest
import trio

from tests.interop import matrix
from tests.support.adapter import AdapterFactory
from tests.support.oidc_issuer import start_issuer
from tests.support.stub_webhook import StubWebhook

VERSION = matrix.pinned_js_version("@a2a-js/sdk")

# mode -> (the wire version the SDK must end up speaking, the transport class it picks)
MODES = matrix.JS_MODES
# The methods each wire version streams with: a streaming send, and a subscription.
STREAM_METHODS = {
    "1.0": ("SendStreamingMessage", "SubscribeToTask"),
    "0.3": ("message/stream", "tasks/resubscribe"),
}


def _modes(row: str = "") -> list[object]:
    """Every mode, each marked with its client mode, and `row` after it."""
    return [
        pytest.param(
            mode,
            marks=pytest.mark.client("@a2a-js/sdk (Node)", VERSION, f"{mode}{row}"),
            id=mode.replace(" ", "-"),
        )
        for mode in MODES
    ]


PARAMS = _modes()
# A row of their own in the conformance table: the client's parts beyond text.
PARTS_PARAMS = _modes(" parts")


@pytest.fixture(scope="module")
def client_dir() -> Path:
    return matrix.node_client()


async def _drive(
    client_dir: Path,
    adapter: str,
    mode: str,
    *arguments: str,
    token: str = matrix.TOKEN,
    env: dict[str, str] | None = None,
) -> matrix.Result:
    driver = client_dir / "drive.mjs"
    result = await matrix.drive(["node", driver, adapter, token, mode, *arguments], env)
    assert (result["client"], result["version"]) == ("@a2a-js/sdk", VERSION)
    assert (result["protocolVersion"], result["transport"]) == MODES[mode]
    return result


async def _called(adapter: str, result: matrix.Result) -> Counter[str]:
    """The requests the adapter answered, by method, in the binding the client spoke."""
    return await matrix.methods_called(adapter, matrix.binding_of(result["transport"]))


@pytest.mark.parametrize("mode", PARAMS)
async def test_every_outcome(
    client_dir: Path, adapter: str, stub: StubWebhook, mode: str, request: pytest.FixtureRequest
) -> None:
    result = await _drive(client_dir, adapter, mode, "conversation", *matrix.OUTCOME_TEXTS)
    matrix.note_runtime(request, result)
    matrix.check_conversation(result, stub, not_found_type="TaskNotFoundError")


@pytest.mark.parametrize(
    "mode", [p for p in _modes(" 1.1 draft") if getattr(p, "id", "") in ("v1.0", "v1.0-REST")]
)
async def test_a_caller_asking_for_the_1_1_draft_reads_its_answers_and_streams(
    client_dir: Path, adapter: str, stub: StubWebhook, mode: str
) -> None:
    """Every request with A2A-Version: 1.1, so every answer and event carries the task's
    generation (docs/calling.md): the SDK, which knows no such field, reads them alike."""
    asking = {"A2A_ASK_VERSION": "1.1"}
    result = await _drive(
        client_dir, adapter, mode, "conversation", *matrix.OUTCOME_TEXTS, env=asking
    )
    matrix.check_conversation(result, stub, not_found_type="TaskNotFoundError")
    stub.received.clear()
    streamed = await _drive(client_dir, adapter, mode, "stream", *matrix.STREAMED_TEXTS, env=asking)
    matrix.check_streams(streamed, stub)
    called = await matrix.methods_called(adapter, matrix.binding_of(streamed["transport"]))
    assert called, "the adapter answered none of the SDK's requests"


@pytest.mark.parametrize("mode", _modes(" sign-in asked"))
async def test_a_sign_in_asked_then_the_next_message_on_the_task(
    client_dir: Path, stub: StubWebhook, start_adapter: AdapterFactory, mode: str
) -> None:
    """ADAPTER_ALLOW_AUTH_REQUIRED: the SDK reads the task auth-required, with what to sign
    in to, and continues it with its next message, sent or streamed."""
    adapter = await start_adapter(stub.url, allow_auth_required=True)
    prompt = "signin:Sign in to the ERP, then say done."
    result = await _drive(client_dir, adapter, mode, "signin", prompt, matrix.ANSWER)
    for asked in (result["asked"], result["askedAgain"]):
        assert (asked["task"]["state"], asked["task"]["outcome"]) == (
            "auth-required",
            "AUTH_REQUIRED",
        )
        assert asked["task"]["statusText"] == "Sign in to the ERP, then say done."
    replied = result["replied"]["task"]
    assert (replied["id"], replied["state"]) == (result["asked"]["task"]["id"], "completed")
    streamed = result["streamedReply"]["events"]
    assert streamed[0]["taskId"] == result["askedAgain"]["task"]["id"]
    assert streamed[-1]["state"] == "completed"
    assert len(stub.received) == 4


@pytest.mark.parametrize("mode", _modes(" resumed execution"))
async def test_a_question_its_waiting_execution_answers(
    client_dir: Path, stub: StubWebhook, start_adapter: AdapterFactory, mode: str
) -> None:
    """A question carrying its n8n execution's resumeUrl: the SDK's next message on the
    task, sent and then streamed, goes to that execution; the SDK never sees the URL."""
    adapter = await start_adapter(stub.url, allow_input_required=True)
    result = await _drive(client_dir, adapter, mode, "signin", "ask-resume:9", matrix.ANSWER)
    assert result["asked"]["task"]["state"] == "input-required"
    assert result["replied"]["task"]["state"] == "completed"
    assert result["streamedReply"]["events"][-1]["state"] == "completed"
    waiting = "/webhook-waiting/9?signature=5ecret-9"
    assert [r.target for r in stub.received] == ["/webhook/supply", waiting] * 2
    assert "5ecret" not in json.dumps(result) and "webhook-waiting" not in json.dumps(result)


@pytest.mark.parametrize("mode", _modes(" retries"))
async def test_a_message_sent_again_is_its_first_task(
    client_dir: Path, adapter: str, stub: StubWebhook, mode: str, request: pytest.FixtureRequest
) -> None:
    result = await _drive(client_dir, adapter, mode, "retry", matrix.ANSWER)
    matrix.note_runtime(request, result)
    matrix.check_retry(result, stub)


@pytest.mark.parametrize("mode", PARAMS)
async def test_cancel(
    client_dir: Path, adapter: str, stub: StubWebhook, mode: str, request: pytest.FixtureRequest
) -> None:
    result = await _drive(client_dir, adapter, mode, "cancel", matrix.ANSWER, matrix.HOLD)
    matrix.note_runtime(request, result)
    await matrix.check_cancel(
        result,
        stub,
        not_found_type="TaskNotFoundError",
        not_cancelable_type="TaskNotCancelableError",
    )


@pytest.mark.parametrize("mode", PARAMS)
async def test_every_outcome_streamed(
    client_dir: Path, adapter: str, stub: StubWebhook, mode: str, request: pytest.FixtureRequest
) -> None:
    result = await _drive(client_dir, adapter, mode, "stream", *matrix.STREAMED_TEXTS)
    matrix.note_runtime(request, result)
    matrix.check_streams(result, stub)
    streaming_send, _ = STREAM_METHODS[result["protocolVersion"]]
    called = await _called(adapter, result)
    assert called[streaming_send] == len(matrix.STREAMED_TEXTS)
    await matrix.check_streams_closed(adapter)


@pytest.mark.parametrize("mode", PARAMS)
async def test_resubscribe(
    client_dir: Path, adapter: str, stub: StubWebhook, mode: str, request: pytest.FixtureRequest
) -> None:
    result = await _drive(client_dir, adapter, mode, "subscribe", matrix.HOLD)
    matrix.note_runtime(request, result)
    # A v1.0 refusal is a plain JSON-RPC error (over HTTP+JSON an HTTP error status), which
    # the SDK raises typed. A v0.3 one is the stream's one event, which it raises as a plain
    # Error with the typed error as its `cause` (the JSON-RPC transports'
    # _processSseEventData).
    wrapped = "" if result["protocolVersion"] == "1.0" else "Error caused by "
    await matrix.check_subscription(
        result,
        stub,
        not_found_type=f"{wrapped}TaskNotFoundError",
        unsupported_type=f"{wrapped}UnsupportedOperationError",
    )
    _, subscribe = STREAM_METHODS[result["protocolVersion"]]
    assert (await _called(adapter, result))[subscribe] == 3
    await matrix.check_streams_closed(adapter)


@pytest.mark.parametrize("mode", PARAMS)
async def test_two_verified_callers_are_isolated(
    client_dir: Path,
    nursery: trio.Nursery,
    stub: StubWebhook,
    start_adapter: AdapterFactory,
    mode: str,
    request: pytest.FixtureRequest,
) -> None:
    issuer = await start_issuer(nursery)
    # The card offers the local issuer's code flow and the scope: the client still reads it.
    adapter = await start_adapter(stub.url, **issuer.adapter_settings(scopes=("a2a.call",)))
    await matrix.until_ready(adapter)
    first = issuer.mint("alice", lifetime=60, jti="first", scope="a2a.call")
    other = issuer.mint("bob", scope="a2a.call")
    refreshed = issuer.mint("alice", lifetime=3600, jti="refreshed", scope="a2a.call")
    arguments = ("isolation", other, refreshed, matrix.ANSWER, matrix.HOLD)
    result = await _drive(client_dir, adapter, mode, *arguments, token=first)
    matrix.note_runtime(request, result)
    matrix.check_isolation(result, stub, token=first, lists=MODES[mode][0] == "1.0")


@pytest.mark.parametrize("mode", PARTS_PARAMS)
async def test_data_and_files_in_and_out(
    client_dir: Path,
    parts_adapter: str,
    stub: StubWebhook,
    mode: str,
    request: pytest.FixtureRequest,
) -> None:
    sent = json.dumps(matrix.PARTS_SENT)
    result = await _drive(client_dir, parts_adapter, mode, "parts", sent)
    matrix.note_runtime(request, result)
    matrix.check_parts(result, stub)


@pytest.mark.parametrize("mode", PARTS_PARAMS)
async def test_a_part_the_modes_do_not_take_is_refused(
    client_dir: Path, adapter: str, stub: StubWebhook, mode: str, request: pytest.FixtureRequest
) -> None:
    result = await _drive(client_dir, adapter, mode, "parts", json.dumps(matrix.PARTS_SENT))
    matrix.note_runtime(request, result)
    matrix.check_parts_refused(result, stub, error_type="ContentTypeNotSupportedError")
