"""Instructions per request: what a send costs n8n-a2a, counted by valgrind, not timed.

On a shared machine the CPU seconds of one run and the next differ by 20% and more; the
instructions a process executes for the same requests do not. Each adapter (this checkout,
and any `--adapter name=path`) runs under callgrind with its instrumentation off while it
starts and warms up; then, per load, instrumentation goes on for the sends alone and the
counters are dumped after: instructions per unit (and, with --cache-sim, the simulated
last-level cache misses). Against bench/stub_webhook.py (its own process, not counted),
its plain JSON reply, each at concurrency 1 and 64:

- blocking SendMessage over JSON-RPC and the same send over HTTP+JSON: per send, each
  against GOAL_M, at most 3.0 million a send (PASS or FAIL on the targets line);
- a streaming SendStreamingMessage over JSON-RPC, its Server-Sent Events read to the
  stream's end (the task's terminal update): per streaming send;
- a file's round trip (file_trip.py): a blocking JSON-RPC send carrying a file of 5 MiB,
  which the stub answers back as its reply file, at concurrency 1: per round trip;
- a push delivery: blocking JSON-RPC sends each carrying a push config inline
  (`taskPushNotificationConfig`, its URL a second stub on 127.0.0.1, which
  ADAPTER_PUSH_ALLOW_HOSTS lets through, answering each POST 200 at once and counting
  them), counted until the receiver has every POST and the adapter has gone idle; less
  as many plain sends at the blocking load's count a send at the same concurrency; over
  the POSTs the receiver got. A POST's figure so carries its share of the config's
  registration (read, its URL judged and looked up, held), which only pushes need.
  The adapter's default bounds stay: at c=64, at most 4 POSTs at once to 127.0.0.1.

With a second adapter, a row of ratios (this checkout over it) for every load; the
streaming send and the push delivery are judged by that ratio, against the blocking
send's cut from 8c92316 to its goal then (at most 0.58 of the other adapter's count, for
an `--adapter before=` of 8c92316). With `--sdk`, the a2a-sdk 1.3.0 server of
bench/sdk_server.py is counted too, with the loads it serves (no push: its card has
none), and a row of ratios over it: the file's round trip is judged by that one, at most
half the SDK server's count. Python's hash seed is fixed: dict layouts do not move the
count.

Needs valgrind (Debian: apt-get install valgrind). Some 8 minutes per adapter at the
default --sends: callgrind runs the adapter about 50 times slower. Runs in the dev venv,
or with --sdk in bench/run's (which has the SDK server's uvicorn):
    .venv/bin/python bench/probes/instructions.py --adapter before=/tmp/old-checkout
    ~/.cache/n8n-a2a/bench-venv/bin/python bench/probes/instructions.py --sdk
"""

from __future__ import annotations

import argparse
import importlib.util
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, replace
from pathlib import Path

import _tool  # noqa: F401  (bench/ on sys.path: the tool's modules)
import httpx
import trio
from file_trip import FILE_BYTES, payload, send_body
from procs import free_port, pinned, settle, stop
from settings import BENCH, CHECKOUT
from targets import CARD_PATH, Target, server_command
from wire import (
    A2A_HEADERS,
    REST_SEND_PATH,
    fresh,
    http_get_status,
    rest_send_body,
    send_message_body,
)

SERVER_CORE, CLIENT_CORE = "0", "1"
#: The goal: at most this many million instructions a blocking send, at every load.
GOAL_M = 3.0
#: The goal for a file's round trip: at most this share of the SDK server's count.
FILE_GOAL = 0.5
#: The goal for the others, as a ratio to the adapter before the cut: the blocking send's
#: own, 4.5 M of 7.8 M at 8c92316.
RATIO_GOAL = 0.58
#: Under valgrind an import takes a while: the card may be minutes away.
READY_S = 300.0
#: Under valgrind, how long a load's pushes may take to arrive once its sends are answered.
DELIVERED_S = 600.0


#: The a2a-sdk 1.3.0 server (bench/sdk_server.py), with --sdk.
SDK = Target("sdk", "sdk")


class NotServed(Exception):
    """The adapter has no such route (an older one, before the HTTP+JSON binding)."""


@dataclass(frozen=True)
class Load:
    """Sends of one kind: where they go, their body, how many and how many at once."""

    name: str
    path: str
    body: bytes
    sends: int
    concurrency: int
    #: A streaming send: every answer must be a stream (Server-Sent Events).
    streamed: bool = False
    #: A push load: the blocking load whose count a send is taken off this one's, leaving
    #: its POSTs' (counted by the receiver).
    minus: str = ""
    #: A file's round trip: every answer must carry the file back.
    file: bool = False

    @property
    def blocking(self) -> bool:
        """A blocking send's count, judged against GOAL_M (the others by ratio)."""
        return not self.streamed and not self.minus and not self.file

    def warm_up(self) -> Load:
        """The same sends, twice as many as at once: connections opened, paths seen once."""
        return replace(self, sends=self.concurrency * 2)


def loads(sends: int, push_url: str) -> list[Load]:
    jsonrpc, rest = send_message_body("ok"), rest_send_body("ok")
    stream = send_message_body("ok", "SendStreamingMessage")
    pushed = send_message_body("ok", push_url=push_url)
    few = max(sends // 8, 8)
    return [
        Load("jsonrpc c=1", "/", jsonrpc, few, 1),
        Load("jsonrpc c=64", "/", jsonrpc, sends, 64),
        Load("http+json c=1", REST_SEND_PATH, rest, few, 1),
        Load("http+json c=64", REST_SEND_PATH, rest, sends, 64),
        Load("stream c=1", "/", stream, few, 1, streamed=True),
        Load("stream c=64", "/", stream, sends, 64, streamed=True),
        Load("push c=1", "/", pushed, few, 1, minus="jsonrpc c=1"),
        Load("push c=64", "/", pushed, sends, 64, minus="jsonrpc c=64"),
        Load(FILE_LOAD, "/", send_body(payload()), max(sends // 40, 4), 1, file=True),
    ]


#: The file's round trip, judged against the SDK server's count.
FILE_LOAD = "file 5 MiB c=1"


async def _send_all(port: int, load: Load) -> None:
    """`load.sends` sends, `load.concurrency` connections each sending in turn; every answer
    must be a completed task, a stream's read to its end (NotServed for a route the adapter
    does not have)."""
    left = load.sends
    limits = httpx.Limits(max_connections=load.concurrency)
    async with httpx.AsyncClient(timeout=300, limits=limits) as client:

        async def sender() -> None:
            nonlocal left
            while left > 0:
                left -= 1
                reply = await client.post(
                    f"http://127.0.0.1:{port}{load.path}",
                    content=fresh(load.body),
                    headers=A2A_HEADERS,
                )
                if reply.status_code == 404:
                    raise NotServed(load.name)
                stream = reply.headers.get("content-type", "").startswith("text/event-stream")
                if (
                    reply.status_code != 200
                    or stream != load.streamed
                    or "TASK_STATE_COMPLETED" not in reply.text
                    or (load.file and len(reply.content) < FILE_BYTES)
                ):
                    raise RuntimeError(f"{load.name}: {reply.status_code} {reply.text[:300]}")

        async with trio.open_nursery() as nursery:
            for _ in range(load.concurrency):
                nursery.start_soon(sender)


class Stub:
    """bench/stub_webhook.py in its own process, on the clients' core, answering every POST
    at once: the webhook, or the push receiver (asked with a GET how many it answered)."""

    def __init__(self) -> None:
        self._process = subprocess.Popen(
            pinned(CLIENT_CORE, [sys.executable, str(BENCH / "stub_webhook.py")]),
            stdout=subprocess.PIPE,
            text=True,
        )
        assert self._process.stdout is not None
        self.port = int(self._process.stdout.readline())

    def url(self, path: str) -> str:
        return f"http://127.0.0.1:{self.port}{path}"

    def posts(self) -> int:
        count: int = httpx.get(self.url("/posts")).json()["posts"]
        return count

    def quiet(self, pid: int, since: int, expected: int) -> int:
        """The POSTs got since `since`, once `expected` have come (0: any) and the adapter
        `pid` has gone idle with no more coming: every delivery answered and done with."""
        deadline = time.perf_counter() + DELIVERED_S
        got = -1
        while time.perf_counter() < deadline:
            settle(pid, bound_s=30.0)
            got, before = self.posts() - since, got
            if got == before and got >= expected:
                return got
        raise RuntimeError(f"{got} of {expected} pushes arrived in {DELIVERED_S:g} s")

    def __enter__(self) -> Stub:
        return self

    def __exit__(self, *_: object) -> None:
        self._process.terminate()
        self._process.wait(timeout=10)


def _warmed(port: int, warm: Load) -> bool:
    """Send the warm-up (connections opened, code paths seen once); False if the adapter
    has no such route."""
    served = True
    try:
        trio.run(_send_all, port, warm)
    except* NotServed:
        served = False
    return served


def callgrind_control(pid: int, *options: str) -> None:
    subprocess.run(["callgrind_control", *options, str(pid)], check=True, capture_output=True)


def dump_counts(dump: Path) -> list[int]:
    """The totals of a callgrind dump: instructions first, then the cache events if simulated."""
    for line in dump.read_text().splitlines():
        if line.startswith("totals:"):  # what this dump counted (its summary: line does not)
            return [int(n) for n in line.split()[1:]]
    raise RuntimeError(f"no totals in {dump}")


@dataclass
class Counted:
    """An adapter under callgrind: its process, its port, and the dumps read so far."""

    process: subprocess.Popen[bytes]
    port: int
    workdir: Path
    dumped: set[Path]

    def count(
        self, load: Load, receiver: Stub | None = None, pushes: int = 0
    ) -> tuple[list[int], int]:
        """The counters over `load`'s sends alone, and with a `receiver`, till it has got
        their `pushes` POSTs each and the adapter is idle again: those counters and POSTs."""
        since = receiver.posts() if receiver is not None else 0
        callgrind_control(self.process.pid, "--instr=on")
        trio.run(_send_all, self.port, load)
        posts = 0
        if receiver is not None:
            posts = receiver.quiet(self.process.pid, since, load.sends * pushes)
        callgrind_control(self.process.pid, "--instr=off")
        callgrind_control(self.process.pid, "--dump=" + load.name)
        [dump] = set(self.workdir.glob("callgrind.out.*")) - self.dumped
        self.dumped.add(dump)
        return dump_counts(dump), posts


@contextmanager
def under_callgrind(target: Target, webhook_url: str, cache_sim: bool) -> Iterator[Counted]:
    """The adapter of `target` under callgrind, its instrumentation off, until it is ready;
    push allowed to 127.0.0.1, the receiver's address."""
    port = free_port()
    command, environment = server_command(target, port, webhook_url)
    environment.update(PYTHONHASHSEED="0", ADAPTER_PUSH_ALLOW_HOSTS="127.0.0.1")
    workdir = Path(tempfile.mkdtemp(prefix="bench-callgrind-"))
    valgrind = ["valgrind", "--tool=callgrind", "--instr-atstart=no"]
    valgrind += [f"--cache-sim={'yes' if cache_sim else 'no'}"]
    valgrind += [f"--callgrind-out-file={workdir}/callgrind.out"]
    log = (workdir / "adapter.log").open("wb")
    process = subprocess.Popen(
        pinned(SERVER_CORE, [*valgrind, *command]),
        env=environment,
        stdout=log,
        stderr=subprocess.STDOUT,
        cwd=workdir,
    )
    try:
        deadline = time.perf_counter() + READY_S
        ready = "/healthz" if target.kind == "adapter" else CARD_PATH
        while http_get_status(port, ready) != 200:
            if process.poll() is not None or time.perf_counter() > deadline:
                raise RuntimeError(f"{target.name} did not start; see {workdir}/adapter.log")
            time.sleep(0.5)
        yield Counted(process, port, workdir, set())
    finally:
        stop(process, grace_s=60.0)  # a drain under valgrind is slow
        log.close()
        shutil.rmtree(workdir, ignore_errors=True)


def _figure(per_unit: list[float], cache_sim: bool) -> str:
    figure = f"{per_unit[0] / 1e6:.3f}"
    if cache_sim:  # Ir Dr Dw I1mr D1mr D1mw ILmr DLmr DLmw: the last three
        figure += f" ({sum(per_unit[6:9]):,.0f} LL misses)"
    return figure


def measure(
    target: Target, webhook_url: str, sends: int, cache_sim: bool, receiver: Stub
) -> dict[str, str]:
    """Instructions per unit (millions; and LL misses with the cache simulated) for each
    load, on one adapter under callgrind: a send, or a push load's delivered POST."""
    figures: dict[str, str] = {}
    per_send: dict[str, list[float]] = {}  # each blocking load's counters a send
    with under_callgrind(target, webhook_url, cache_sim) as adapter:
        for load in loads(sends, receiver.url("/push")):
            since = receiver.posts()
            pushes = bool(load.minus) and target.kind == "sdk"  # its card has none
            if (
                pushes
                or not _warmed(adapter.port, load.warm_up())
                or load.minus not in {"", *per_send}
            ):
                figures[load.name] = "-"
                continue
            if load.minus:
                per_unit, unit = _per_post(adapter, load, receiver, since, per_send[load.minus])
            else:
                counts, _ = adapter.count(load)
                per_unit, unit = [n / load.sends for n in counts], "send"
                per_send[load.name] = per_unit
            figures[load.name] = _figure(per_unit, cache_sim)
            print(f"  {target.name} {load.name}: {figures[load.name]} M instructions/{unit}")
    return figures


def _per_post(
    adapter: Counted, load: Load, receiver: Stub, since: int, per_send: list[float]
) -> tuple[list[float], str]:
    """A push load's counters a delivered POST: its sends' less as many blocking sends at
    `per_send`, over the POSTs; how many POSTs a task makes is the warm-up's, all of which
    are delivered first (since `since`)."""
    warmed, warm_sends = receiver.quiet(adapter.process.pid, since, 0), load.warm_up().sends
    pushes = warmed // warm_sends
    if pushes == 0 or warmed % warm_sends:
        raise RuntimeError(f"{load.name}: {warmed} POSTs for {warm_sends} sends")
    counts, posts = adapter.count(load, receiver, pushes)
    own = [count - sent * load.sends for count, sent in zip(counts, per_send, strict=True)]
    return [n / posts for n in own], f"POST ({posts} POSTs, {pushes} a task)"


def verdict(name: str, figures: dict[str, str], goal: float = GOAL_M, unit: str = " M") -> str:
    """One adapter's targets line: each load's figure against `goal` (GOAL_M; a ratio's
    RATIO_GOAL), PASS or FAIL (`-`: a load the adapter does not serve)."""
    checks = []
    for load, figure in figures.items():
        if figure == "-":
            checks.append(f"{load} -")
            continue
        value = float(figure.split()[0])  # past it, with --cache-sim, the LL misses
        checks.append(f"{load} <= {goal:g}{unit} {'PASS' if value <= goal else 'FAIL'}")
    return f"{name} targets: {', '.join(checks)}"


def ratios(after: dict[str, str], before: dict[str, str]) -> dict[str, str]:
    """Each load's figure after over before, `-` where either has none."""
    return {
        load: "-"
        if "-" in (figure, before[load])
        else f"{float(figure.split()[0]) / float(before[load].split()[0]):.3f}"
        for load, figure in after.items()
    }


def report(rows: dict[str, dict[str, str]], names: list[str], blocking: set[str]) -> None:
    """The table: a row per adapter (and the SDK server), a row of ratios of the first
    over each other one, the goals; then the targets lines: an adapter's blocking loads by
    GOAL_M, the others by the ratio over another adapter, the file's round trip by the
    ratio over the SDK server (FILE_GOAL)."""
    first, *others = rows
    ratio_rows = {f"{first}/{other}": ratios(rows[first], rows[other]) for other in others}
    goals = {n: f"<= {GOAL_M:g}" if n in blocking else f"<= {RATIO_GOAL:g}x" for n in names}
    goals[FILE_LOAD] = f"<= {FILE_GOAL:g}x sdk"
    lines = {**rows, **ratio_rows, "goal": goals}
    width = max(len(name) for name in lines)
    column = max(len(name) for name in names) + 2
    print("\nmillions of instructions a blocking send, a streaming send read to its end, and a")
    print("delivered push POST (callgrind, hash seed 0); a/b: a's figure over b's")
    print(" " * width + "".join(f"{name:>{column}}" for name in names))
    for line, figures in lines.items():
        print(line.ljust(width) + "".join(f"{figures[n]:>{column}}" for n in names))
    for target, figures in rows.items():
        if target != SDK.name:
            print(verdict(target, {n: figures[n] for n in names if n in blocking}))
    for line, figures in ratio_rows.items():
        if line.endswith("/" + SDK.name):
            print(verdict(line, {FILE_LOAD: figures[FILE_LOAD]}, FILE_GOAL, "x"))
            continue
        judged = {n: figures[n] for n in names if n not in blocking and n != FILE_LOAD}
        print(verdict(line, judged, RATIO_GOAL, "x"))


def _target(spec: str) -> Target:
    name, _, path = spec.partition("=")
    if not name or not (Path(path) / "n8n_a2a").is_dir():
        raise argparse.ArgumentTypeError(f"expected name=/path/to/checkout, not {spec!r}")
    return Target(name, "adapter", Path(path).resolve())


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--sends", type=int, default=320, help="sends per load at c=64")
    parser.add_argument("--adapter", type=_target, action="append", default=[])
    parser.add_argument("--cache-sim", action="store_true", help="also count LL cache misses")
    parser.add_argument("--sdk", action="store_true", help="also count the a2a-sdk server")
    arguments = parser.parse_args()
    if shutil.which("valgrind") is None or shutil.which("callgrind_control") is None:
        sys.exit("bench/probes/instructions.py needs valgrind: apt-get install valgrind")
    targets = [Target("n8n-a2a", "adapter", CHECKOUT), *arguments.adapter]
    if arguments.sdk:
        if importlib.util.find_spec("uvicorn") is None:
            sys.exit("--sdk runs the SDK server on this venv's uvicorn: use bench/run's venv")
        targets.append(SDK)
    with Stub() as webhook, Stub() as receiver:
        rows = {
            target.name: measure(
                target, webhook.url("/webhook"), arguments.sends, arguments.cache_sim, receiver
            )
            for target in targets
        }
    every = loads(arguments.sends, receiver.url("/push"))
    report(rows, [load.name for load in every], {load.name for load in every if load.blocking})


if __name__ == "__main__":
    main()
