"""The load clients, each on the client core: wrk with send.lua for timed runs at a fixed
concurrency, and inflight.py for many slow sends at once."""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import TypedDict

from procs import pinned
from settings import BENCH, Settings


@dataclass(frozen=True)
class Load:
    """What the load clients send to one target."""

    port: int
    path: str
    body_file: Path
    slow_body_file: Path
    a2a: bool
    expect: str
    stream_body_file: Path | None = None  # a streaming send, for targets that stream

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}{self.path}"


def wrk(
    load: Load,
    settings: Settings,
    connections: int,
    seconds: float,
    max_requests: int = 0,
    *,
    stream: bool = False,
) -> dict[str, float]:
    """One wrk run on the client core; its send.lua summary. wrk takes whole seconds.

    A stream's every response is checked for the expected text: wrk times a response to
    its last chunk, so a stream that ends early would only be measured fast."""
    environment = {
        **os.environ,
        "BENCH_BODY_FILE": str(load.stream_body_file if stream else load.body_file),
        "BENCH_PATH": load.path,
        "BENCH_A2A": "1" if load.a2a else "0",
        "BENCH_MAX_REQUESTS": str(max_requests),
        "BENCH_EXPECT": load.expect if stream else "",
        "BENCH_RUN": uuid.uuid4().hex[:12],  # each run's messageIds its own (send.lua)
    }
    command = [
        "wrk",
        "-t1",
        f"-c{connections}",
        f"-d{max(math.ceil(seconds), 1)}s",
        "--timeout",
        "10s",
        "-s",
        str(BENCH / "send.lua"),
        f"http://127.0.0.1:{load.port}",
    ]
    result = subprocess.run(
        pinned(settings.client_core, command),
        env=environment,
        capture_output=True,
        check=True,
        timeout=seconds + 30,
    )
    summary: dict[str, float] = json.loads(result.stdout.decode().strip().splitlines()[-1])
    return summary


def rate(summary: dict[str, float]) -> float:
    """Requests per second over a wrk run."""
    return summary["requests"] / (summary["duration_us"] / 1e6)


def errors_of(summary: dict[str, float]) -> int:
    keys = (
        "connect_errors",
        "read_errors",
        "write_errors",
        "status_errors",
        "timeouts",
        "unexpected",
    )
    return int(sum(summary[key] for key in keys))


class InflightSummary(TypedDict):
    """What inflight.py prints (the fields used here)."""

    done: int
    connect_s: float
    began_at: float
    all_done_s: float | None


def inflight(load: Load, settings: Settings) -> InflightSummary:
    """`settings.inflight` concurrent sends against the slow webhook (inflight.py)."""
    headers = ["--header", "Content-Type: application/json"]
    if load.a2a:
        headers += ["--header", "A2A-Version: 1.0"]
    command = [
        sys.executable,
        str(BENCH / "inflight.py"),
        load.url,
        "--body-file",
        str(load.slow_body_file),
        *headers,
        "--expect",
        load.expect,
        "--count",
        str(settings.inflight),
        "--timeout",
        str(settings.inflight_timeout_s),
    ]
    result = subprocess.run(
        pinned(settings.client_core, command),
        capture_output=True,
        check=True,
        timeout=2 * settings.inflight_timeout_s + 30,
    )
    summary: InflightSummary = json.loads(result.stdout.decode().strip().splitlines()[-1])
    return summary
