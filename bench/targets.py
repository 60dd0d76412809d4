"""The targets: which server each one runs, starting it on the server core until it is
ready, stopping it, and checking it answers right before anything is timed."""

from __future__ import annotations

import atexit
import compileall
import functools
import os
import shutil
import subprocess
import sysconfig
import tempfile
import time
import venv
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from loads import Load
from procs import free_port, pinned, stop
from settings import BENCH, Settings
from wire import A2A_HEADERS, JSON_HEADERS, fresh, http_get_status, http_post

CARD_PATH = "/.well-known/agent-card.json"


@dataclass(frozen=True)
class Target:
    """One thing to measure: a command that serves A2A, or the webhook itself."""

    name: str
    kind: str  # "direct", "adapter" or "sdk"
    checkout: Path | None = None  # an adapter's source tree, put first on PYTHONPATH
    shared_store: bool = False  # tasks in PostgreSQL (ADAPTER_STORE_URL)

    @property
    def is_server(self) -> bool:
        return self.kind != "direct"


@functools.cache
def image_python() -> str:
    """A Python that starts as the image's does: a venv's, `site` run, no `.pth` to import.

    The image (container/Containerfile) runs a venv made without pip, its packages from
    wheels: its site-packages holds no `.pth` file. The dev venv and the bench venv hold
    the editable install's, which imports `__editable___n8n_a2a_0_1_0_finder` (pathlib,
    importlib.util, urllib.parse...: 15 to 20 ms) at every start, and setuptools'
    `distutils-precedence.pth`: a start measured with them is one the image never makes.
    `python -S` would drop them, and `site` with them, which the image runs. So a bare
    venv of the same interpreter, made once per bench process, whose site-packages holds
    one `.pth` of plain path lines, the running venv's site-packages: `site` appends such
    a line to sys.path and imports nothing, so the packages come after the standard
    library, as installed ones do in the image (the checkout still first, on PYTHONPATH).
    """
    home = Path(tempfile.mkdtemp(prefix="n8n-a2a-bench-python-"))
    atexit.register(shutil.rmtree, home, ignore_errors=True)
    venv.EnvBuilder(symlinks=True).create(home)
    packages = dict.fromkeys((sysconfig.get_path("purelib"), sysconfig.get_path("platlib")))
    bare = sysconfig.get_path("purelib", "venv", {"base": str(home), "platbase": str(home)})
    (Path(bare) / "running-venv.pth").write_text("".join(f"{path}\n" for path in packages))
    return str(home / "bin" / "python")


def server_command(
    target: Target,
    port: int,
    webhook_url: str,
    store_url: str | None = None,
    streaming: bool = False,
) -> tuple[list[str], dict[str, str]]:
    """The command line and environment that serve `target` on `port` (`streaming`: an
    adapter that reads the webhook's reply as n8n's streamed lines). Every server, the SDK's
    too, runs on `image_python()`: its ready figure is the start the image would make."""
    environment = dict(os.environ)
    if target.kind == "sdk":
        command = [
            image_python(),
            str(BENCH / "sdk_server.py"),
            "--webhook-url",
            webhook_url,
            "--port",
            str(port),
        ]
        return command, environment
    assert target.checkout is not None
    environment.update(
        PYTHONPATH=str(target.checkout),
        ADAPTER_AGENT_NAME="Bench agent",
        ADAPTER_AGENT_DESCRIPTION="n8n-a2a in front of the bench webhook.",
        ADAPTER_SKILL_ID="bench",
        ADAPTER_SKILL_NAME="Bench",
        ADAPTER_SKILL_DESCRIPTION="Answers ok.",
        ADAPTER_WEBHOOK_URL=webhook_url,
        ADAPTER_PUBLIC_URL=f"http://127.0.0.1:{port}/",
        ADAPTER_HOST="127.0.0.1",
        ADAPTER_PORT=str(port),
        ADAPTER_LOG_FORMAT="json",
        # wrk's connections are all one anonymous caller: let it hold a stream on each.
        ADAPTER_MAX_STREAMS_PER_CALLER="1024",
        # The file round trip's type, both ways (file_trip.py); the size bounds stay.
        ADAPTER_INPUT_MODES="text/plain,application/octet-stream",
        ADAPTER_OUTPUT_MODES="text/plain,application/octet-stream",
    )
    if store_url is not None:
        environment["ADAPTER_STORE_URL"] = store_url
    if streaming:
        environment["ADAPTER_WEBHOOK_STREAMING"] = "true"
    return [image_python(), "-m", "n8n_a2a"], environment


@functools.cache
def compiled(checkout: Path) -> None:
    """The adapter's bytecode compiled, as pip compiles it at install and the image holds
    it: under PYTHONDONTWRITEBYTECODE (the dev environment's) every start would compile
    its ninety modules anew, and its ready figure would count that. Then, in a checkout
    that has it, the code its dataclasses generate, compiled as the image's build does
    (`python -m n8n_a2a.prebuilt`, n8n_a2a/prebuilt/generated.py)."""
    compileall.compile_dir(checkout / "n8n_a2a", quiet=1)
    if (checkout / "n8n_a2a" / "prebuilt" / "__main__.py").exists():
        subprocess.run(
            [image_python(), "-m", "n8n_a2a.prebuilt"],
            env={**os.environ, "PYTHONPATH": str(checkout)},
            cwd=checkout,
            check=True,
            stdout=subprocess.DEVNULL,
        )


@contextmanager
def serving(
    target: Target,
    settings: Settings,
    webhook_url: str,
    logs: Path,
    store_url: str | None = None,
    streaming: bool = False,
) -> Iterator[tuple[subprocess.Popen[bytes], int, float]]:
    """Start the target's server on the server core; yield it, its port and ms to a card
    (with a shared store: to ready, the store connected)."""
    if target.checkout is not None:
        compiled(target.checkout)
    port = free_port()
    command, environment = server_command(target, port, webhook_url, store_url, streaming)
    ready_path = "/readyz" if store_url is not None else CARD_PATH
    log = (logs / f"{target.name}-{port}.log").open("wb")
    began = time.perf_counter()
    process = subprocess.Popen(
        pinned(settings.server_core, command),
        env=environment,
        stdout=log,
        stderr=subprocess.STDOUT,
        cwd=logs,
    )
    try:
        deadline = began + 30
        while http_get_status(port, ready_path) != 200:
            if process.poll() is not None or time.perf_counter() > deadline:
                raise RuntimeError(f"{target.name} did not serve its card; see {log.name}")
            time.sleep(0.002)
        yield process, port, (time.perf_counter() - began) * 1000
    finally:
        stop(process)
        log.close()


@contextmanager
def fresh_adapter(
    name: str, checkout: Path, webhook_url: str, **variables: str
) -> Iterator[tuple[int, int]]:
    """The adapter of `checkout`, fresh, on the server core, its output unread, with
    `variables` beside targets.py's (ADAPTER_LOG_LEVEL=WARNING): its pid and port. For
    the scripts that measure one process (its CPU, its RSS) outside bench/run."""
    port = free_port()
    command, environment = server_command(Target(name, "adapter", checkout), port, webhook_url)
    environment.update(ADAPTER_LOG_LEVEL="WARNING", **variables)
    process = subprocess.Popen(
        pinned("0", command),
        env=environment,
        cwd=checkout,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        while http_get_status(port, CARD_PATH) != 200:
            time.sleep(0.01)
        yield process.pid, port
    finally:
        stop(process)


def check_answer(load: Load, body: bytes) -> None:
    """One request first: a target that answers wrongly would only be measured fast."""
    headers = A2A_HEADERS if load.a2a else JSON_HEADERS
    _, reply = http_post(load.port, load.path, fresh(body), headers)
    if load.expect.encode() not in reply or b'"ok"' not in reply:
        raise RuntimeError(f"unexpected answer on {load.url}: {reply[:300]!r}")


def streams(load: Load, say: Callable[[str], None]) -> bool:
    """Whether the target answers a streaming send with a stream that ends in the answer.

    A JSON-RPC error instead (an n8n-a2a from before streaming), or no answer in time,
    leaves its stream columns empty; any other wrong answer stops the bench, as on a
    blocking send."""
    assert load.stream_body_file is not None
    body = fresh(load.stream_body_file.read_bytes())
    try:
        fields, reply = http_post(load.port, load.path, body, A2A_HEADERS)
    except TimeoutError:
        # Still busy with the slow sends: this run has no stream figures (the median
        # takes the others), rather than no figures at all.
        say("      no stream measured: the streaming send took over 10 s to answer")
        return False
    if fields.get(b"content-type", b"").startswith(b"text/event-stream"):
        if load.expect.encode() in reply and b'"ok"' in reply:
            return True
    elif fields.get(b"content-type", b"").startswith(b"application/json") and b'"error"' in reply:
        say(f"      does not stream: {reply[:200].decode(errors='replace')}")
        return False
    raise RuntimeError(f"unexpected stream on {load.url}: {reply[:300]!r}")


def serves_rest(load: Load, say: Callable[[str], None]) -> bool:
    """Whether the target answers a blocking send over HTTP+JSON (`load`'s path and body)
    with the completed task.

    An answer without a task (a server without the binding, such as an n8n-a2a from before
    it under --adapter) leaves its REST columns empty; any other wrong answer stops the
    bench, as on JSON-RPC."""
    _, reply = http_post(load.port, load.path, load.body_file.read_bytes(), A2A_HEADERS)
    if load.expect.encode() in reply and b'"ok"' in reply:
        return True
    if b'"task"' not in reply:
        say(f"      does not serve HTTP+JSON: {reply[:200].decode(errors='replace')}")
        return False
    raise RuntimeError(f"unexpected answer on {load.url}: {reply[:300]!r}")
