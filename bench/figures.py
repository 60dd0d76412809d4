"""From samples to figures: the medians over runs, the latency added over the bare webhook,
the ratios between targets, and the adapter's performance targets as PASS or FAIL."""

from __future__ import annotations

import statistics
from collections.abc import Sequence
from dataclasses import dataclass, field

from settings import Settings
from targets import Target

#: One run's figures for one target, by metric; None where the target has no such figure.
Sample = dict[str, float | None]

#: The throughput ratios against a target that only serves the webhook or stands in for it.
_RPS = (("c1_rps", "rps c=1"), ("cn_rps", "rps c=N"))


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


def _ratio(stats: Stats, a: str, b: str, metric: str) -> str:
    top, bottom = stats.median(a, metric), stats.median(b, metric)
    if top is None or bottom is None or bottom == 0:
        return "-"
    return f"{top / bottom:.3g}x"


def _compared(stats: Stats, a: str, b: str, metrics: Sequence[tuple[str, str]]) -> str:
    """One line of `a`'s medians over `b`'s, per (metric, label)."""
    parts = [f"{label} {_ratio(stats, a, b, metric)}" for metric, label in metrics]
    return f"{a} / {b}: " + ", ".join(parts)


def _rest_over_jsonrpc(stats: Stats, target: str) -> str | None:
    """One target's blocking sends at c=N over HTTP+JSON against JSON-RPC; None without both."""
    parts = []
    for rest, rpc, label in (
        ("rest_rps", "cn_rps", "rps c=N"),
        ("rest_cpu_ms", "cn_cpu_ms", "cpu/req c=N"),
    ):
        top, bottom = stats.median(target, rest), stats.median(target, rpc)
        if top is None or not bottom:
            return None
        parts.append(f"{label} {top / bottom:.3g}x")
    return f"{target} HTTP+JSON / JSON-RPC: " + ", ".join(parts)


def ratios(stats: Stats, targets: Sequence[Target]) -> list[str]:
    lines = []
    names = [target.name for target in targets]
    for target in targets:
        if target.kind != "adapter":
            continue
        if "direct" in names:
            lines.append(_compared(stats, target.name, "direct", _RPS))
        if "sdk" in names:
            against_sdk = (
                ("cn_rps", "rps c=N"),
                ("c1_rps", "rps c=1"),
                ("stream_rps", "stream rps c=N"),
                ("rest_rps", "rest rps c=N"),
                ("file_ms", "file 5 MiB"),
                ("file_cpu_ms", "cpu/file 5 MiB"),
                ("upload_peak_mib", "upload 20 MiB peak"),
                ("reply_peak_mib", "reply 20 MiB peak"),
                ("added_p50_ms", "+p50"),
                ("idle_mib", "idle"),
                ("peak_mib", "peak"),
                ("ready_ms", "ready"),
            )
            lines.append(_compared(stats, target.name, "sdk", against_sdk))
    for target in targets:
        if target.shared_store and "n8n-a2a" in names:
            against_memory = (
                ("cn_rps", "rps c=N"),
                ("c1_rps", "rps c=1"),
                ("cn_cpu_ms", "cpu/req c=N"),
            )
            lines.append(_compared(stats, target.name, "n8n-a2a", against_memory))
    if "sdk" in names and "direct" in names:
        lines.append(_compared(stats, "sdk", "direct", _RPS))
    lines += [line for t in targets if (line := _rest_over_jsonrpc(stats, t.name)) is not None]
    return lines


def verdicts(stats: Stats, targets: Sequence[Target], settings: Settings) -> list[str]:
    """The adapter's performance targets (bench/README.md), each PASS or FAIL on the medians."""
    lines = []
    for target in targets:
        if target.kind != "adapter":
            continue
        checks = _checks(stats, target, settings)
        lines.append(
            f"{target.name} targets: "
            + ", ".join(f"{label} {'PASS' if ok else 'FAIL'}" for label, ok in checks)
        )
    return lines


def _checks(stats: Stats, target: Target, settings: Settings) -> list[tuple[str, bool]]:
    def value(metric: str) -> float | None:
        return stats.median(target.name, metric)

    sdk_rps, sdk_file = stats.median("sdk", "cn_rps"), stats.median("sdk", "file_cpu_ms")
    rps, added = value("cn_rps"), value("added_p50_ms")
    done, slow_s, peak = value("inflight_done"), value("inflight_s"), value("peak_mib")
    idle, ready, growth = value("idle_mib"), value("ready_ms"), value("kib_per_task")
    file_cpu, upload, reply = (
        value("file_cpu_ms"),
        value("upload_peak_mib"),
        value("reply_peak_mib"),
    )
    checks = [
        ("rps c=N >= 4x sdk", rps is not None and sdk_rps is not None and rps >= 4 * sdk_rps),
        ("+p50 c=1 < 1 ms", added is not None and added < 1.0),
        (
            f"{settings.inflight} slow done <= {1.5 * settings.slow_s:g} s",
            done == settings.inflight and slow_s is not None and slow_s <= 1.5 * settings.slow_s,
        ),
        ("peak < 120 MiB", peak is not None and peak < 120),
        # The start's goals: nothing imported that the configuration does not use.
        ("idle <= 40 MiB", idle is not None and idle <= 40),
        ("ready <= 200 ms", ready is not None and ready <= 200),
        # The table is bounded; past it a finished task costs nothing that stays.
        ("growth < 0.1 KiB/task", growth is not None and growth < 0.1),
        # A file passes through a facade: its base64 read once each way, never decoded.
        (
            "cpu/file 5 MiB <= 0.5x sdk",
            file_cpu is not None and sdk_file is not None and file_cpu <= 0.5 * sdk_file,
        ),
        # A file is held once: as the body it came in.
        ("upload 20 MiB peak <= 50 MiB", upload is not None and upload <= 50),
        ("reply 20 MiB peak <= 50 MiB", reply is not None and reply <= 50),
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
    return checks
