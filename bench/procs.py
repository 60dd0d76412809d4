"""Processes on this machine: pinning to a core, CPU and memory read from /proc, stopping."""

from __future__ import annotations

import os
import resource
import signal
import socket
import subprocess
import time
from collections.abc import Sequence
from pathlib import Path


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
