"""Instructions per request: what a send costs n8n-a2a, counted by valgrind, not timed.

On a shared machine the CPU seconds of one run and the next differ by 20% and more; the
instructions a process executes for the same requests do not. Each adapter (this checkout,
and any `--adapter name=path`) runs under callgrind with its instrumentation off while it
starts and warms up; then, per load, instrumentation goes on for the sends alone and the
counters are dumped after: instructions per send (and, with --cache-sim, the simulated
last-level cache misses). The loads: blocking SendMessage over JSON-RPC and the same send
over HTTP+JSON, each at concurrency 1 and 64, against bench/stub_webhook.py (its own
process, not counted); each against the goal of at most 4.5 million a send, PASS
or FAIL on the targets line. Python's hash seed is fixed: dict layouts do not move the
count.

Needs valgrind (Debian: apt-get install valgrind). A few minutes per adapter: callgrind
runs the adapter about 50 times slower. Runs in the dev venv:
    .venv/bin/python bench/instructions.py --adapter before=/tmp/old-checkout
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import httpx
import trio
from procs import free_port, pinned, stop
from settings import BENCH, CHECKOUT
from targets import Target, server_command
from wire import A2A_HEADERS, REST_SEND_PATH, http_get_status, rest_send_body, send_message_body

SERVER_CORE, CLIENT_CORE = "0", "1"
#: The goal: at most this many million instructions a blocking send, at every load.
GOAL_M = 4.5
#: Under valgrind an import takes a while: the card may be minutes away.
READY_S = 300.0


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


def loads(sends: int) -> list[Load]:
    jsonrpc, rest = send_message_body("ok"), rest_send_body("ok")
    return [
        Load("jsonrpc c=1", "/", jsonrpc, max(sends // 8, 8), 1),
        Load("jsonrpc c=64", "/", jsonrpc, sends, 64),
        Load("http+json c=1", REST_SEND_PATH, rest, max(sends // 8, 8), 1),
        Load("http+json c=64", REST_SEND_PATH, rest, sends, 64),
    ]


async def _send_all(port: int, load: Load) -> None:
    """`load.sends` sends, `load.concurrency` connections each sending in turn; every answer
    must be a completed task (NotServed for a route the adapter does not have)."""
    left = load.sends
    limits = httpx.Limits(max_connections=load.concurrency)
    async with httpx.AsyncClient(timeout=300, limits=limits) as client:

        async def sender() -> None:
            nonlocal left
            while left > 0:
                left -= 1
                reply = await client.post(
                    f"http://127.0.0.1:{port}{load.path}", content=load.body, headers=A2A_HEADERS
                )
                if reply.status_code == 404:
                    raise NotServed(load.name)
                if reply.status_code != 200 or "TASK_STATE_COMPLETED" not in reply.text:
                    raise RuntimeError(f"{load.name}: {reply.status_code} {reply.text[:300]}")

        async with trio.open_nursery() as nursery:
            for _ in range(load.concurrency):
                nursery.start_soon(sender)


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


def measure(target: Target, webhook_url: str, sends: int, cache_sim: bool) -> dict[str, str]:
    """Instructions per send (millions; and LL misses per send with the cache simulated) for
    each load, on one adapter under callgrind."""
    port = free_port()
    command, environment = server_command(target, port, webhook_url)
    environment["PYTHONHASHSEED"] = "0"
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
    figures: dict[str, str] = {}
    dumped: set[Path] = set()
    try:
        deadline = time.perf_counter() + READY_S
        while http_get_status(port, "/healthz") != 200:
            if process.poll() is not None or time.perf_counter() > deadline:
                raise RuntimeError(f"{target.name} did not start; see {workdir}/adapter.log")
            time.sleep(0.5)
        for load in loads(sends):
            warm = Load(load.name, load.path, load.body, load.concurrency * 2, load.concurrency)
            if not _warmed(port, warm):
                figures[load.name] = "-"
                continue
            callgrind_control(process.pid, "--instr=on")
            trio.run(_send_all, port, load)
            callgrind_control(process.pid, "--instr=off")
            callgrind_control(process.pid, "--dump=" + load.name)
            [dump] = set(workdir.glob("callgrind.out.*")) - dumped
            dumped.add(dump)
            counts = dump_counts(dump)
            per_send = f"{counts[0] / load.sends / 1e6:.3f}"
            if cache_sim:  # Ir Dr Dw I1mr D1mr D1mw ILmr DLmr DLmw: the last three
                per_send += f" ({sum(counts[6:9]) / load.sends:,.0f} LL misses)"
            figures[load.name] = per_send
            print(f"  {target.name} {load.name}: {per_send} M instructions/send", flush=True)
    finally:
        stop(process, grace_s=60.0)  # a drain under valgrind is slow
        log.close()
        shutil.rmtree(workdir, ignore_errors=True)
    return figures


def verdict(name: str, figures: dict[str, str]) -> str:
    """One adapter's targets line: each load's count against GOAL_M, PASS or FAIL (`-`: a
    load the adapter does not serve)."""
    checks = []
    for load, figure in figures.items():
        if figure == "-":
            checks.append(f"{load} -")
            continue
        millions = float(figure.split()[0])  # past it, with --cache-sim, the LL misses
        checks.append(f"{load} <= {GOAL_M:g} M {'PASS' if millions <= GOAL_M else 'FAIL'}")
    return f"{name} targets: {', '.join(checks)}"


def _target(spec: str) -> Target:
    name, _, path = spec.partition("=")
    if not name or not (Path(path) / "n8n_a2a").is_dir():
        raise argparse.ArgumentTypeError(f"expected name=/path/to/checkout, not {spec!r}")
    return Target(name, "adapter", Path(path).resolve())


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--sends", type=int, default=640, help="sends per load at c=64")
    parser.add_argument("--adapter", type=_target, action="append", default=[])
    parser.add_argument("--cache-sim", action="store_true", help="also count LL cache misses")
    arguments = parser.parse_args()
    if shutil.which("valgrind") is None or shutil.which("callgrind_control") is None:
        sys.exit("bench/instructions.py needs valgrind: apt-get install valgrind")
    targets = [Target("n8n-a2a", "adapter", CHECKOUT), *arguments.adapter]
    stub = subprocess.Popen(
        pinned(CLIENT_CORE, [sys.executable, str(BENCH / "stub_webhook.py")]),
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert stub.stdout is not None
        webhook_url = f"http://127.0.0.1:{int(stub.stdout.readline())}/webhook"
        rows = {
            target.name: measure(target, webhook_url, arguments.sends, arguments.cache_sim)
            for target in targets
        }
    finally:
        stub.terminate()
        stub.wait(timeout=10)
    names = [load.name for load in loads(arguments.sends)]
    width = max(len(name) for name in [*rows, "goal"])
    print("\nmillions of instructions per blocking send (callgrind, hash seed 0)")
    print(" " * width + "".join(f"  {name:>16}" for name in names))
    for target, figures in rows.items():
        print(target.ljust(width) + "".join(f"  {figures[n]:>16}" for n in names))
    print("goal".ljust(width) + "".join(f"  {f'<= {GOAL_M:g}':>16}" for _ in names))
    for target, figures in rows.items():
        print(verdict(target, {n: figures[n] for n in names}))


if __name__ == "__main__":
    main()
