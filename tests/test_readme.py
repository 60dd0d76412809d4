"""The README's and the docs' commands and code, run as a reader would paste them.

Every `sh` or `python` block in README.md and in docs/*.md carries a mark on the line
before it: `<!-- test: NAME -->` for a block run here under that name, or
`<!-- test: none, REASON -->` for one that cannot run on this machine (REASON says why).
The README's tour runs as written but for what this machine stands in for: its clone,
venv, `pip install -e .` and n8n are this checkout, this venv and the stub webhook (served
on a free port, not 8080). Its `curl` call runs against that adapter, and gets the
reply the README shows; the client example is saved as a file and run with the
command the README gives, with the environment it reads. Every relative link of those
pages leads to a file, and to a heading there, that exist.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
import sys
from collections import Counter
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from importlib.metadata import version
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import trio

from tests.support.adapter import free_port, wait_until_serving
from tests.support.stub_webhook import StubWebhook

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
DOCS = ROOT / "docs"
RUNNABLE = {"sh", "bash", "shell", "console", "python", "py"}
# Marks of blocks run here, each on exactly one page; and of a block shown as output,
# compared with what the run really prints.
TESTED = {"serve", "curl", "client-install", "client", "client-run"}
SHOWN = {"curl-reply"}
MARK = re.compile(r"<!-- test: (.*?) -->")
FENCE = re.compile(r"^```(\S*)\s*$")
HEADING = re.compile(r"^#{1,6} +(.+?) *#*$")
LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)")
BIN = Path(sys.executable).parent


def pages() -> list[Path]:
    """The README first, then every docs page."""
    return [README, *sorted(DOCS.glob("*.md"))]


def where(page: Path, line: int) -> str:
    return f"{page.relative_to(ROOT)}:{line}"


@dataclass(frozen=True)
class Block:
    page: Path
    language: str
    code: str
    mark: str | None  # what the `<!-- test: ... -->` line right before the block says
    line: int

    @property
    def where(self) -> str:
        return where(self.page, self.line)


def page_blocks(page: Path) -> list[Block]:
    lines = page.read_text().splitlines()
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
        found.append(Block(page, fence[1], code, mark[1] if mark else None, number + 1))
        number = end + 1
    return found


def all_blocks() -> list[Block]:
    return [each for page in pages() for each in page_blocks(page)]


def block(name: str) -> str:
    [code] = [b.code for b in all_blocks() if b.mark == name]
    return code


def test_every_block_a_reader_would_run_is_tested_or_says_why_not() -> None:
    assert DOCS.is_dir() and len(pages()) > 1, "no docs/*.md found next to the README"
    runnable = [b for b in all_blocks() if b.language in RUNNABLE]
    assert any(b.page == README for b in runnable), (
        "no sh or python block found in the README: is its fence style still ```sh?"
    )
    unmarked = [b.where for b in runnable if b.mark is None]
    assert not unmarked, f"blocks without a <!-- test: ... --> mark: {unmarked}"
    for each in runnable:
        assert each.mark in TESTED or re.fullmatch(r"none, \w.{10,}", each.mark or ""), (
            f"{each.where}: the mark names no test here and gives no reason"
        )
    named = Counter(b.mark for b in all_blocks() if b.mark in TESTED | SHOWN)
    assert named == Counter(TESTED | SHOWN), f"each named block once in all pages: {named}"


# -- links ------------------------------------------------------------------------------


def prose(page: Path) -> str:
    """The page without its fenced blocks and code spans, every line where it was."""
    lines, fenced = [], False
    for line in page.read_text().splitlines():
        if FENCE.match(line) or (fenced and line == "```"):
            fenced = not fenced
            lines.append("")
        else:
            lines.append("" if fenced else line)
    text = "\n".join(lines)
    return re.sub(r"`[^`]*`", lambda span: re.sub(r"[^\n]", " ", span[0]), text)


def anchors(page: Path) -> set[str]:
    """The anchors GitHub makes of the page's headings: `#a-60-second-tour`."""
    seen: Counter[str] = Counter()
    found = set()
    for line in prose(page).splitlines():
        heading = HEADING.match(line)
        if heading is None:
            continue
        text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", heading[1]).lower()
        slug = re.sub(r"[^\w\- ]", "", text).replace(" ", "-")
        found.add(f"{slug}-{seen[slug]}" if seen[slug] else slug)
        seen[slug] += 1
    return found


def test_every_relative_link_leads_to_a_file_and_heading_that_exist() -> None:
    broken = []
    for page in pages():
        text = prose(page)
        for link in LINK.finditer(text):
            target = link[1]
            if re.match(r"[a-z][a-z0-9+.-]*:", target):  # https:, mailto:: not ours to check
                continue
            path, _, anchor = target.partition("#")
            file = (page.parent / path).resolve() if path else page
            line = where(page, text.count("\n", 0, link.start()) + 1)
            if not file.exists():
                broken.append(f"{line}: {target}: no such file")
            elif anchor and (file.suffix != ".md" or anchor not in anchors(file)):
                broken.append(f"{line}: {target}: no such heading in {file.name}")
    assert not broken, "\n".join(broken)


def test_the_readme_leads_to_every_docs_page_and_each_leads_back() -> None:
    readme = prose(README)
    for page in pages()[1:]:
        assert f"](docs/{page.name})" in readme, f"the README does not link {page.name}"
        # The title, then one sentence on what the page is for, linking back.
        title, first = page.read_text().split("\n\n")[:2]
        assert title.startswith("# ") and "](../README.md" in first, (
            f"{page.name}: no title and first paragraph that links back to the README"
        )


# -- the README's tour -----------------------------------------------------------------


@dataclass(frozen=True)
class ServeBlock:
    """Terminal 1: the clone, venv, install, n8n, export the settings, check, serve."""

    words: list[list[str]]
    exports: str

    @classmethod
    def from_readme(cls) -> ServeBlock:
        commands = re.sub(r"\\\n", " ", block("serve")).splitlines()
        words = [shlex.split(command, comments=True) for command in commands]
        assert [w[:2] for w in words] == [
            ["cd", "n8n-a2a"],
            ["python3", "-m"],
            [".", ".venv/bin/activate"],
            ["pip", "install"],
            ["n8n/run", "install"],
            ["n8n/run", "start"],
            ["export", words[6][1]],
            ["n8n-a2a", "--check"],
            ["n8n-a2a"],
        ], "the README's serve block changed its shape; update this test with it"
        assert words[1:4] == [
            ["python3", "-m", "venv", ".venv"],
            [".", ".venv/bin/activate"],
            ["pip", "install", "-e", "."],
        ]
        return cls(words, commands[6])

    @property
    def variables(self) -> dict[str, str]:
        return dict(word.split("=", 1) for word in shlex.split(self.exports)[1:])


def reader_environment() -> dict[str, str]:
    """A shell with the package installed: this venv's bin first, no ADAPTER_* of ours."""
    kept = {k: v for k, v in os.environ.items() if not k.startswith("ADAPTER_")}
    return {**kept, "PATH": f"{BIN}:{os.environ['PATH']}"}


def test_the_serve_block_checks_the_environment_it_exports() -> None:
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
    # and the curl call and the client example dial it when told nothing else.
    public_url = serve.variables["ADAPTER_PUBLIC_URL"]
    assert card["url"] == public_url == "http://127.0.0.1:8080/"
    assert f"curl -s {public_url} " in block("curl")
    assert f'os.environ.get("AGENT_URL", "{public_url}")' in block("client")


def test_the_serve_block_starts_the_n8n_its_webhook_names() -> None:
    serve = ServeBlock.from_readme()
    start = serve.words[5]
    webhook = urlsplit(serve.variables["ADAPTER_WEBHOOK_URL"])
    assert webhook.hostname == "127.0.0.1" and str(webhook.port) == start[3]
    path = webhook.path.removeprefix("/webhook/")
    published = [
        workflow.name
        for workflow in (ROOT / "n8n" / "workflows").glob("*.json")
        if not workflow.name.startswith("inactive") and f'"path": "{path}"' in workflow.read_text()
    ]
    assert published == ["supply_agent.json"]
    assert f"`n8n/run stop {start[2]}`" in README.read_text()


@asynccontextmanager
async def the_tours_adapter(stub: StubWebhook) -> AsyncIterator[str]:
    """The serve block as written, then what differs here: the stub, a free port."""
    serve = ServeBlock.from_readme()
    port = free_port()
    url = f"http://127.0.0.1:{port}/"
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
        yield url
    finally:
        adapter.terminate()
        with trio.fail_after(20):
            await adapter.wait()


def terminal_2(name: str) -> str:
    """A block of terminal 2, without its first line: into the checkout and its venv."""
    first, rest = block(name).split("\n", 1)
    assert shlex.split(first, comments=True) == ["cd", "n8n-a2a", "&&", ".", ".venv/bin/activate"]
    return rest


def same_shape(shown: Any, real: Any, at: str = "reply") -> list[str]:
    """Where the reply shown differs from the real one; a list shown empty was trimmed."""
    if isinstance(shown, dict) and isinstance(real, dict):
        if shown.keys() != real.keys():
            return [f"{at}: keys {sorted(shown)} shown, {sorted(real)} real"]
        return [d for key in shown for d in same_shape(shown[key], real[key], f"{at}.{key}")]
    if isinstance(shown, list) and isinstance(real, list):
        if not shown:
            return []
        if len(shown) != len(real):
            return [f"{at}: {len(shown)} items shown, {len(real)} real"]
        return [
            d
            for i, (s, r) in enumerate(zip(shown, real, strict=True))
            for d in same_shape(s, r, f"{at}[{i}]")
        ]
    if type(shown) is not type(real):
        return [f"{at}: {type(shown).__name__} shown, {type(real).__name__} real"]
    return []


async def test_the_curl_call_gets_the_reply_the_readme_shows(stub: StubWebhook) -> None:
    command = terminal_2("curl")
    async with the_tours_adapter(stub) as url:
        assert "http://127.0.0.1:8080/" in command
        with trio.fail_after(60):
            done = await trio.run_process(
                ["bash", "-euo", "pipefail", "-c", command.replace("http://127.0.0.1:8080/", url)],
                env=reader_environment(),
                capture_stdout=True,
                capture_stderr=True,
                check=False,
            )
    assert done.returncode == 0, done.stderr.decode()
    real = json.loads(done.stdout)
    # The stub answers with the message's own text.
    task = real["result"]["task"]
    assert task["status"]["message"]["parts"] == [{"text": "Are there 4 pallets of flour?"}]
    shown = json.loads(block("curl-reply").replace("[...]", "[]"))
    assert same_shape(shown, real) == []
    for path in (
        ["jsonrpc"],
        ["id"],
        ["result", "task", "status", "state"],
        ["result", "task", "metadata", "outcome"],
    ):
        assert get(shown, path) == get(real, path), path


def get(document: Any, path: list[str]) -> Any:
    for key in path:
        document = document[key]
    return document


def test_the_client_install_is_the_client_tested_here() -> None:
    [words] = [shlex.split(line, comments=True) for line in block("client-install").splitlines()]
    assert words[:2] == ["pip", "install"]
    [pin] = words[2:]
    assert pin == f"a2a-sdk=={version('a2a-sdk')}"
    assert f'"{pin}"' in (ROOT / "pyproject.toml").read_text()


async def test_the_client_example_prints_the_state_and_the_message(
    stub: StubWebhook, tmp_path: Path
) -> None:
    async with the_tours_adapter(stub) as url:
        (tmp_path / "client.py").write_text(block("client"))
        environ = {**reader_environment(), "AGENT_URL": url, "AGENT_TOKEN": "t0ken-from-env"}
        with trio.fail_after(60):
            done = await trio.run_process(
                ["bash", "-euc", block("client-run")],
                cwd=tmp_path,
                env=environ,
                capture_stdout=True,
                capture_stderr=True,
                check=False,
            )
    assert done.returncode == 0, done.stderr.decode()
    # The stub answers with the message's own text.
    assert done.stdout.decode() == "TASK_STATE_COMPLETED Are there 4 pallets of flour?\n"
    [received] = stub.received
    assert received.headers["x-subject-token"] == "t0ken-from-env"
