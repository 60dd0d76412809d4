"""How much load a bench run puts on each target, and for how long; --smoke makes it tiny."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

BENCH = Path(__file__).resolve().parent
CHECKOUT = BENCH.parent
#: The stub answers a body holding this after its slow delay (see stub_webhook.py).
SLOW_MARKER = "bench-slow"


@dataclass(frozen=True)
class Settings:
    """How much load, and for how long; --smoke makes every count tiny."""

    runs: int = 3
    warmup_s: float = 2.0
    c1_s: float = 8.0
    c64_s: float = 8.0
    concurrency: int = 64
    tasks: int = 20_000
    tasks_cap_s: float = 30.0
    inflight: int = 1000
    inflight_timeout_s: float = 20.0
    events: int = 100  # cross-replica event probes (PostgreSQL store)
    streamed_replies: int = 10  # streamed replies of 50 items, over SSE and blocking each
    file_trips: int = 10  # round trips of a 5 MiB file (file_trip.py), one after another
    delay_s: float = 0.0
    slow_s: float = 2.0
    server_core: str = "0"
    client_core: str = "1"


# Every row of the full run, each load once: no warm-ups (wrk runs a whole second at the
# least, and a smoke run's figures are not to be judged), each half of the tasks in one.
SMOKE = Settings(
    runs=1,
    warmup_s=0.0,
    c1_s=1.0,
    c64_s=1.0,
    tasks=300,
    tasks_cap_s=2.0,
    inflight=50,
    inflight_timeout_s=5.0,
    slow_s=0.5,
    events=10,
    streamed_replies=1,
    file_trips=1,
)
