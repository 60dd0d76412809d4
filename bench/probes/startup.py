"""The start: ms from exec to the first 200 on the card, the idle RSS, and what it imports.

Each run starts `python -m n8n_a2a` in bench/targets.py's environment (no store, JSON
logs, a webhook URL that is never called: the start makes no call), on one core when the
machine has two, and times from the spawn to the first 200 of the Agent Card; a second
later it reads VmRSS. Its Python is targets.image_python(): the running venv's packages
without its `.pth` files, which the image's venv does not have (the dev venv's editable
install would add its finder's imports to every start, which no deployment makes). The
adapter's bytecode is compiled first, as pip does at install (the dev environment's
PYTHONDONTWRITEBYTECODE would have every start compile its ninety modules anew), and the
code its dataclasses generate, as the image's build does (`python -m n8n_a2a.prebuilt`,
where the checkout has it). Beside
the wall time, the CPU the process used until the card: on a shared machine the less
noisy of the two. Medians over the runs, per adapter (this checkout, and any
`--adapter name=path`), each started the same way. Then `--importtime-runs` more starts
under `python -X importtime` and their imports until the card is served, each module's
figures the median over them: the top ones by cumulative time (a module's own and its
imports'), and the total of all. With `--instructions`, one more start each under
callgrind, counted from exec to the first served card (Python's hash seed fixed): on a
shared machine the one figure of a start that does not move with the load (valgrind).
Runs in the dev venv, outside `bench/run`:
    .venv/bin/python bench/probes/startup.py --runs 10 --adapter before=/tmp/old-checkout
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import subprocess
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import _tool  # noqa: F401  (bench/ on sys.path: the tool's modules)
from instructions import callgrind_control, dump_counts
from procs import cpu_seconds_of, free_port, pinned, rss_kib, stop
from settings import CHECKOUT
from targets import CARD_PATH, Target, compiled, server_command
from wire import http_get_status

SERVER_CORE = "0"
#: The webhook the card names; nothing calls it while the start is measured.
WEBHOOK_URL = "http://127.0.0.1:9/webhook/bench"
READY_S = 30.0
#: Under callgrind a start is some fifty times slower.
COUNTED_READY_S = 300.0
#: The start's goals: the card served within this of exec on a quiet machine
#: (bench/figures.py judges bench/run's ready figure by it too), and no more
#: instructions than this (millions) from exec to the served card.
READY_GOAL_MS = 200
INSTRUCTIONS_GOAL_M = 600


@dataclass(frozen=True)
class Start:
    """One start: ms to the card (wall and CPU), and KiB resident a second after it."""

    ready_ms: float
    cpu_ms: float
    idle_kib: int


def start_once(target: Target, python_options: tuple[str, ...] = ()) -> tuple[Start, bytes]:
    """Start the adapter, wait for its card and a second of idle; its figures and stderr."""
    port = free_port()
    command, environment = server_command(target, port, WEBHOOK_URL)
    command = [command[0], *python_options, *command[1:]]
    began = time.perf_counter()
    process = subprocess.Popen(
        pinned(SERVER_CORE, command),
        env=environment,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        # `-m` puts the working directory first on sys.path: the target's, not this one.
        cwd=target.checkout,
    )
    try:
        while http_get_status(port, CARD_PATH, timeout=0.05) != 200:
            if process.poll() is not None or time.perf_counter() - began > READY_S:
                raise RuntimeError(f"{target.name} did not serve its card")
            time.sleep(0.001)
        ready_ms = (time.perf_counter() - began) * 1000
        cpu_ms = cpu_seconds_of(process.pid) * 1000
        time.sleep(1.0)
        start = Start(ready_ms, cpu_ms, rss_kib(process.pid))
    finally:
        stop(process)
    assert process.stderr is not None
    return start, process.stderr.read()


def instructions_to_card(target: Target) -> int:
    """Instructions the adapter executes from exec to its first served card, counted by
    callgrind (the counters dumped once the card is served, before any shutdown)."""
    port = free_port()
    command, environment = server_command(target, port, WEBHOOK_URL)
    environment["PYTHONHASHSEED"] = "0"
    workdir = Path(tempfile.mkdtemp(prefix="bench-start-callgrind-"))
    valgrind = ["valgrind", "--tool=callgrind", f"--callgrind-out-file={workdir}/callgrind.out"]
    process = subprocess.Popen(
        pinned(SERVER_CORE, [*valgrind, *command]),
        env=environment,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        cwd=target.checkout,
    )
    try:
        began = time.perf_counter()
        while http_get_status(port, CARD_PATH, timeout=1.0) != 200:
            if process.poll() is not None or time.perf_counter() - began > COUNTED_READY_S:
                raise RuntimeError(f"{target.name} did not serve its card under callgrind")
            time.sleep(0.05)
        callgrind_control(process.pid, "--dump=card")
        [dump] = workdir.glob("callgrind.out.*")
        return dump_counts(dump)[0]
    finally:
        stop(process, grace_s=60.0)  # a drain under valgrind is slow
        shutil.rmtree(workdir, ignore_errors=True)


@dataclass(frozen=True)
class Import:
    """One line of -X importtime: the module, its own µs and its imports' with it."""

    module: str
    self_us: int
    cumulative_us: int
    depth: int


def imports_of(stderr: bytes) -> list[Import]:
    """The lines of `-X importtime` in a process's stderr (its log lines skipped)."""
    found = []
    for line in stderr.decode(errors="replace").splitlines():
        if not line.startswith("import time:") or "self [us]" in line:
            continue
        self_us, cumulative_us, name = line.removeprefix("import time:").split("|", 2)
        depth = (len(name) - len(name.lstrip())) // 2
        found.append(Import(name.strip(), int(self_us), int(cumulative_us), depth))
    return found


def median_imports(starts: list[list[Import]]) -> list[Import]:
    """Each module's median figures over the starts (one start alone moves by a third)."""
    # A name may have two lines (a package's, around its submodule's): by name and count.
    seen: dict[tuple[str, int], list[Import]] = {}
    for imports in starts:
        counts: dict[str, int] = {}
        for item in imports:
            counts[item.module] = counts.get(item.module, 0) + 1
            seen.setdefault((item.module, counts[item.module]), []).append(item)
    return [
        Import(
            module,
            int(statistics.median(i.self_us for i in items)),
            int(statistics.median(i.cumulative_us for i in items)),
            items[0].depth,
        )
        for (module, _), items in seen.items()
    ]


def print_imports(name: str, imports: list[Import], top: int) -> None:
    total = sum(item.self_us for item in imports)
    print(f"{name}: {len(imports)} modules imported until the card, {total / 1000:.0f} ms in all")
    print(f"  top {top} by cumulative ms (then self ms):")
    for item in sorted(imports, key=lambda i: i.cumulative_us, reverse=True)[:top]:
        print(f"    {item.cumulative_us / 1000:7.1f}  {item.self_us / 1000:6.1f}  {item.module}")
    ours = [item for item in imports if item.module.split(".")[0] == "n8n_a2a"]
    print(f"  n8n_a2a's own: {len(ours)} modules, {sum(i.self_us for i in ours) / 1000:.0f} ms")
    heavy = ("psycopg", "jwt", "cryptography", "prometheus_client", "opentelemetry")
    loaded = sorted({i.module.split(".")[0] for i in imports if i.module.startswith(heavy)})
    print(f"  of {', '.join(heavy)}: {', '.join(loaded) or 'none'} imported")


def adapter_targets(pairs: list[str]) -> list[Target]:
    targets = [Target("this", "adapter", CHECKOUT)]
    for pair in pairs:
        name, _, path = pair.partition("=")
        targets.append(Target(name, "adapter", Path(path).resolve()))
    return targets


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--top", type=int, default=15)
    parser.add_argument("--importtime-runs", type=int, default=3)
    parser.add_argument("--adapter", action="append", default=[], metavar="NAME=PATH")
    parser.add_argument(
        "--instructions", action="store_true", help="also count them to the card (valgrind)"
    )
    arguments = parser.parse_args()
    targets = adapter_targets(arguments.adapter)
    for target in targets:
        assert target.checkout is not None
        compiled(target.checkout)
    starts: dict[str, list[Start]] = {target.name: [] for target in targets}
    for _ in range(arguments.runs):
        for target in targets:  # interleaved: a busy moment falls on every target alike
            starts[target.name].append(start_once(target)[0])
    for target in targets:
        ready = statistics.median(s.ready_ms for s in starts[target.name])
        cpu = statistics.median(s.cpu_ms for s in starts[target.name])
        idle = statistics.median(s.idle_kib for s in starts[target.name]) / 1024
        fastest = min(s.ready_ms for s in starts[target.name])
        print(
            f"{target.name}: ready {ready:.0f} ms (median of {arguments.runs}, fastest"
            f" {fastest:.0f}), {cpu:.0f} ms of CPU to the card, idle RSS {idle:.1f} MiB",
            flush=True,
        )
    for target in targets:
        runs = range(arguments.importtime_runs)
        starts_imports = [imports_of(start_once(target, ("-X", "importtime"))[1]) for _ in runs]
        print_imports(target.name, median_imports(starts_imports), arguments.top)
    counts = {}
    for target in targets if arguments.instructions else ():
        counts[target.name] = instructions_to_card(target) / 1e6
        print(f"{target.name}: {counts[target.name]:,.1f} M instructions to the card", flush=True)
    for target in targets:
        ready = statistics.median(s.ready_ms for s in starts[target.name])
        print(targets_line(target.name, ready, counts.get(target.name)))


def targets_line(name: str, ready_ms: float, instructions_m: float | None) -> str:
    """The start's goals, PASS or FAIL: READY_GOAL_MS, and INSTRUCTIONS_GOAL_M if counted."""
    checks = [(f"ready <= {READY_GOAL_MS} ms", ready_ms <= READY_GOAL_MS)]
    if instructions_m is not None:
        goal = f"instructions to the card <= {INSTRUCTIONS_GOAL_M} M"
        checks.append((goal, instructions_m <= INSTRUCTIONS_GOAL_M))
    said = ", ".join(f"{goal} {'PASS' if met else 'FAIL'}" for goal, met in checks)
    return f"{name} targets: {said}"


if __name__ == "__main__":
    main()
