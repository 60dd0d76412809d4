"""The webhook client's own CPU per call, at concurrency 1 and 64.

Calls bench/stub_webhook.py, run in its own process so that its CPU is not counted,
through n8n_a2a.webhook.WebhookClient: per round, --calls calls shared by N tasks that
each call one after another, and the process CPU time over the round divided by the
calls. Prints the median over --rounds rounds per concurrency, after one warm-up
round. Measures whichever n8n_a2a is imported (PYTHONPATH picks another tree).
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import _tool  # noqa: F401  (bench/ on sys.path: the tool's modules)
import trio
from settings import BENCH

import n8n_a2a
from n8n_a2a.auth.caller import Caller
from n8n_a2a.config import Settings
from n8n_a2a.core.replies import HttpReply
from n8n_a2a.webhook import WebhookClient, WebhookRequest


async def _round(client: WebhookClient, calls: int, concurrency: int) -> float:
    """CPU seconds per call over `calls` calls, `concurrency` at a time."""
    request = WebhookRequest("ok", "t-1", "c-1", "m-1", "bench")

    async def caller(count: int) -> None:
        for _ in range(count):
            reply = await client.call(request, Caller())
            if not isinstance(reply, HttpReply) or reply.status != 200:
                raise RuntimeError(f"the stub answered {reply!r}")

    start = time.process_time()
    async with trio.open_nursery() as nursery:
        for share in range(concurrency):
            nursery.start_soon(caller, calls // concurrency + (share < calls % concurrency))
    return (time.process_time() - start) / calls


def client_settings(url: str, **overrides: Any) -> Settings:
    """Settings for a WebhookClient of the webhook at `url`; no server is made of them."""
    return Settings(
        agent_name="bench",
        agent_description="bench",
        skill_id="bench",
        skill_name="bench",
        skill_description="bench",
        skill_examples=(),
        webhook_url=url,
        public_url="http://127.0.0.1:1/",
        **overrides,
    )


async def _measure(url: str, calls: int, rounds: int, concurrencies: list[int]) -> None:
    async with WebhookClient(client_settings(url)) as client:
        for concurrency in concurrencies:
            await _round(client, calls, concurrency)  # warm-up: connections, caches
            samples = [await _round(client, calls, concurrency) for _ in range(rounds)]
            per_call = " ".join(f"{s * 1e3:.3f}" for s in samples)
            print(
                f"c={concurrency}: {statistics.median(samples) * 1e3:.3f} ms CPU/call "
                f"(median of {rounds} x {calls} calls: {per_call})",
                flush=True,
            )


@contextmanager
def stub_webhook() -> Iterator[str]:
    """bench/stub_webhook.py in its own process, so that its CPU and memory are not counted:
    its URL, once it listens; the n8n_a2a measured is printed."""
    stub = subprocess.Popen(
        [sys.executable, str(BENCH / "stub_webhook.py")], stdout=subprocess.PIPE, text=True
    )
    try:
        assert stub.stdout is not None
        port = int(stub.stdout.readline())
        print(f"n8n_a2a from {Path(n8n_a2a.__file__).parent}", flush=True)
        yield f"http://127.0.0.1:{port}/webhook"
    finally:
        stub.terminate()
        stub.wait(timeout=10)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--calls", type=int, default=2000)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--concurrency", type=int, nargs="+", default=[1, 64])
    arguments = parser.parse_args()
    with stub_webhook() as url:
        trio.run(_measure, url, arguments.calls, arguments.rounds, arguments.concurrency)


if __name__ == "__main__":
    main()
