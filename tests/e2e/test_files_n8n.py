"""Files of megabytes through a real n8n 2.41: uploads as n8n's binary data
(ADAPTER_WEBHOOK_FILES=multipart) arriving whole by the SHA-256 n8n's Crypto node reads,
a file past N8N_PAYLOAD_SIZE_MAX as base64 failing with a reason naming it (the same file
as binary data taken), and a file a Code node makes arriving whole in the task.

The workflows are n8n/workflows/file_digest.json and file_reply.json; the n8n behind them
is the session's, at n8n's defaults (N8N_PAYLOAD_SIZE_MAX 16 MiB), see conftest.py.
"""

from __future__ import annotations

import base64
import hashlib
import os
from collections.abc import Awaitable, Callable
from typing import Any

import httpx

from tests.e2e.real_n8n import N8n
from tests.support.jsonrpc import V1, send_v1

StartAdapter = Callable[..., Awaitable[str]]

MIB = 1024 * 1024
DIGEST = "file-digest"
REPLY = "file-reply"
BINARY = "application/octet-stream"
MODES = ("text/plain", BINARY, "text/csv")
#: The upload: several megabytes, well within N8N_PAYLOAD_SIZE_MAX either way.
UPLOAD_BYTES = 5 * MIB
#: Past N8N_PAYLOAD_SIZE_MAX (16 MiB) as base64 (17.3 MiB), within it as bytes.
PAST_JSON_BOUND_BYTES = 13 * MIB
#: The reply file, made by a Code node: several megabytes, read whole at the default
#: ADAPTER_MAX_REPLY_BYTES (32 MiB).
REPLY_FILE_BYTES = 3 * MIB


async def send(adapter: str, text: str, *files: tuple[str, bytes]) -> dict[str, Any]:
    """One v1.0 SendMessage of the text and the files (`raw`, base64); the task it answers.
    Megabytes through n8n take seconds on a busy machine: a minute's deadline."""
    document = send_v1(text)
    document["params"]["message"]["parts"] += [
        {"raw": base64.b64encode(content).decode(), "filename": name, "mediaType": BINARY}
        for name, content in files
    ]
    async with httpx.AsyncClient(timeout=60) as client:
        reply = await client.post(adapter, json=document, headers=V1)
    assert reply.status_code == 200, reply.text[:2000]
    task: dict[str, Any] = reply.json()["result"]["task"]
    return task


def answer_of(task: dict[str, Any]) -> str:
    assert task["status"]["state"] == "TASK_STATE_COMPLETED", task["status"]
    [answer] = [artifact for artifact in task["artifacts"] if artifact["name"] == "answer"]
    text: str = answer["parts"][0]["text"]
    return text


def digest_line(field: str, name: str, content: bytes) -> str:
    """The line file_digest.json answers for one file, from the file itself."""
    size, sha256 = len(content), hashlib.sha256(content).hexdigest()
    return f'{field} "{name}" ({BINARY}): {size} bytes of {size} listed, sha256 {sha256}'


async def test_a_multi_megabyte_upload_reaches_n8n_as_binary_data_whole(
    n8n: N8n, start_adapter: StartAdapter
) -> None:
    adapter = await start_adapter(n8n.webhook(DIGEST), webhook_files="multipart", input_modes=MODES)
    upload = os.urandom(UPLOAD_BYTES)
    # A name n8n must keep as written: not ASCII, and a quote that must not end its header.
    name = 'Prüfbericht "Q3" ✓.bin'
    task = await send(adapter, "Check these.", (name, upload), ("", b"abc"))
    assert answer_of(task).splitlines() == [
        digest_line("file0", name, upload),
        # n8n names a nameless file after its field, as the adapter sends it.
        digest_line("file1", "file1", b"abc"),
    ]


async def test_a_file_past_n8ns_json_bound_fails_naming_it_and_goes_as_binary_data(
    n8n: N8n, start_adapter: StartAdapter
) -> None:
    upload = os.urandom(PAST_JSON_BOUND_BYTES)
    as_json = await start_adapter(n8n.webhook(DIGEST), input_modes=MODES)
    refused = await send(as_json, "Check this.", ("big.bin", upload))
    assert refused["status"]["state"] == "TASK_STATE_FAILED"
    assert refused["metadata"] == {"outcome": "HTTP_ERROR"}
    reason = refused["status"]["message"]["parts"][0]["text"]
    assert reason.startswith(
        'n8n failed the request before its workflow ran (HTTP 500 "There was a problem '
        'executing the workflow"), as n8n 2.41 answers a JSON body too large for it; this '
        "one was a JSON body of 17.3 MiB. n8n takes a JSON body up to N8N_PAYLOAD_SIZE_MAX "
        "(16 MiB by default; a file's base64 is 4/3 of its bytes)."
    ), reason
    assert "ADAPTER_WEBHOOK_FILES=multipart" in reason
    assert reason.endswith(
        'n8n said: {"code":0,"message":"There was a problem executing the workflow"}'
    )
    as_binary = await start_adapter(
        n8n.webhook(DIGEST), webhook_files="multipart", input_modes=MODES
    )
    taken = await send(as_binary, "Check this.", ("big.bin", upload))
    assert answer_of(taken) == digest_line("file0", "big.bin", upload)


def pattern(size: int) -> bytes:
    """The bytes file_reply.json makes: byte i is (31 i + 7) mod 251."""
    cycle = bytes((31 * i + 7) % 251 for i in range(251))
    return (cycle * (size // 251 + 1))[:size]


async def test_a_file_a_code_node_makes_reaches_the_caller_whole(
    n8n: N8n, start_adapter: StartAdapter
) -> None:
    adapter = await start_adapter(n8n.webhook(REPLY), input_modes=MODES, output_modes=MODES)
    task = await send(adapter, str(REPLY_FILE_BYTES))
    assert answer_of(task) == f"Here is pattern.bin: {REPLY_FILE_BYTES} bytes."
    [file] = [artifact["parts"] for artifact in task["artifacts"] if artifact["name"] != "answer"]
    [part] = file
    assert (part["filename"], part["mediaType"]) == ("pattern.bin", BINARY)
    content = base64.b64decode(part["raw"], validate=True)
    assert len(content) == REPLY_FILE_BYTES
    assert hashlib.sha256(content).digest() == hashlib.sha256(pattern(REPLY_FILE_BYTES)).digest()


async def test_the_reply_workflow_reads_a_multipart_request_too(
    n8n: N8n, start_adapter: StartAdapter
) -> None:
    adapter = await start_adapter(n8n.webhook(REPLY), webhook_files="multipart", output_modes=MODES)
    task = await send(adapter, "1000")
    assert answer_of(task) == "Here is pattern.bin: 1000 bytes."
