"""Benchmark n8n-a2a against the bare webhook and against the a2a-sdk 1.3.0 server.

One run measures every target in turn (the order rotates from run to run, so drift in
the machine's load does not always land on the same one): the stub webhook called
directly (the limit), n8n-a2a in front of it with its in-memory store and with the
PostgreSQL store (`n8n-a2a-pg`, on a PostgreSQL this starts once, durable settings, data
on disk, on the clients' core), any --adapter variants, and the SDK server doing the
same job. Servers run on one core, the stub and every load client
on the other. Per target and run: startup to a served card, idle RSS, blocking
SendMessage at concurrency 1 (latency added over direct) and at 64 (throughput), the
same send over the HTTP+JSON binding at 64, memory growth per completed task, N
concurrent sends against a slow webhook (time to all done, peak RSS), and last a
streaming SendStreamingMessage at 64 (throughput, CPU per stream, p99 to the stream's
end); for the PostgreSQL store also how long an event
made on one replica takes to reach a subscriber on another. The table gives medians
over the runs. Start it with bench/run.

This is the entry: the options, and the report printed from the samples runs.py takes
(or from a saved --out); bench/README.md lists what each other module does.
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Sequence
from dataclasses import asdict
from pathlib import Path

# Sibling modules by bare name: bench/run starts this file as a script, so bench/ is first
# on sys.path (and mypy takes bench/ as their base), with no package to install.
from figures import Stats, add_latency_over_direct
from runs import collect
from settings import CHECKOUT, SMOKE, Settings
from table import render
from targets import Target


def parse_arguments(argv: Sequence[str] | None) -> tuple[argparse.Namespace, Settings]:
    parser = argparse.ArgumentParser(
        prog="bench/run",
        description=__doc__.split("\n\n")[0],
        epilog="The first run that measures makes a venv with exact pins in "
        "${N8N_A2A_CACHE:-~/.cache/n8n-a2a}/bench-venv and, when wrk is missing and you are "
        "root, installs it with apt-get. All traffic stays on 127.0.0.1. `bench/run probe "
        "NAME [OPTIONS]` runs one of bench/probes/ instead, each measuring one thing alone "
        "(`bench/run probe` lists them).",
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


if __name__ == "__main__":
    main()
