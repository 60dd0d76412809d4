"""The printed report: the table of medians, then the ratios and the targets' verdicts."""

from __future__ import annotations

from collections.abc import Sequence

from figures import Stats, ratios, verdicts
from settings import Settings
from targets import Target

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
    ("rest_rps", "rest rps c=N", "{:.0f}"),
    ("rest_cpu_ms", "rest cpu/req c=N ms", "{:.2f}"),
    ("rest_p99_ms", "rest p99 c=N ms", "{:.1f}"),
    ("idle_mib", "idle MiB", "{:.1f}"),
    ("peak_mib", "peak MiB", "{:.1f}"),
    ("ready_ms", "ready ms", "{:.0f}"),
    ("kib_per_task", "KiB/task", "{:.2f}"),
    ("after_tasks_mib", "MiB after", "{:.1f}"),
    ("inflight_done", "slow done", "{:.0f}"),
    ("event_p50_ms", "xrep p50 ms", "{:.1f}"),
    ("event_p99_ms", "xrep p99 ms", "{:.1f}"),
    ("inflight_out_s", "slow out s", "{:.2f}"),
    ("inflight_s", "slow all s", "{:.2f}"),
    ("slow_cpu_ms", "cpu/req slow ms", "{:.2f}"),
    ("stream_rps", "stream rps c=N", "{:.0f}"),
    ("stream_cpu_ms", "cpu/stream c=N ms", "{:.2f}"),
    ("stream_p99_ms", "stream p99 c=N ms", "{:.1f}"),
    ("chunk_p50_ms", "chunk p50 ms", "{:.2f}"),
    ("chunk_p99_ms", "chunk p99 ms", "{:.2f}"),
    ("chunk_cpu_ms", "cpu/chunk ms", "{:.3f}"),
    ("chunk_block_p50_ms", "chunk block p50 ms", "{:.1f}"),
    ("chunk_block_p99_ms", "chunk block p99 ms", "{:.1f}"),
    ("chunk_block_cpu_ms", "cpu/chunk block ms", "{:.3f}"),
    ("file_ms", "file 5 MiB ms", "{:.0f}"),
    ("file_cpu_ms", "cpu/file 5 MiB ms", "{:.0f}"),
    ("upload_peak_mib", "up 20 MiB peak MiB", "{:.0f}"),
    ("reply_peak_mib", "reply 20 MiB peak MiB", "{:.0f}"),
]


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
