"""The client matrix: each official A2A client in its own pinned environment, as a subprocess.

A client's dependencies must not fight ours (a2a-sdk 0.3 and 1.x cannot share a venv),
so each one is installed, pinned exactly by the files in tests/interop/clients/, into
a cache outside the checkout: `${N8N_A2A_CACHE:-~/.cache/n8n-a2a}/clients/`. An
environment is keyed by a hash of its pin files and runtime, made once, and reused;
a change of pins makes a new one.

Every driver script prints one JSON document of the same shape, which the checks
below hold to the same standard, whatever the client. A task is reported as
`{id, contextId, state, statusRole, statusText, artifacts, historyRoles, outcome}` with
v0.3 state and role names; a stream as `{events: [...]}`, plus `error` if it ended in
one, each event `{kind, taskId, state, final, statusRole, statusText, outcome,
artifact}` (`kind` as v0.3 names it: task, status-update, artifact-update, message;
`final` null where the client has no such field, as in v1.0). The parts scenario sends
the same message plainly (`sent`: the task, its artifacts as `{name, parts}`, each part
in the shapes of PARTS_SENT) and streamed (`streamed`: `{artifacts, state}`, the
artifact updates and the last state), or reports the error each ended in.
"""

from __future__ import annotations

import base64
import json
import os
import re
import shutil
import sys
from collections import Counter
from pathlib import Path
from typing import Any

import httpx
import pytest
import trio

from tests.support import installs
from tests.support.stub_webhook import StubWebhook

CLIENTS = Path(__file__).parent / "clients"
PY03_DIR = CLIENTS / "py03"
JS_DIR = CLIENTS / "js"

TOKEN = "eyJhbGciOi.matrix-token"
ANSWER = "answer:4 pallets in stock"
HOLD = "hold"  # the stub never answers it: the task stays in flight until canceled
# Every reply of the stub a client must see; the first completes, the others fail.
OUTCOME_TEXTS = [
    ANSWER,
    "escalate:needs approval",
    "silent",
    "n8n-error",
    "off-contract-json",
    "off-contract-text",
    "not-registered",
    "http-503",
    "redirect",
]
# Streamed: every outcome, and an answer slow enough that keep-alive comments come
# between its events (the clients' adapter sends them often: conftest.KEEPALIVE).
QUIET = "sleep:0.3"
STREAMED_TEXTS = [*OUTCOME_TEXTS, QUIET]
ANSWERS = {ANSWER: "4 pallets in stock", QUIET: "slept"}
FAILED_OUTCOMES = {
    "escalate:needs approval": "ESCALATED",
    "silent": "SILENT",
    "n8n-error": "SILENT",
    "off-contract-json": "OFF_CONTRACT",
    "off-contract-text": "OFF_CONTRACT",
    "not-registered": "NOT_REGISTERED",
    "http-503": "HTTP_ERROR",
    "redirect": "REDIRECTED",
}

Result = dict[str, Any]

# Parts beyond text: what every client sends beside the text `echo-parts` (the stub
# answers it with what it received), in the shapes the workflow receives them
# (docs/workflow-contract.md). The drivers build their own parts from these and report
# each artifact's parts in the same shapes, a text part as `{"text": ...}` and a data
# part as `{"data": ...}`.
PARTS_TEXT = "echo-parts"
PARTS_DATA = {"item": "flour", "pallets": 4, "urgent": True, "notes": None}
PARTS_FILES = [
    {
        "name": "order.csv",
        "mediaType": "text/csv",
        "base64": base64.b64encode(b"item,pallets\nflour,4\n").decode(),
    },
    {"name": "invoice.pdf", "mediaType": "application/pdf", "url": "https://example.com/i/7.pdf"},
]
PARTS_SENT = {"text": PARTS_TEXT, "data": [PARTS_DATA], "files": PARTS_FILES}
#: ADAPTER_INPUT_MODES and ADAPTER_OUTPUT_MODES that let all of them through, both ways.
PARTS_MODES = ("text/plain", "application/json", "text/csv", "application/pdf")


def pinned_python_version(package: str) -> str:
    """The version requirements.txt pins `package` to: the one source of that number."""
    text = (PY03_DIR / "requirements.txt").read_text()
    found = re.search(rf"^{re.escape(package)}==(\S+)$", text, re.MULTILINE)
    if found is None:
        raise LookupError(f"{package} is not pinned in {PY03_DIR / 'requirements.txt'}")
    return found.group(1)


def pinned_js_version(package: str) -> str:
    """The version package.json pins `package` to (exactly: no range)."""
    version: str = json.loads((JS_DIR / "package.json").read_text())["dependencies"][package]
    if not re.fullmatch(r"\d+\.\d+\.\d+", version):
        raise ValueError(f"{package} must be pinned exactly in package.json, not {version!r}")
    return version


# Installing the clients.


def python_client() -> Path:
    """The interpreter of a venv holding exactly tests/interop/clients/py03/requirements.txt."""
    requirements = PY03_DIR / "requirements.txt"
    runtime = f"{sys.version_info.major}.{sys.version_info.minor}".encode()

    def build(target: Path) -> None:
        installs.run([sys.executable, "-m", "venv", target / "venv"])
        python = target / "venv" / "bin" / "python"
        installs.run([python, "-m", "pip", "install", "--no-input", "-q", "-r", requirements])

    fingerprint = installs.fingerprint(requirements.read_bytes(), runtime)
    target = installs.prepared("a2a-sdk-py03", fingerprint, build)
    return target / "venv" / "bin" / "python"


def node_version() -> tuple[int, ...]:
    if shutil.which("node") is None or shutil.which("npm") is None:
        pytest.fail("the JavaScript client needs node and npm (Node 20 or later) on PATH")
    return tuple(int(n) for n in installs.run(["node", "--version"]).strip().lstrip("v").split("."))


def node_client() -> Path:
    """A directory with node_modules from `npm ci` of tests/interop/clients/js, and drive.mjs."""
    major = node_version()[0]
    if major < 20:
        pytest.fail(f"@a2a-js/sdk needs Node 20 or later; node is {major}")
    return installs.npm_project("a2a-js-sdk", JS_DIR, ("drive.mjs", "payloads.mjs"), major)


#: The JavaScript client's modes (drive.mjs's third argument) -> the wire version the SDK
#: must end up speaking, and the transport class it picks. `v1.0 REST`: the HTTP+JSON
#: binding, the client given that transport alone.
JS_MODES = {
    "v1.0": ("1.0", "JsonRpcTransport"),
    "legacyCompat": ("1.0", "JsonRpcTransport"),
    "legacyCompat-v0.3": ("0.3", "_LegacyJsonRpcTransport"),
    "v1.0 REST": ("1.0", "_RestTransport"),
}


# Driving them.


# A cold client start plus a dozen calls takes seconds; a hung driver must still end.
DRIVER_DEADLINE = 120


async def drive(argv: list[str | Path], env: dict[str, str] | None = None) -> Result:
    """Run a driver (with `env` beside this process's environment); its last line of
    output is the JSON result."""
    with trio.fail_after(DRIVER_DEADLINE):
        done = await trio.run_process(
            [str(a) for a in argv],
            capture_stdout=True,
            capture_stderr=True,
            check=False,
            env=None if env is None else {**os.environ, **env},
        )
    if done.returncode != 0:
        pytest.fail(f"driver exited {done.returncode}:\n{done.stderr.decode()[-4000:]}")
    result: Result = json.loads(done.stdout.decode().strip().splitlines()[-1])
    return result


def note_runtime(request: pytest.FixtureRequest, result: Result) -> None:
    """Put the runtime the client ran on (e.g. Node v20.20.2) into the JUnit report."""
    request.node.user_properties.append(("client_runtime", result["runtime"]))


# What every client must see.


def _task(outcome: Result, what: str) -> Result:
    assert "task" in outcome, f"{what}: expected a task, got {outcome}"
    task: Result = outcome["task"]
    return task


def _error(outcome: Result, what: str) -> Result:
    assert "error" in outcome, f"{what}: expected an error, got {outcome}"
    error: Result = outcome["error"]
    return error


def check_conversation(result: Result, stub: StubWebhook, *, not_found_type: str) -> None:
    """Every outcome, GetTask with historyLength, GetTask of an unknown id, and the token."""
    answered = _task(result["sent"][ANSWER], ANSWER)
    assert answered["state"] == "completed"
    assert answered["outcome"] == "ANSWERED"
    assert answered["artifacts"] == [{"name": "answer", "texts": ["4 pallets in stock"]}]
    assert answered["statusRole"] == "agent"
    assert answered["statusText"] == "4 pallets in stock"
    assert answered["historyRoles"] == ["user", "agent"]

    for text, outcome in FAILED_OUTCOMES.items():
        failed = _task(result["sent"][text], text)
        assert (failed["state"], failed["outcome"]) == ("failed", outcome), text
        assert failed["artifacts"] == [], text
        assert failed["statusRole"] == "agent", text
        assert failed["statusText"], text
    assert "needs approval" in result["sent"]["escalate:needs approval"]["task"]["statusText"]
    assert '{"result":42}' in result["sent"]["off-contract-json"]["task"]["statusText"]

    fetched = _task(result["get"], "GetTask")
    assert fetched["id"] == answered["id"]
    assert fetched["state"] == "completed"
    assert fetched["historyRoles"] == ["agent"]  # historyLength 1: the last message only

    unknown = _error(result["getUnknown"], "GetTask of an unknown id")
    assert (unknown["type"], unknown["code"]) == (not_found_type, -32001)

    assert len(stub.received) == len(OUTCOME_TEXTS)
    assert {r.headers.get("x-subject-token") for r in stub.received} == {TOKEN}
    assert all(TOKEN.encode() not in r.body for r in stub.received)


async def check_cancel(
    result: Result, stub: StubWebhook, *, not_found_type: str, not_cancelable_type: str
) -> None:
    """Cancel of an in-flight task, of a terminal one, and of an unknown id (spec §3.1.5)."""
    held = result["held"]
    assert held["state"] in ("submitted", "working"), "a non-blocking send returns at once"

    canceled = _task(result["cancel"], "CancelTask of an in-flight task")
    assert (canceled["id"], canceled["state"]) == (held["id"], "canceled")
    assert _task(result["getAfterCancel"], "GetTask after cancel")["state"] == "canceled"
    # A canceled task's webhook call is cut, not left to run: the stub saw it hang up.
    with trio.fail_after(5):
        await stub.wait_released()

    terminal = _error(result["cancelTerminal"], "CancelTask of a completed task")
    assert (terminal["type"], terminal["code"]) == (not_cancelable_type, -32002)
    unknown = _error(result["cancelUnknown"], "CancelTask of an unknown id")
    assert (unknown["type"], unknown["code"]) == (not_found_type, -32001)


def _events(outcome: Result, what: str) -> list[Result]:
    assert "error" not in outcome, f"{what}: the stream ended in an error: {outcome}"
    events: list[Result] = outcome["events"]
    return events


def _shown(events: list[Result]) -> list[tuple[str, str | None]]:
    return [(event["kind"], event["state"]) for event in events]


def _check_finals(events: list[Result], what: str) -> None:
    """v0.3 marks the last status update `final`, and only it; v1.0 has no such field."""
    finals = [event["final"] for event in events if event["kind"] == "status-update"]
    if any(final is not None for final in finals):
        assert finals == [False] * (len(finals) - 1) + [True], f"{what}: final flags {finals}"


def check_retry(result: Result, stub: StubWebhook) -> None:
    """One message sent twice, then streamed (docs/calling.md, Sending a message again):
    each answered by its first sending's task, and the workflow called once."""
    first = _task(result["first"], "the first sending")
    assert (first["state"], first["outcome"]) == ("completed", "ANSWERED")
    again = _task(result["again"], "the same message sent again")
    assert again == first
    events = _events(result["streamedAgain"], "the same message streamed")
    # Its turn over: the task as it stands, and the stream ends.
    assert _shown(events) == [("task", "completed")]
    assert events[0]["taskId"] == first["id"]
    assert [(r.json["taskId"], r.json["text"]) for r in stub.received] == [(first["id"], ANSWER)]


def check_streams(result: Result, stub: StubWebhook) -> None:
    """Every outcome by streaming send: the task, `working`, the answer, the terminal status;
    and a quiet stream, whose keep-alive comments the client must skip."""
    for text in STREAMED_TEXTS:
        events = _events(result["streamed"][text], text)
        task_id = events[0]["taskId"]
        assert all(event["taskId"] == task_id for event in events), text
        _check_finals(events, text)
        last = events[-1]
        if text in ANSWERS:
            assert _shown(events) == [
                ("task", "submitted"),
                ("status-update", "working"),
                ("artifact-update", None),
                ("status-update", "completed"),
            ], text
            assert events[2]["artifact"] == {"name": "answer", "texts": [ANSWERS[text]]}, text
            assert (last["outcome"], last["statusText"]) == ("ANSWERED", ANSWERS[text]), text
        else:
            assert _shown(events) == [
                ("task", "submitted"),
                ("status-update", "working"),
                ("status-update", "failed"),
            ], text
            assert last["outcome"] == FAILED_OUTCOMES[text], text
            assert last["statusText"], text
        assert last["statusRole"] == "agent", text
        # A client that builds the task from the events (a2a-sdk 0.3) must end where the
        # server did.
        built = result["streamed"][text].get("task")
        if built is not None:
            assert (built["id"], built["state"]) == (task_id, last["state"]), text
            assert built["statusText"] == last["statusText"], text
            expected = [events[2]["artifact"]] if text in ANSWERS else []
            assert built["artifacts"] == expected, text
    assert (
        "needs approval"
        in result["streamed"]["escalate:needs approval"]["events"][-1]["statusText"]
    )

    assert len(stub.received) == len(STREAMED_TEXTS)
    assert {r.headers.get("x-subject-token") for r in stub.received} == {TOKEN}


async def check_subscription(
    result: Result, stub: StubWebhook, *, not_found_type: str, unsupported_type: str
) -> None:
    """A subscription to a running task (spec §3.1.6): the task, then its later events until
    the final one; a cancel from elsewhere ends it; a finished or unknown task is refused."""
    held = result["held"]
    assert held["state"] in ("submitted", "working"), "a non-blocking send returns at once"
    events = _events(result["subscribed"], "subscription to a running task")
    assert _shown(events) == [("task", "working"), ("status-update", "canceled")]
    assert {event["taskId"] for event in events} == {held["id"]}
    _check_finals(events, "subscription")
    assert events[-1]["outcome"] == "CANCELED"
    with trio.fail_after(5):
        await stub.wait_released()

    for name, code, error_type in (
        ("subscribeFinished", -32004, unsupported_type),
        ("subscribeUnknown", -32001, not_found_type),
    ):
        refused = result[name]
        assert refused["events"] == [], f"{name}: {refused}"
        error = _error(refused, name)
        assert (error["type"], error["code"]) == (error_type, code), name


# What the adapter saw: which methods the client called.


def binding_of(transport: str) -> str:
    """The binding a client's transport class speaks, as the adapter's metrics name it."""
    return "http_json" if "Rest" in transport else "jsonrpc"


async def methods_called(adapter: str, binding: str = "jsonrpc") -> Counter[str]:
    """Requests of `binding` answered so far, by method (from /metrics; HTTP+JSON's by their
    v1.0 JSON-RPC names), to tell a client's stream from its plain send, and its binding."""
    async with httpx.AsyncClient() as client:
        text = (await client.get(adapter + "metrics")).text
    called: Counter[str] = Counter()
    for labels, count in re.findall(
        r"^n8n_a2a_jsonrpc_requests_total\{(.*)\} (\S+)$", text, re.MULTILINE
    ):
        if f'binding="{binding}"' in labels:
            [method] = re.findall(r'method="([^"]*)"', labels)
            called[method] += int(float(count))
    return called


async def check_streams_closed(adapter: str) -> None:
    """Every stream the client opened has ended on the server too: none left open."""
    async with httpx.AsyncClient() as client:
        text = (await client.get(adapter + "metrics")).text
    assert re.search(r"^n8n_a2a_streams_open 0\.0$", text, re.MULTILINE), text


def check_isolation(result: Result, stub: StubWebhook, *, token: str, lists: bool) -> None:
    """Another caller gets for the first caller's tasks what it gets for an unknown id (get,
    cancel, subscribe), lists none of them; the first caller, its token refreshed, still
    gets and cancels its task. `lists`: the client speaks a version that has ListTasks."""
    sent, held = result["sent"], result["held"]
    assert sent["state"] == "completed" and held["state"] in ("submitted", "working")
    attempts = result["other"]
    unknown = attempts["unknown"]
    for attempt in ("get", "cancel", "subscribe"):
        expected = _error(unknown[attempt], f"{attempt} of an unknown id")
        assert expected["code"] == -32001, expected
        for name, task_id in (("sent", sent["id"]), ("held", held["id"])):
            refused = _error(attempts[name][attempt], f"another caller's {attempt} of {name}")
            masked = {**refused, "message": refused["message"].replace(task_id, "<id>")}
            assert masked == {
                **expected,
                "message": expected["message"].replace(result["unknown"], "<id>"),
            }
    if lists:
        assert result["otherList"] == {"ids": []}
        assert result["ownList"] == {"ids": [held["id"], sent["id"]]}
    assert _task(result["refreshedGet"], "GetTask with a refreshed token")["state"] == "working"
    canceled = _task(result["refreshedCancel"], "CancelTask with a refreshed token")
    assert canceled["state"] == "canceled"
    assert [r.headers.get("x-subject-token") for r in stub.received] == [token, token]


async def until_ready(adapter: str) -> None:
    """Until the adapter's /readyz says ready (with an issuer: its keys are loaded)."""
    async with httpx.AsyncClient() as client:
        with trio.fail_after(10):
            while (await client.get(adapter + "readyz")).status_code != 200:  # noqa: ASYNC110
                await trio.sleep(0.02)


def _check_parts_artifacts(artifacts: list[Result], what: str) -> None:
    answer = f"1 data, {len(PARTS_FILES)} files"
    expected = {
        "answer": [{"text": answer}],
        "data": [{"data": {"received": [PARTS_DATA]}}],
        **{file["name"]: [file] for file in PARTS_FILES},
    }
    assert {a["name"]: a["parts"] for a in artifacts} == expected, what
    assert len(artifacts) == len(expected), what
    names = [file["name"] for file in PARTS_FILES]
    assert [a["name"] for a in artifacts if a["name"] in names] == names, f"{what}: file order"


def check_parts(result: Result, stub: StubWebhook) -> None:
    """A data part and files beside the text reach the workflow in order, and its data and
    files come back as artifacts the client reads with its own types, sent and streamed."""
    task = _task(result["sent"], "a send with data and files")
    assert (task["state"], task["outcome"]) == ("completed", "ANSWERED"), task
    assert task["statusText"] == f"1 data, {len(PARTS_FILES)} files"
    _check_parts_artifacts(task["artifacts"], "sent")
    streamed = result["streamed"]
    assert "error" not in streamed, streamed
    assert streamed["state"] == "completed"
    _check_parts_artifacts(streamed["artifacts"], "streamed")
    assert len(stub.received) == 2
    for received in stub.received:
        assert {key: received.json.get(key) for key in PARTS_SENT} == PARTS_SENT


def check_parts_refused(result: Result, stub: StubWebhook, *, error_type: str) -> None:
    """With the default modes (text only) the data part, the first one not taken, is
    refused by its index and type, sent or streamed, and nothing reaches the workflow.
    `error_type`: the plain send's (some clients wrap an error a stream carries)."""
    sent = _error(result["sent"], "a send with data and files to a text-only agent")
    assert sent["type"] == error_type, sent
    streamed = _error(result["streamed"], "the same, streamed")
    for error in (sent, streamed):
        assert error["code"] == -32005, error
        assert "parts[1]" in error["message"], error
        assert "application/json" in error["message"], error
    assert stub.received == []
