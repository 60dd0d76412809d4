"""What a JSON body costs the server beside a text body of the same size.

Per adapter (this checkout, and each `--adapter name=path`), each server started as
bench/run starts it (targets.py), in front of bench/stub_webhook.py:

- `cpu`: the server's CPU seconds (its one event loop) for one blocking SendMessage whose
  body is about 1 MiB: `[{},{},...]` in the message's metadata, that many empty objects
  in a data part, as many zeros, and text; and a data part at the bound of values (when
  the adapter has one): `[{"a":{}},...]`, the kind of value that costs most once parsed;
  the median of --sends, each answered (or refused) before the next;
- `held`: the RSS that one send in flight keeps, --held sends at once against a webhook
  that waits, each on a fresh server: RSS once they are all in, less RSS before, per
  send; data parts of `[{},...]`, of `[0,0,...]` and at the bound, and text;
- `decode`: a typical small SendMessage (one short text part), parsed and decoded as the
  endpoint does (`parse_request`, then the v1.0 codec's `decode`), in microseconds of
  process CPU time (less swayed by a busy machine than the wall clock), the best of 7
  timeit repeats of 20,000, in a fresh interpreter.

`.venv/bin/python bench/probes/bodies.py --adapter main=/work/main` for before and after.
These are figures, not a test: the exit status says only that the harness ran.
"""

from __future__ import annotations

import argparse
import json
import socket
import statistics
import subprocess
import sys
import threading
import time
from collections.abc import Sequence
from contextlib import AbstractContextManager
from pathlib import Path

import _tool  # noqa: F401  (bench/ on sys.path: the tool's modules)
from procs import cpu_seconds_of, pinned, rss_kib, settle
from settings import BENCH, CHECKOUT
from stub_webhook import SLOW_MARKER
from targets import fresh_adapter
from wire import A2A_HEADERS, MESSAGE_ID, fresh, post_request

MIB = 1024 * 1024
#: Room for the envelope in a 1 MiB body (the bound ADAPTER_MAX_BODY_BYTES had by default).
_FILL = MIB - 1024
_DECODE = """
import time
import timeit
from n8n_a2a.protocol.jsonrpc import parse_request
from n8n_a2a.protocol.media import Modes
from n8n_a2a.protocol.versions import V1
body = {body!r}
modes = Modes()
def decode():
    call = parse_request(body)
    V1.decode(call.method, call.params, modes)
print(min(timeit.Timer(decode, timer=time.process_time).repeat(number=20000, repeat=7)) / 20000)
"""


def send(parts: Sequence[object], metadata: object = None) -> bytes:
    message: dict[str, object] = {"role": "ROLE_USER", "messageId": MESSAGE_ID, "parts": parts}
    if metadata is not None:
        message["metadata"] = metadata
    request = {"jsonrpc": "2.0", "id": 1, "method": "SendMessage", "params": {"message": message}}
    return json.dumps(request, separators=(",", ":")).encode()


def empties(count: int) -> list[object]:
    return [{} for _ in range(count)]


def bodies(values_bound: int | None, marker: str = "") -> dict[str, bytes]:
    """The bodies, each about 1 MiB (`marker`: a text part that makes the stub wait)."""
    text = [{"text": marker or "x"}]
    found = {
        "metadata [{},...]": send(text, {"v": empties(_FILL // 3)}),
        "data [{},...]": send([*text, {"data": empties(_FILL // 3)}]),
        "data [0,...]": send([*text, {"data": [0] * (_FILL // 2)}]),
        "text": send([{"text": marker + "x" * _FILL}]),
    }
    if values_bound is not None:
        # The costliest value kind there is once parsed: an object holding an object.
        nested: list[object] = [{"a": {}} for _ in range((values_bound - 40) // 2)]
        found["data at the bound"] = send([*text, {"data": nested}])
    return found


def values_bound(checkout: Path) -> int | None:
    """MAX_VALUES of the checkout's protocol/strict.py (None before it had one)."""
    probe = (
        "try:\n    from n8n_a2a.protocol.strict import MAX_VALUES as bound\n"
        "except ImportError:\n    bound = ''\nprint(bound)"
    )
    found = run_in(checkout, probe).strip()
    return int(found) if found else None


def run_in(checkout: Path, code: str) -> str:
    environment = {"PYTHONPATH": str(checkout), "PYTHONHASHSEED": "0"}
    return subprocess.run(
        [sys.executable, "-c", code],
        env=environment,
        cwd=checkout,  # `-c` and `-m` put the working directory first on the path
        capture_output=True,
        text=True,
        check=True,
    ).stdout


def answered(port: int, body: bytes) -> str:
    """What one blocking send came to: the task's state, or the error's code."""
    with socket.create_connection(("127.0.0.1", port), timeout=120) as connection:
        sent = post_request("/", fresh(body), {"Connection": "close", **A2A_HEADERS})
        connection.sendall(sent)
        received = b"".join(iter(lambda: connection.recv(65536), b""))
    document = json.loads(received.partition(b"\r\n\r\n")[2])
    if "error" in document:
        return f"error {document['error']['code']}"
    return str(document["result"]["task"]["status"]["state"])


def cpu_per_send(pid: int, port: int, body: bytes, sends: int) -> tuple[float, str]:
    samples, outcome = [], ""
    for _ in range(sends):
        before = cpu_seconds_of(pid)
        outcome = answered(port, body)
        samples.append(cpu_seconds_of(pid) - before)
    return statistics.median(samples), outcome


def held_per_send(pid: int, port: int, body: bytes, held: int) -> float:
    """KiB of RSS per send while `held` of them wait for the webhook at once."""
    answered(port, send([{"text": "warm"}]))
    settle(pid, 5)
    before = rss_kib(pid)
    threads = [threading.Thread(target=answered, args=(port, body)) for _ in range(held)]
    for thread in threads:
        thread.start()
    time.sleep(1)
    settle(pid, 10)
    during = rss_kib(pid)
    for thread in threads:
        thread.join()
    return (during - before) / held


def serving(name: str, checkout: Path, webhook: str) -> AbstractContextManager[tuple[int, int]]:
    """The adapter of `checkout`, fresh, on the server core: its pid and port."""
    return fresh_adapter(name, checkout, webhook, ADAPTER_INPUT_MODES="text/plain,application/json")


def measure(name: str, checkout: Path, webhook: str, arguments: argparse.Namespace) -> None:
    bound = values_bound(checkout)
    print(f"{name} ({checkout}; values bound: {bound or 'none'})", flush=True)
    with serving(name, checkout, webhook) as (pid, port):
        for label, body in bodies(bound).items():
            answered(port, body)  # warm-up
            seconds, outcome = cpu_per_send(pid, port, body, arguments.sends)
            print(f"  cpu   {label:<20} {len(body) / MIB:.2f} MiB  {seconds:.3f} s  ({outcome})")
    slow = bodies(bound, SLOW_MARKER.decode())
    for label in ("data [{},...]", "data [0,...]", "data at the bound", "text"):
        if label not in slow:
            continue
        with serving(name, checkout, webhook) as (pid, port):
            kib = held_per_send(pid, port, slow[label], arguments.held)
        print(f"  held  {label:<20} {kib / 1024:.1f} MiB of RSS a send in flight", flush=True)
    small = send([{"text": "What is the status of order 12345?"}])
    seconds = float(run_in(checkout, _DECODE.format(body=small)))
    print(f"  decode a small SendMessage ({len(small)} bytes): {seconds * 1e6:.1f} µs", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--adapter", action="append", default=[], metavar="NAME=PATH")
    parser.add_argument("--sends", type=int, default=5)
    parser.add_argument("--held", type=int, default=8)
    arguments = parser.parse_args()
    adapters = [("n8n-a2a", CHECKOUT)]
    for given in arguments.adapter:
        name, _, path = given.partition("=")
        adapters.append((name, Path(path).resolve()))
    stub = subprocess.Popen(
        pinned("1", [sys.executable, str(BENCH / "stub_webhook.py"), "--slow", "20"]),
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert stub.stdout is not None
        webhook = f"http://127.0.0.1:{int(stub.stdout.readline())}/webhook"
        for name, checkout in adapters:
            measure(name, checkout, webhook, arguments)
    finally:
        stub.terminate()
        stub.wait(timeout=10)


if __name__ == "__main__":
    main()
