"""The README's commands and code, run as a reader would paste them.

Every `sh` or `python` block in README.md carries a mark on the line before it:
`<!-- test: NAME -->` for a block run here under that name, or `<!-- test: none, REASON -->`
for one that cannot run on this machine (REASON says why). The "Running it" block runs as
written but for its `pip install .` (this venv has the package), then serves in front of
the stub webhook (on a free port, not 8080); the client example is saved as a file and
run against it with the environment it reads.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import trio

from tests.conftest import free_port
from tests.integration.test_lifecycle import wait_until_serving
from tests.stub_webhook import StubWebhook

README = Path(__file__).resolve().parents[1] / "README.md"
RUNNABLE = {"sh", "bash", "shell", "console", "python", "py"}
TESTED = {"serve", "client"}
MARK = re.compile(r"<!-- test: (.*?) -->")
FENCE = re.compile(r"^```(\S*)\s*$")
BIN = Path(sys.executable).parent


@dataclass(frozen=True)
class Block:
    language: str
    code: str
    mark: str | None  # what the `<!-- test: ... -->` line right before the block says
    line: int


def readme_blocks() -> list[Block]:
    lines = README.read_text().splitlines()
    found: list[Block] = []
    number = 0
    while number < len(lines):
        fence = FENCE.match(lines[number])
        if fence is None:
            number += 1
            continue
        end = lines.index("```", number + 1)
        before = next((line for line in reversed(lines[:number]) if line.strip()), "")
        mark = MARK.fullmatch(before.strip())
        code = "\n".join(lines[number + 1 : end]) + "\n"
        found.append(Block(fence[1], code, mark[1] if mark else None, number + 1))
        number = end + 1
    return found


def block(name: str) -> str:
    [code] = [b.code for b in readme_blocks() if b.mark == name]
    return code


def test_every_block_a_reader_would_run_is_tested_or_says_why_not() -> None:
    runnable = [b for b in readme_blocks() if b.language in RUNNABLE]
    assert runnable, "no sh or python block found: is the README's fence style still ```sh?"
    unmarked = [f"README.md:{b.line}" for b in runnable if b.mark is None]
    assert not unmarked, f"blocks without a <!-- test: ... --> mark: {unmarked}"
    for each in runnable:
        assert each.mark in TESTED or re.fullmatch(r"none, \w.{10,}", each.mark or ""), (
            f"README.md:{each.line}: the mark names no test here and gives no reason"
        )
    assert sorted(b.mark for b in runnable if b.mark in TESTED) == sorted(TESTED)


@dataclass(frozen=True)
class ServeBlock:
    """The "Running it" block: install, export the settings, check them, serve."""

    exports: str

    @classmethod
    def from_readme(cls) -> ServeBlock:
        commands = re.sub(r"\\\n", " ", block("serve")).splitlines()
        words = [shlex.split(command, comments=True) for command in commands]
        assert [w[:2] for w in words] == [
            ["pip", "install"],
            ["export", words[1][1]],
            ["n8n-a2a", "--check"],
            ["n8n-a2a"],
        ], "the README's serve block changed its shape; update this test with it"
        return cls(commands[1])

    @property
    def variables(self) -> dict[str, str]:
        return dict(word.split("=", 1) for word in shlex.split(self.exports)[1:])


def reader_environment() -> dict[str, str]:
    """A shell with the package installed: this venv's bin first, no ADAPTER_* of ours."""
    kept = {k: v for k, v in os.environ.items() if not k.startswith("ADAPTER_")}
    return {**kept, "PATH": f"{BIN}:{os.environ['PATH']}"}


def test_the_running_it_block_checks_the_environment_it_exports() -> None:
    serve = ServeBlock.from_readme()
    done = subprocess.run(
        ["bash", "-euc", f"{serve.exports}\nn8n-a2a --check"],
        env=reader_environment(),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    card = json.loads(done.stdout)
    # Clients follow the card's URL: the one the block sets must be dialable locally,
    # and the client example dials it when told nothing else.
    public_url = serve.variables["ADAPTER_PUBLIC_URL"]
    assert card["url"] == public_url == "http://127.0.0.1:8080/"
    assert f'os.environ.get("AGENT_URL", "{public_url}")' in block("client")


async def test_the_client_example_prints_the_state_and_the_message(
    stub: StubWebhook, tmp_path: Path
) -> None:
    serve = ServeBlock.from_readme()
    port = free_port()
    url = f"http://127.0.0.1:{port}/"
    # The block as written, then what differs here: the stub for n8n, a free port for 8080.
    script = (
        f"{serve.exports}\n"
        f"export ADAPTER_WEBHOOK_URL={stub.url} ADAPTER_PORT={port} ADAPTER_PUBLIC_URL={url}\n"
        "exec n8n-a2a\n"
    )
    adapter = await trio.lowlevel.open_process(
        ["bash", "-euc", script], env=reader_environment(), stderr=subprocess.DEVNULL
    )
    try:
        await wait_until_serving(url)
        client = tmp_path / "client.py"
        client.write_text(block("client"))
        environ = {**reader_environment(), "AGENT_URL": url, "AGENT_TOKEN": "t0ken-from-env"}
        with trio.fail_after(60):
            done = await trio.run_process(
                [sys.executable, str(client)],
                env=environ,
                capture_stdout=True,
                capture_stderr=True,
                check=False,
            )
    finally:
        adapter.terminate()
        with trio.fail_after(20):
            await adapter.wait()
    assert done.returncode == 0, done.stderr.decode()
    # The stub answers with the message's own text.
    assert done.stdout.decode() == "TASK_STATE_COMPLETED Are there 4 pallets of flour?\n"
    [received] = stub.received
    assert received.headers["x-subject-token"] == "t0ken-from-env"
