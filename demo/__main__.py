"""`python -m demo`: a real n8n, the adapter in front of its workflows, a talk over A2A.

It installs n8n once per machine (`n8n/run install`, minutes the first time), starts it
on 127.0.0.1 with the example workflows in n8n/workflows/, and puts one `n8n-a2a`
process in front of each workflow it shows, configured by environment only, as in
production. The caller is the official a2a-sdk client; like a chat bridge, it sends the
answer to a question on the task that asked it, attaches files beside its text, and
streams a reply that the workflow writes a piece at a time.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
from a2a.client import A2ACardResolver, Client, ClientConfig, ClientFactory
from a2a.helpers import get_data_parts, new_data_part, new_raw_part
from a2a.types import (
    AgentCard,
    GetTaskRequest,
    Message,
    Part,
    Role,
    SendMessageRequest,
    Task,
    TaskState,
)

RUN_N8N = Path(__file__).resolve().parents[1] / "n8n" / "run"
TOKEN = "demo.subject-token.for-the-workflow"
STOCK_LIST = b"item,pallets\nflour,12\nsugar,3\nrice,0\nsalt,40\n"
TEXT_ONLY = ["text/plain"]
#: A task in these states takes the caller's next message as its next turn.
WAITS_FOR_THE_CALLER = (TaskState.TASK_STATE_INPUT_REQUIRED, TaskState.TASK_STATE_AUTH_REQUIRED)


@dataclass(frozen=True)
class Scene:
    """One workflow, what it shows, and what the caller says to it (with or without a token).

    `attached`: parts the caller sends beside the text of each message. `environment`: the
    adapter's settings for this scene, over the supply agent's. `streams`: the caller sends
    SendStreamingMessage and shows each piece of the answer as it arrives.
    """

    title: str
    webhook_path: str
    said: tuple[tuple[str, bool], ...]
    attached: tuple[Part, ...] = ()
    environment: Mapping[str, str] = field(default_factory=dict)
    streams: bool = False


SCENES = (
    Scene(
        "The supply agent: answers, a second turn on the same context, an escalation",
        "check-availability",
        (
            ("Are there 4 pallets of flour?", True),
            ("And 2 pallets of rice?", True),
            ("Then 30 pallets of salt, please.", True),
        ),
    ),
    Scene(
        "The agent asks which item; the answer continues the same task",
        "check-availability-turns",
        (("Are there 5 pallets?", True), ("Sugar.", True)),
        environment={"ADAPTER_ALLOW_INPUT_REQUIRED": "true"},
    ),
    Scene(
        "One n8n execution across turns: it asks, waits in its Wait node, answers from memory",
        "which-item",
        (("Are there 5 pallets?", True), ("sugar", True)),
        environment={"ADAPTER_ALLOW_INPUT_REQUIRED": "true"},
    ),
    Scene(
        "A sign-in asked (auth-required); the same execution goes on once the caller says so",
        "erp-orders",
        (("10 pallets of flour, please.", True), ("Done: I signed in.", True)),
        environment={"ADAPTER_ALLOW_AUTH_REQUIRED": "true"},
    ),
    Scene(
        "A CSV stock list and a JSON object in; a data object and a CSV reorder list out",
        "stock-report",
        (("Which items need reordering?", True),),
        attached=(
            new_data_part({"minimum": 5}),
            new_raw_part(STOCK_LIST, media_type="text/csv", filename="stock.csv"),
        ),
        environment={
            "ADAPTER_SKILL_ID": "stock_report",
            "ADAPTER_SKILL_NAME": "Stock report",
            "ADAPTER_SKILL_DESCRIPTION": "The items of a CSV stock list below a minimum.",
            "ADAPTER_SKILL_EXAMPLES": "Which items need reordering?",
            "ADAPTER_INPUT_MODES": "text/plain,application/json,text/csv",
            "ADAPTER_OUTPUT_MODES": "text/plain,application/json,text/csv",
        },
    ),
    Scene(
        "A workflow that streams: the stock list a line at a time, shown as n8n writes it",
        "stock-stream",
        (("What is in stock?", True),),
        environment={
            "ADAPTER_WEBHOOK_STREAMING": "true",
            "ADAPTER_SKILL_ID": "stock_list",
            "ADAPTER_SKILL_NAME": "Stock list",
            "ADAPTER_SKILL_DESCRIPTION": "Every item in stock, a line at a time.",
            "ADAPTER_SKILL_EXAMPLES": "What is in stock?",
        },
        streams=True,
    ),
    Scene(
        "The token reaches the workflow in X-Subject-Token, and only there",
        "supply-token",
        (("Did my token arrive?", True), ("And without one?", False)),
    ),
    Scene("A node throws (n8n 2.41 answers HTTP 500)", "supply-silent", (("Anything?", True),)),
    Scene(
        "The Respond node never runs (HTTP 200, empty body)",
        "supply-silent-noitems",
        (("Anything?", True),),
    ),
    Scene("The workflow drifted off contract", "supply-offcontract", (("Anything?", True),)),
    Scene("The workflow is not published", "supply-inactive", (("Anything?", True),)),
)


def main() -> None:
    print("Installing n8n if this machine has none yet (minutes, once) ...", flush=True)
    subprocess.run([str(RUN_N8N), "install"], check=True)
    with (
        tempfile.TemporaryDirectory(prefix="n8n-a2a-demo-") as datadir,
        running_n8n(datadir) as n8n_url,
    ):
        print(f"n8n serves {n8n_url}\n")
        for scene in SCENES:
            webhook_url = f"{n8n_url}/webhook/{scene.webhook_path}"
            with running_adapter(webhook_url, scene.environment) as adapter_url:
                print(f"== {scene.title}\n   n8n-a2a {adapter_url} -> {scene.webhook_path}")
                asyncio.run(talk(adapter_url, scene))
                print()


async def talk(adapter_url: str, scene: Scene) -> None:
    context_id = str(uuid.uuid4())
    waiting = ""  # the task that asked a question: the next message answers it
    async with httpx.AsyncClient(timeout=30) as http:
        card = await A2ACardResolver(http, adapter_url).get_agent_card()
        show_modes(card)
        config = ClientConfig(streaming=scene.streams, httpx_client=http)
        client = ClientFactory(config).create(card)
        for text, with_token in scene.said:
            http.headers.pop("Authorization", None)
            if with_token:
                http.headers["Authorization"] = f"Bearer {TOKEN}"
            message = Message(
                role=Role.ROLE_USER,
                message_id=str(uuid.uuid4()),
                context_id=context_id,
                task_id=waiting,
                parts=[Part(text=text), *scene.attached],
            )
            notes = ("" if with_token else "   (no token)") + (
                f"   (the same task {waiting[:8]}...)" if waiting else ""
            )
            print(f"   > {text}{notes}")
            for attached in described(scene.attached):
                print(f"     + {attached}")
            task = await sent(client, SendMessageRequest(message=message), scene.streams)
            said = task.status.message.parts[0].text if task.status.message.parts else ""
            shown = " | ".join(said.splitlines())  # a streamed list, on one line
            print(f"     {TaskState.Name(task.status.state)}: {shown}")
            for artifact in task.artifacts:  # the answer's text is said above
                for carried in described(artifact.parts):
                    print(f"     = {carried}")
            asked = task.status.state in WAITS_FOR_THE_CALLER
            waiting = task.id if asked else ""
        await client.close()


async def sent(client: Client, request: SendMessageRequest, streams: bool) -> Task:
    """The task a send ends with. A stream begins with the task as submitted and shows each
    chunk of the answer as it arrives, with the seconds since the send; the finished task
    is then what GetTask finds."""
    began = time.monotonic()
    task = Task()
    async for event in client.send_message(request):
        if event.HasField("task"):
            task = event.task
        elif event.artifact_update.artifact.parts and not event.artifact_update.last_chunk:
            for part in event.artifact_update.artifact.parts:  # the last holds the whole text
                print(f"     [{time.monotonic() - began:4.1f}s] {part.text!r}")
    return await client.get_task(GetTaskRequest(id=task.id)) if streams else task


def show_modes(card: AgentCard) -> None:
    """The card's media types, where they are more than text."""
    taken, given = list(card.default_input_modes), list(card.default_output_modes)
    if taken != TEXT_ONLY or given != TEXT_ONLY:
        print(f"   the card: takes {', '.join(taken)}; answers {', '.join(given)}")


def described(parts: Sequence[Part]) -> Iterator[str]:
    """The data and file parts: each JSON value, each file's name, type and first lines."""
    for data in get_data_parts(parts):
        # The SDK's data is a protobuf Struct, which keeps no key order: sorted, it is stable.
        yield f"data {json.dumps(whole_numbers(data), sort_keys=True)}"
    for part in parts:
        if part.HasField("raw"):
            lines = part.raw.decode(errors="replace").splitlines()
            shown = " | ".join(lines[:3]) + (" | ..." if len(lines) > 3 else "")
            yield f"file {part.filename} ({part.media_type}): {shown}"


def whole_numbers(value: Any) -> Any:
    """`value` with 5.0 back as 5: protobuf's Value, under the SDK's data parts, holds every
    number as a double, whatever the workflow wrote."""
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, dict):
        return {key: whole_numbers(item) for key, item in value.items()}
    if isinstance(value, list):
        return [whole_numbers(item) for item in value]
    return value


@contextmanager
def running_n8n(datadir: str) -> Iterator[str]:
    port = _free_port(pair=True)
    print(f"Starting n8n on 127.0.0.1:{port} with the example workflows (30 to 70 s) ...")
    started = subprocess.run(
        [str(RUN_N8N), "start", datadir, str(port)], check=True, stdout=subprocess.PIPE, text=True
    )
    try:
        yield started.stdout.strip()
    finally:
        subprocess.run([str(RUN_N8N), "stop", datadir], check=False)


@contextmanager
def running_adapter(webhook_url: str, settings: Mapping[str, str]) -> Iterator[str]:
    port = _free_port()
    public_url = f"http://127.0.0.1:{port}/"
    environ = {
        **os.environ,
        "ADAPTER_AGENT_NAME": "Supply agent",
        "ADAPTER_AGENT_DESCRIPTION": "Says whether supplies are in stock.",
        "ADAPTER_SKILL_ID": "check_availability",
        "ADAPTER_SKILL_NAME": "Check availability",
        "ADAPTER_SKILL_DESCRIPTION": "Whether a number of pallets of an item is in stock.",
        "ADAPTER_SKILL_EXAMPLES": "Are there 4 pallets of flour?\nAnd 2 pallets of rice?",
        "ADAPTER_WEBHOOK_URL": webhook_url,
        "ADAPTER_PUBLIC_URL": public_url,
        "ADAPTER_HOST": "127.0.0.1",
        "ADAPTER_PORT": str(port),
        "ADAPTER_LOG_LEVEL": "WARNING",
        "ADAPTER_ALLOW_INPUT_REQUIRED": "false",
        "ADAPTER_INPUT_MODES": "text/plain",
        "ADAPTER_OUTPUT_MODES": "text/plain",
        **settings,
    }
    adapter = subprocess.Popen([sys.executable, "-m", "n8n_a2a"], env=environ)
    try:
        _wait_for(public_url + ".well-known/agent-card.json")
        yield public_url
    finally:
        adapter.send_signal(signal.SIGTERM)
        adapter.wait(timeout=40)


def _free_port(*, pair: bool = False) -> int:
    """A free port on 127.0.0.1 (with `pair`, its successor free too: n8n's task runner)."""
    while True:
        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            port: int = probe.getsockname()[1]
        if not pair:
            return port
        with socket.socket() as successor:
            try:
                successor.bind(("127.0.0.1", port + 1))
                return port
            except (OSError, OverflowError):
                continue


def _wait_for(url: str) -> None:
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        try:
            if httpx.get(url).status_code == 200:
                return
        except httpx.TransportError:
            time.sleep(0.05)
    raise SystemExit(f"the adapter did not come up at {url}")


if __name__ == "__main__":
    main()
