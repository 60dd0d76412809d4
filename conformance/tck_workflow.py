"""A workflow stand-in for the A2A TCK: it answers the TCK's scenarios within our contract.

The TCK (a2aproject/a2a-tck, branch 1.0-dev) picks what its system under test does by
the prefix of the message's `messageId` (`scenarios/*.feature` there). The adapter
passes `messageId` through to the workflow, so this webhook reads it and answers as
an n8n workflow keeping the contract `{"answer": str, "escalate": bool}` would, with
the third key `"inputRequired": true` where a scenario asks for input (the adapter
runs with ADAPTER_ALLOW_INPUT_REQUIRED=true), and `"files"` or `"data"` where it asks
for a file or data artifact, as the kit's reference agent makes them (the adapter runs
with ADAPTER_OUTPUT_MODES=text/plain,application/json,*/*: data, and a text/plain file,
which text/plain alone does not let through, since that is the answer's mode).
The kit's follow-up message on a task waiting for input carries another prefix
(`tck-complete-task`, ...), which answers it.

Scenarios the contract cannot express (a direct Message, rejected, a chunked artifact)
get the nearest honest contract reply, noted per prefix below: the adapter then answers
a correct A2A task, just not the one the scenario asks for, and the TCK counts that
requirement as failed.

    python -m conformance.tck_workflow --port 8701
    # then: ADAPTER_WEBHOOK_URL=http://127.0.0.1:8701/webhook/tck \
    #       ADAPTER_OUTPUT_MODES='text/plain,application/json,*/*' \
    #       ADAPTER_ALLOW_INPUT_REQUIRED=true ADAPTER_PUSH_ALLOW_HOSTS=localhost n8n-a2a
    # (localhost: the host of the kit's push receiver; docs/conformance.md)
"""

from __future__ import annotations

import argparse
import base64
import copy
import json
from typing import Any

import trio
from hypercorn.config import Config
from hypercorn.trio import serve
from hypercorn.typing import ASGIReceiveCallable, ASGISendCallable, Scope


def _answer(text: str) -> dict[str, Any]:
    return {"answer": text, "escalate": False}


def _escalate(text: str) -> dict[str, Any]:
    return {"answer": text, "escalate": True}


def _ask(question: str) -> dict[str, Any]:
    return {"answer": question, "escalate": False, "inputRequired": True}


def _file(**content: str) -> dict[str, Any]:
    """The kit's file artifact: `output.txt`, text/plain, its bytes or its URL."""
    file = {"name": "output.txt", "mediaType": "text/plain", **content}
    return {**_answer("output.txt"), "files": [file]}


# The reference agent's file: the bytes `tck` (sut/a2a-python/sut_agent.py in the kit).
_FILE_BYTES = _file(base64=base64.b64encode(b"tck").decode())


# Prefix -> the contract reply. reply_for tries the longest prefix first, so that
# `tck-artifact-file-url` wins over `tck-artifact-file`.
SCENARIOS: dict[str, dict[str, Any]] = {
    "tck-complete-task": _answer("Hello from TCK"),
    "tck-artifact-text": _answer("Generated text content"),
    # A file (bytes or URL) or data artifact beside the answer's text artifact.
    "tck-artifact-file-url": _file(url="https://example.com/output.txt"),
    "tck-artifact-file": _FILE_BYTES,
    "tck-artifact-data": {**_answer("Generated data"), "data": {"key": "value", "count": 42}},
    # Not expressible: a direct Message reply. Every reply becomes a Task.
    "tck-message-response": _answer("Direct message response"),
    # The task waits in input-required for the kit's next message naming it.
    "tck-input-required": _ask("Input required: send the next message on this task."),
    # Not expressible: rejected. Escalation, "a person must take over", is the
    # nearest: the task fails, it is not rejected.
    "tck-reject-task": _escalate("rejected"),
    # Streaming scenarios: the adapter streams the task, `working`, the answer as an
    # artifact and `completed`, as these ask.
    "tck-stream-artifact-text": _answer("Streamed text content"),
    "tck-stream-ordering-001": _answer("Ordered output"),
    "tck-stream-001": _answer("Stream hello from TCK"),
    "tck-stream-003": _answer("Stream task lifecycle"),
    "tck-stream-artifact-file": _FILE_BYTES,
    # Not expressible: two chunks of one artifact (the answer is one artifact), a
    # message-only stream (every reply becomes a Task).
    "tck-stream-artifact-chunked": _answer("chunk-1 chunk-2"),
    "tck-stream-002": _answer("Stream message-only"),
}


def reply_for(message_id: str) -> dict[str, Any]:
    """The contract reply for a message, chosen by its messageId's scenario prefix."""
    for prefix in sorted(SCENARIOS, key=len, reverse=True):
        if message_id.startswith(prefix):
            return copy.deepcopy(SCENARIOS[prefix])
    # The TCK's reference SUT completes any other message with this echo.
    return _answer(f"Unhandled messageId prefix: {message_id}")


async def app(scope: Scope, receive: ASGIReceiveCallable, send: ASGISendCallable) -> None:
    """The webhook: one JSON reply per POST, whatever the path."""
    if scope["type"] == "lifespan":
        while (await receive())["type"] != "lifespan.shutdown":
            await send({"type": "lifespan.startup.complete"})
        await send({"type": "lifespan.shutdown.complete"})
        return
    body = b""
    while True:
        event = await receive()
        if event["type"] != "http.request":
            return  # the adapter hung up before it had sent the whole request
        body += event["body"]
        if not event["more_body"]:
            break
    try:
        message_id = str(json.loads(body).get("messageId", ""))
    except (ValueError, AttributeError):
        message_id = ""
    content = json.dumps(reply_for(message_id)).encode()
    headers = [(b"content-type", b"application/json; charset=utf-8")]
    await send(
        {"type": "http.response.start", "status": 200, "headers": headers, "trailers": False}
    )
    await send({"type": "http.response.body", "body": content, "more_body": False})


async def serve_workflow(
    host: str, port: int, *, task_status: trio.TaskStatus[list[str]] = trio.TASK_STATUS_IGNORED
) -> None:
    """Serve the stand-in until cancelled; report the bound URLs through task_status."""
    config = Config()
    config.bind = [f"{host}:{port}"]
    config.accesslog = None
    await serve(app, config, task_status=task_status)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8701)
    arguments = parser.parse_args(argv)

    async def run() -> None:
        async with trio.open_nursery() as nursery:
            [url] = await nursery.start(serve_workflow, arguments.host, arguments.port)
            print(f"TCK workflow stand-in on {url}", flush=True)

    trio.run(run)


if __name__ == "__main__":
    main()
