"""Real payloads, whole, with the official a2a-sdk 0.3.x Python client (in its own venv):
answers of 200 KiB and 1 MiB, reply files of 50 KiB and 5 MiB, an upload of 5 MiB, by
every path v0.3 has (tests/interop/payloads.py), the adapter at its size defaults.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.interop import matrix, payloads
from tests.interop.payloads import Result
from tests.support.adapter import AdapterFactory
from tests.support.push_receiver import PushReceiver
from tests.support.stub_webhook import StubWebhook

VERSION = matrix.pinned_python_version("a2a-sdk")
DRIVER = matrix.PY03_DIR / "drive.py"
PATHS = [path for path in payloads.PATHS if payloads.cases(payloads.SMALL, path, "0.3")]


@pytest.fixture(scope="module")
def python() -> Path:
    return matrix.python_client()


@pytest.mark.client("a2a-sdk (Python)", VERSION, "v0.3 payloads")
@pytest.mark.parametrize("path", PATHS)
async def test_payloads_arrive_whole(
    python: Path,
    stub: StubWebhook,
    start_adapter: AdapterFactory,
    receiver: PushReceiver,
    tmp_path: Path,
    path: str,
    request: pytest.FixtureRequest,
) -> None:
    adapter = await payloads.start_payload_adapter(stub, start_adapter)

    async def drive(cases: list[Result]) -> Result:
        argv: list[str | Path] = [python, DRIVER, adapter, matrix.TOKEN, "payloads"]
        result = await matrix.drive([*argv, json.dumps(cases)])
        assert (result["client"], result["version"]) == ("a2a-sdk", VERSION)
        matrix.note_runtime(request, result)
        return result

    client = ("0.3", "jsonrpc", drive)
    await payloads.check_whole(stub, adapter, receiver, tmp_path, path, payloads.SMALL, client)
