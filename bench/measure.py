"""One run's figures for one target: every load in order, with the server's CPU and memory
read around each, and for the PostgreSQL store the cross-replica event probe."""

from __future__ import annotations

import json
import socket
import statistics
import time
import uuid
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

from big_file import peaks
from figures import Sample
from file_trip import round_trips
from loads import Load, errors_of, inflight, rate, wrk
from procs import cpu_seconds_of, rss_kib, settle
from settings import SLOW_MARKER, Settings
from streamed import streamed_reply, streamed_reply_direct
from targets import Target, check_answer, serves_rest, serving, streams
from wire import A2A_HEADERS, REST_SEND_PATH, http_get, http_post, post_request, rpc_body


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
        direct = _measure_load(load, settings, stub_port, None, say)
        direct.update(
            streamed_reply_direct(
                stub_port, load.path, settings.streamed_replies, settings.client_core
            )
        )
        direct.update(round_trips(stub_port, settings.file_trips, None, direct=True))
        return direct
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
        rest = replace(load, path=REST_SEND_PATH, body_file=files["a2a-rest"])
        served = rest if serves_rest(rest, say) else None
        time.sleep(1.0)  # let start-up garbage settle before reading idle memory
        sample: Sample = {"ready_ms": ready_ms, "idle_mib": rss_kib(process.pid) / 1024}
        sample.update(_measure_load(load, settings, stub_port, process.pid, say, served))
        # The peak of the blocking sends alone: the streams come after, as a workload of
        # their own.
        sample["peak_mib"] = rss_kib(process.pid, "VmHWM") / 1024
        if store_url is not None:
            with serving(target, settings, webhook_url, logs, store_url) as (_, other, _):
                sample.update(cross_replica_events(port, other, settings.events))
        # The slow sends the client gave up on may still be running: wait for them.
        settle(process.pid, settings.inflight_timeout_s)
        if streams(load, say):
            sample.update(_at_concurrency("stream", load, settings, process.pid, stream=True))
        sample.update(_file_trips(port, settings, process.pid, say))
    sample.update(_streamed(target, settings, webhook_url, logs, store_url, say))
    sample.update(peaks(target, settings, webhook_url, logs, say, store_url))
    return sample


def _streamed(
    target: Target,
    settings: Settings,
    webhook_url: str,
    logs: Path,
    store_url: str | None,
    say: Callable[[str], None],
) -> Sample:
    """A streamed reply through an adapter of its own, one that reads the webhook's reply
    as n8n's streamed lines (the sdk server has no such thing)."""
    if target.kind != "adapter":
        return {}
    try:
        with serving(target, settings, webhook_url, logs, store_url, streaming=True) as served:
            process, port, _ = served
            return streamed_reply(
                port, settings.streamed_replies, process.pid, settings.client_core
            )
    except RuntimeError as error:  # an n8n-a2a from before ADAPTER_WEBHOOK_STREAMING
        say(f"      no streamed reply measured: {error}")
        return {}


def _file_trips(port: int, settings: Settings, pid: int, say: Callable[[str], None]) -> Sample:
    """A 5 MiB file's round trips (file_trip.py), last: they leave the most garbage."""
    sample = round_trips(port, settings.file_trips, pid)
    if sample["file_ms"] is None:  # such as an n8n-a2a from before whole replies
        say("      no file round trip measured: the file did not come back whole")
    return sample


def cross_replica_events(port: int, other: int, count: int) -> Sample:
    """From a CancelTask sent to one replica to the `canceled` event read on a
    SubscribeToTask stream open on the other: an upper bound of how long an event takes
    to cross (it includes the cancel's own handling and commit)."""
    seconds: list[float] = []
    for _ in range(count):
        message = {
            "role": "ROLE_USER",
            "messageId": str(uuid.uuid4()),
            "parts": [{"text": SLOW_MARKER}],
        }
        params = {"message": message, "configuration": {"returnImmediately": True}}
        _, sent = http_post(port, "/", rpc_body("SendMessage", params), A2A_HEADERS)
        task_id = json.loads(sent)["result"]["task"]["id"]
        with socket.create_connection(("127.0.0.1", other), timeout=10) as stream:
            subscribe = rpc_body("SubscribeToTask", {"id": task_id})
            stream.sendall(post_request("/", subscribe, A2A_HEADERS))
            received = b""
            while b"data:" not in received:  # the task: the subscription is in place
                received += stream.recv(65536)
            began = time.perf_counter()
            http_post(port, "/", rpc_body("CancelTask", {"id": task_id}), A2A_HEADERS)
            while b"TASK_STATE_CANCELED" not in received:
                received += stream.recv(65536)
            seconds.append(time.perf_counter() - began)
    cuts = statistics.quantiles(seconds, n=100) if len(seconds) > 1 else seconds * 99
    return {"event_p50_ms": cuts[49] * 1000, "event_p99_ms": cuts[98] * 1000}


def _cpu(pid: int | None) -> float:
    """The server's CPU seconds so far; the direct target has no server, so none."""
    return cpu_seconds_of(pid) if pid is not None else 0.0


def _ms_each(cpu_s: float, count: float) -> float:
    return 1000 * cpu_s / max(count, 1)


def _timed(
    load: Load,
    settings: Settings,
    connections: int,
    seconds: float,
    pid: int | None,
    *,
    stream: bool = False,
    warm_up: bool = True,
) -> tuple[dict[str, float], float]:
    """A warm-up (none when `settings.warmup_s` is 0), then a wrk run timed: its summary
    and the server's CPU seconds over it."""
    if warm_up and settings.warmup_s > 0:
        wrk(load, settings, connections, settings.warmup_s, stream=stream)
    used = _cpu(pid)
    summary = wrk(load, settings, connections, seconds, stream=stream)
    return summary, _cpu(pid) - used


def _measure_load(
    load: Load,
    settings: Settings,
    stub_port: int,
    pid: int | None,
    say: Callable[[str], None],
    rest: Load | None = None,
) -> Sample:
    """Blocking sends at c=1 and c=N, the same over HTTP+JSON at c=N (`rest`: a target that
    serves it), the memory a task leaves behind (servers only), then the slow sends."""
    c1, c1_cpu = _timed(load, settings, 1, settings.c1_s, pid)
    cn, cn_cpu = _timed(load, settings, settings.concurrency, settings.c64_s, pid)
    # Right after JSON-RPC's c=N, so that both bindings meet the server in the same state;
    # that run warmed it at the same concurrency, so no warm-up of its own.
    rest_figures = (
        {} if rest is None else _at_concurrency("rest", rest, settings, pid, warm_up=False)
    )
    sample: Sample = {
        "c1_rps": rate(c1),
        "c1_p50_ms": c1["p50_us"] / 1000,
        "c1_p99_ms": c1["p99_us"] / 1000,
        "cn_rps": rate(cn),
        "cn_p50_ms": cn["p50_us"] / 1000,
        "cn_p99_ms": cn["p99_us"] / 1000,
        "errors": float(errors_of(c1) + errors_of(cn)),
        **rest_figures,
    }
    if pid is not None:
        # The server's own CPU per request: what its throughput would be on a quiet core,
        # and, from c=1 to c=N, whether its cost per call stays flat.
        sample["c1_cpu_ms"] = _ms_each(c1_cpu, c1["requests"])
        sample["cn_cpu_ms"] = _ms_each(cn_cpu, cn["requests"])
        sample.update(_task_growth(load, settings, pid, rate(cn)))
    sample.update(_slow_sends(load, settings, stub_port, pid, say))
    return sample


def _task_growth(load: Load, settings: Settings, pid: int, cn_rps: float) -> Sample:
    """RSS growth per task over two halves of `settings.tasks`.

    The first half may still be filling a bounded task table (n8n-a2a keeps 10,000); the
    second shows what every further task leaves behind for good. wrk has no request count
    of its own: send.lua stops at the count, and the duration, from the rate just
    measured, keeps the wait short and bounded."""
    half = max(settings.tasks // 2, 1)
    seconds = min(settings.tasks_cap_s / 2, half / max(cn_rps, 1.0) * 1.2 + 1)
    before = rss_kib(pid)
    first = wrk(load, settings, settings.concurrency, seconds, half)
    middle = rss_kib(pid)
    second = wrk(load, settings, settings.concurrency, seconds, half)
    after = rss_kib(pid)
    return {
        "tasks_done": first["requests"] + second["requests"],
        "kib_per_task_first": (middle - before) / max(first["requests"], 1),
        "kib_per_task": (after - middle) / max(second["requests"], 1),
        "after_tasks_mib": after / 1024,
    }


def _slow_sends(
    load: Load, settings: Settings, stub_port: int, pid: int | None, say: Callable[[str], None]
) -> Sample:
    """`settings.inflight` sends at once against the slow webhook: how many came back, when,
    and when the last of them reached the webhook (the stub webhook says when)."""
    sample: Sample = {}
    used = _cpu(pid)
    slow = inflight(load, settings)
    if pid is not None:
        sample["slow_cpu_ms"] = _ms_each(_cpu(pid) - used, slow["done"])
    say(f"      in flight: {json.dumps(slow)}")
    sample["inflight_done"] = slow["done"]
    all_done = slow["all_done_s"]
    # Not all done within the bound: count it as the bound, so the median stays honest.
    sample["inflight_s"] = settings.inflight_timeout_s if all_done is None else all_done
    sample["inflight_connect_s"] = slow["connect_s"]
    # A burst is done no sooner than its last call's webhook delay after that call went
    # out: what came before it (accepting, reading, the call sent) sets the floor.
    slow_last = json.loads(http_get(stub_port, "/"))["slow_last"]
    if all_done is not None and slow_last >= slow["began_at"]:
        sample["inflight_out_s"] = slow_last - slow["began_at"]
    return sample


def _at_concurrency(
    name: str,
    load: Load,
    settings: Settings,
    pid: int | None,
    *,
    stream: bool = False,
    warm_up: bool = True,
) -> Sample:
    """One more load at concurrency N, like c=N above, as `<name>_rps`, `_cpu_ms`, `_p99_ms`
    and `_errors`: streaming sends (each timed to its stream's end), or REST sends."""
    n = settings.concurrency
    summary, used = _timed(load, settings, n, settings.c64_s, pid, stream=stream, warm_up=warm_up)
    return {
        f"{name}_rps": rate(summary),
        f"{name}_cpu_ms": _ms_each(used, summary["requests"]),
        f"{name}_p99_ms": summary["p99_us"] / 1000,
        f"{name}_errors": float(errors_of(summary)),
    }
