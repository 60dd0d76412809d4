"""The official a2a-sdk 0.3.x Python client, in its own venv, against the real adapter.

It speaks v0.3 only: `message/send` without an A2A-Version header, and it reads the
card's top-level `url`, which the adapter adds for any caller that does not ask for 1.0.
With its default settings it streams (`message/stream`, `tasks/resubscribe`), since the
card says `capabilities.streaming: true`; told `streaming=False` it sends `message/send`.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.interop import matrix
from tests.support.stub_webhook import StubWebhook

VERSION = matrix.pinned_python_version("a2a-sdk")
DRIVER = matrix.PY03_DIR / "drive.py"

conformance = pytest.mark.client("a2a-sdk (Python)", VERSION, "v0.3")


@pytest.fixture(scope="module")
def python() -> Path:
    return matrix.python_client()


async def _drive(python: Path, adapter: str, *arguments: str) -> matrix.Result:
    result = await matrix.drive([python, DRIVER, adapter, matrix.TOKEN, *arguments])
    assert (result["client"], result["version"]) == ("a2a-sdk", VERSION)
    # The SDK's only JSON-RPC transport, on the card's v0.3 fields.
    assert (result["transport"], result["protocolVersion"]) == ("JsonRpcTransport", "0.3.0")
    return result


@conformance
async def test_every_outcome(
    python: Path, adapter: str, stub: StubWebhook, request: pytest.FixtureRequest
) -> None:
    result = await _drive(python, adapter, "conversation", *matrix.OUTCOME_TEXTS)
    matrix.note_runtime(request, result)
    # 0.3 raises one error type for every JSON-RPC error; the code tells them apart.
    matrix.check_conversation(result, stub, not_found_type="A2AClientJSONRPCError")
    assert "message/stream" not in await matrix.methods_called(adapter)


@conformance
async def test_cancel(
    python: Path, adapter: str, stub: StubWebhook, request: pytest.FixtureRequest
) -> None:
    result = await _drive(python, adapter, "cancel", matrix.ANSWER, matrix.HOLD)
    matrix.note_runtime(request, result)
    await matrix.check_cancel(
        result,
        stub,
        not_found_type="A2AClientJSONRPCError",
        not_cancelable_type="A2AClientJSONRPCError",
    )


@pytest.mark.client("a2a-sdk (Python)", VERSION, "v0.3 retries")
async def test_a_message_sent_again_is_its_first_task(
    python: Path, adapter: str, stub: StubWebhook, request: pytest.FixtureRequest
) -> None:
    result = await _drive(python, adapter, "retry", matrix.ANSWER)
    matrix.note_runtime(request, result)
    matrix.check_retry(result, stub)


@conformance
async def test_every_outcome_streamed(
    python: Path, adapter: str, stub: StubWebhook, request: pytest.FixtureRequest
) -> None:
    result = await _drive(python, adapter, "stream", *matrix.STREAMED_TEXTS)
    matrix.note_runtime(request, result)
    matrix.check_streams(result, stub)
    called = await matrix.methods_called(adapter)
    assert (called["message/stream"], called["message/send"]) == (len(matrix.STREAMED_TEXTS), 0)
    await matrix.check_streams_closed(adapter)


@conformance
async def test_resubscribe(
    python: Path, adapter: str, stub: StubWebhook, request: pytest.FixtureRequest
) -> None:
    result = await _drive(python, adapter, "subscribe", matrix.HOLD)
    matrix.note_runtime(request, result)
    await matrix.check_subscription(
        result,
        stub,
        not_found_type="A2AClientJSONRPCError",
        unsupported_type="A2AClientJSONRPCError",
    )
    assert (await matrix.methods_called(adapter))["tasks/resubscribe"] == 3
    await matrix.check_streams_closed(adapter)


@pytest.mark.client("a2a-sdk (Python)", VERSION, "v0.3 parts")
async def test_data_and_files_in_and_out(
    python: Path, parts_adapter: str, stub: StubWebhook, request: pytest.FixtureRequest
) -> None:
    result = await _drive(python, parts_adapter, "parts", json.dumps(matrix.PARTS_SENT))
    matrix.note_runtime(request, result)
    matrix.check_parts(result, stub)


@pytest.mark.client("a2a-sdk (Python)", VERSION, "v0.3 parts")
async def test_a_part_the_modes_do_not_take_is_refused(
    python: Path, adapter: str, stub: StubWebhook, request: pytest.FixtureRequest
) -> None:
    result = await _drive(python, adapter, "parts", json.dumps(matrix.PARTS_SENT))
    matrix.note_runtime(request, result)
    matrix.check_parts_refused(result, stub, error_type="A2AClientJSONRPCError")


@pytest.mark.not_a_client
def test_the_driver_type_checks_against_its_own_sdk(python: Path) -> None:
    """mypy --strict on drive.py (and the scenario modules beside it) with the 0.3 venv's
    packages, not the project's a2a-sdk 1.x."""
    checked = subprocess.run(
        [
            sys.executable,
            "-m",
            "mypy",
            "--strict",
            "--no-incremental",
            "--python-executable",
            str(python),
            str(DRIVER),
        ],
        # drive.py imports its scenario modules as Python does, from its own folder; mypy
        # follows it there and checks them too.
        env={**os.environ, "MYPYPATH": str(matrix.PY03_DIR)},
        capture_output=True,
        text=True,
        check=False,
    )
    assert checked.returncode == 0, checked.stdout + checked.stderr
