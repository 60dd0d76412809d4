"""What traces cost a blocking send: the adapter's own CPU per send and its latency, with
the otel extra installed and no endpoint set, with an OTLP endpoint set (a receiver in
this process that answers 200 and counts what arrives), and, with --baseline, a checkout
without the tracing code at all.

Each target is `python -m n8n_a2a` in a process of its own against bench/stub_webhook.py;
per round, --sends blocking v1.0 SendMessage one after another over one keep-alive
connection, and the adapter process's CPU over the round divided by the sends. Prints the
median over --rounds rounds per target, after a warm-up round. Runs in the dev venv:
`.venv/bin/python bench/probes/traces.py --baseline ../main`.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import threading
import time
import uuid
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import _tool  # noqa: F401  (bench/ on sys.path: the tool's modules)
import httpx
from procs import cpu_seconds_of, free_port, stop
from settings import BENCH, CHECKOUT


@dataclass(frozen=True)
class Target:
    name: str
    environ: dict[str, str]
    #: The checkout `python -m n8n_a2a` runs: the current directory comes first on its path.
    tree: Path = CHECKOUT


class _Sink(BaseHTTPRequestHandler):
    """An OTLP/HTTP receiver that reads each export and answers 200."""

    exports = 0

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers["Content-Length"]))
        type(self).exports += 1
        self.send_response(200)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, format: str, *args: object) -> None:
        pass


def _send(client: httpx.Client, url: str) -> None:
    document = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "SendMessage",
        "params": {
            "message": {
                "messageId": str(uuid.uuid4()),
                "role": "ROLE_USER",
                "parts": [{"text": "ok"}],
            }
        },
    }
    headers = {
        "A2A-Version": "1.0",
        "traceparent": "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
    }
    reply = client.post(url, json=document, headers=headers)
    if reply.json()["result"]["task"]["status"]["state"] != "TASK_STATE_COMPLETED":
        raise RuntimeError(f"the adapter answered {reply.text}")


def _measure(target: Target, webhook: str, sends: int, rounds: int) -> tuple[float, float]:
    """Median CPU ms per send and median latency ms, over the rounds."""
    port = free_port()
    url = f"http://127.0.0.1:{port}/"
    environ = {
        **{k: v for k, v in os.environ.items() if not k.startswith(("OTEL_", "ADAPTER_"))},
        "ADAPTER_AGENT_NAME": "bench",
        "ADAPTER_AGENT_DESCRIPTION": "bench",
        "ADAPTER_SKILL_ID": "bench",
        "ADAPTER_SKILL_NAME": "bench",
        "ADAPTER_SKILL_DESCRIPTION": "bench",
        "ADAPTER_WEBHOOK_URL": webhook,
        "ADAPTER_PUBLIC_URL": url,
        "ADAPTER_HOST": "127.0.0.1",
        "ADAPTER_PORT": str(port),
        "ADAPTER_LOG_LEVEL": "WARNING",
        **target.environ,
    }
    process = subprocess.Popen([sys.executable, "-m", "n8n_a2a"], env=environ, cwd=target.tree)
    try:
        with httpx.Client(timeout=10) as client:
            deadline = time.monotonic() + 20
            while True:
                try:
                    client.get(url + ".well-known/agent-card.json")
                    break
                except httpx.TransportError:
                    if time.monotonic() > deadline:
                        raise
                    time.sleep(0.05)
            cpu, latency = [], []
            for round_number in range(rounds + 1):
                before, times = cpu_seconds_of(process.pid), []
                for _ in range(sends):
                    start = time.perf_counter()
                    _send(client, url)
                    times.append(time.perf_counter() - start)
                if round_number:  # the first is the warm-up
                    cpu.append((cpu_seconds_of(process.pid) - before) / sends)
                    latency.append(statistics.median(times))
        return statistics.median(cpu) * 1e3, statistics.median(latency) * 1e3
    finally:
        stop(process)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--sends", type=int, default=1000)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--baseline", type=Path, help="a checkout without the tracing code")
    arguments = parser.parse_args()
    sink = ThreadingHTTPServer(("127.0.0.1", 0), _Sink)
    threading.Thread(target=sink.serve_forever, daemon=True).start()
    endpoint = f"http://127.0.0.1:{sink.server_address[1]}"
    targets = [
        Target("otel installed, no endpoint", {}),
        # Batches every 100 ms, so that the rounds export as they go, not at the stop.
        Target(
            "OTEL_EXPORTER_OTLP_ENDPOINT set",
            {"OTEL_EXPORTER_OTLP_ENDPOINT": endpoint, "OTEL_BSP_SCHEDULE_DELAY": "100"},
        ),
    ]
    if arguments.baseline is not None:
        tree = arguments.baseline.resolve()
        targets.insert(0, Target(f"baseline {tree}", {"PYTHONPATH": str(tree)}, tree))
    stub = subprocess.Popen(
        [sys.executable, str(BENCH / "stub_webhook.py")], stdout=subprocess.PIPE, text=True
    )
    try:
        assert stub.stdout is not None
        webhook = f"http://127.0.0.1:{int(stub.stdout.readline())}/webhook"
        print(f"{arguments.rounds} rounds of {arguments.sends} blocking sends, c=1", flush=True)
        for target in targets:
            cpu_ms, p50_ms = _measure(target, webhook, arguments.sends, arguments.rounds)
            print(f"{target.name}: {cpu_ms:.3f} ms CPU/send, p50 {p50_ms:.3f} ms", flush=True)
        print(f"OTLP exports received: {_Sink.exports}", flush=True)
    finally:
        stub.terminate()
        stub.wait(timeout=10)
        sink.shutdown()


if __name__ == "__main__":
    main()
