"""Tools the tests install for themselves, each pinned exactly, cached outside the checkout.

An installation (a client of the interop matrix, the certified authorization server) lives
in `${N8N_A2A_CACHE:-~/.cache/n8n-a2a}/clients/<name>-<fingerprint>/`; the fingerprint is
a hash of its pin files and runtime, so a change of pins makes a new one and an unchanged
one is reused. Parallel test runs share the cache: one installer at a time, and a build
that broke off is started again.
"""

from __future__ import annotations

import fcntl
import hashlib
import os
import shutil
import subprocess
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path


def cache_root() -> Path:
    """Where installations are kept."""
    configured = os.environ.get("N8N_A2A_CACHE")
    return (Path(configured) if configured else Path.home() / ".cache" / "n8n-a2a") / "clients"


def fingerprint(*parts: bytes) -> str:
    """A short hash of what an installation is made from (its pins, its runtime)."""
    return hashlib.sha256(b"\0".join(parts)).hexdigest()[:16]


@contextmanager
def exclusive(lock: Path) -> Iterator[None]:
    """One installer at a time per environment (parallel test runs share the cache)."""
    lock.parent.mkdir(parents=True, exist_ok=True)
    with lock.open("w") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        yield


def run(argv: list[str | Path], cwd: Path | None = None) -> str:
    """Run a command to its end; its output, or RuntimeError with all it said."""
    done = subprocess.run(argv, cwd=cwd, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise RuntimeError(
            f"{' '.join(map(str, argv))} exited {done.returncode}:\n{done.stdout}{done.stderr}"
        )
    return done.stdout


def prepared(name: str, fingerprint: str, build: Callable[[Path], None]) -> Path:
    """The cached environment `name`, built first if it is not there whole."""
    target = cache_root() / f"{name}-{fingerprint}"
    marker = target / ".installed"
    if marker.exists():
        return target
    with exclusive(target.with_name(target.name + ".lock")):
        if not marker.exists():
            # Whatever is there is a build that broke off: start again.
            shutil.rmtree(target, ignore_errors=True)
            target.mkdir(parents=True)
            build(target)
            marker.write_text(fingerprint + "\n")
    return target


#: What pins an npm project: `npm ci` installs exactly the lock.
NPM_PINS = ("package.json", "package-lock.json", ".npmrc")


def npm_project(name: str, source: Path, scripts: tuple[str, ...], node_major: int) -> Path:
    """The cached `npm ci` of the project in `source`, with its `scripts` beside its
    node_modules (so that their imports resolve there)."""
    pins = [source / pin for pin in NPM_PINS]

    def build(target: Path) -> None:
        for pin in pins:
            shutil.copy(pin, target / pin.name)
        # npm ci installs exactly the lock and fails if package.json disagrees with it.
        run(["npm", "ci", "--ignore-scripts", "--no-audit", "--no-fund"], cwd=target)

    made_of = fingerprint(*(pin.read_bytes() for pin in pins), str(node_major).encode())
    target = prepared(name, made_of, build)
    # Copied on every use (atomically: parallel runs share the cache) so edits take effect.
    for script in scripts:
        staged = target / f".{script}-{os.getpid()}"
        shutil.copy(source / script, staged)
        staged.replace(target / script)
    return target
