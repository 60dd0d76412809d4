"""A container engine for the tests that run the image: podman or docker, whichever really
runs here (`docker info`, not `command -v`: the client may be there with no daemon).

Where none runs, CI as root installs Debian's podman, buildah and mmdebstrap (what
container/build needs to make the image with no registry), as a fresh CI machine must;
anywhere else the tests skip, saying what to install.
"""

from __future__ import annotations

import json
import os
import subprocess
import time
from dataclasses import dataclass
from typing import Any

import trio

from tests.container.files import ROOT

#: Debian's packages that build and run the image with no registry, with their
#: recommendations (runc named, so that it is podman's runtime: crun stops on the cgroup
#: layout of our machines).
DEBIAN_PACKAGES = ("podman", "buildah", "mmdebstrap", "runc", "uidmap", "fuse-overlayfs")
TAG = "n8n-a2a:test"
#: The figures the image tests measured, one "name: value" a line, printed at the end.
FIGURES: list[str] = []

# What our machines allow a container: the host's network (no namespaced ones) and
# these limits (higher ones are refused). Both change nothing the tests look at.
HOST_OPTIONS = ("--network=host", "--ulimit", "nofile=1024:1024", "--ulimit", "nproc=1024:1024")
#: How the tests run the adapter: as the Kubernetes example does (read-only root, every
#: capability dropped), the user left to the image.
LOCKED_DOWN = ("--read-only", "--cap-drop=ALL")


def _answers(command: str) -> bool:
    try:
        done = subprocess.run([command, "info"], capture_output=True, timeout=120, check=False)
    except (OSError, subprocess.TimeoutExpired):
        return False
    return done.returncode == 0


def running_engine() -> str | None:
    """docker when its daemon answers, else podman when it works, else None."""
    return next((name for name in ("docker", "podman") if _answers(name)), None)


def install_engine() -> str:
    """apt-get install DEBIAN_PACKAGES; what went wrong, or '' when it worked."""
    environment = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    for command in (
        ["apt-get", "update", "-qq"],
        ["apt-get", "install", "-y", "-qq", *DEBIAN_PACKAGES],
    ):
        try:
            subprocess.run(
                command, check=True, capture_output=True, text=True, timeout=900, env=environment
            )
        except (OSError, subprocess.SubprocessError) as error:
            return f"{' '.join(command)} failed: {error} {getattr(error, 'stderr', '')[-800:]}"
    return ""


def engine_or_reason() -> tuple[str | None, str]:
    """The engine to use, or why there is none (after installing one where CI can)."""
    engine = running_engine()
    if engine:
        return engine, ""
    if not (os.environ.get("CI") and os.geteuid() == 0):
        return None, (
            "no container engine runs here (neither `docker info` nor `podman info` "
            f"answers): apt-get install {' '.join(DEBIAN_PACKAGES)} (CI as root does it itself)"
        )
    failure = install_engine()
    engine = running_engine()
    return engine, failure or ("" if engine else "podman installed but `podman info` fails")


@dataclass(frozen=True)
class Built:
    """The image container/build made, and how long that took."""

    tag: str
    seconds: float


def build_image() -> Built:
    """Run container/build TAG: the image's name is its last line."""
    started = time.monotonic()
    done = subprocess.run(
        [str(ROOT / "container" / "build"), TAG],
        capture_output=True,
        text=True,
        timeout=1800,
        check=False,
    )
    seconds = time.monotonic() - started
    lines = done.stdout.strip().splitlines()
    if done.returncode != 0 or not lines:
        raise AssertionError(f"container/build failed ({done.returncode}):\n{done.stderr[-4000:]}")
    assert lines == [TAG], f"container/build printed {lines}, not just the image's name"
    return Built(lines[-1], seconds)


@dataclass(frozen=True)
class Engine:
    """The engine's command line, driven from trio (a stub on the host serves meanwhile)."""

    name: str

    async def run(self, *arguments: str, env: dict[str, str] | None = None) -> str:
        """`ENGINE ARGUMENTS`, its stdout; an AssertionError with its stderr if it fails."""
        done = await trio.run_process(
            [self.name, *arguments],
            capture_stdout=True,
            capture_stderr=True,
            check=False,
            env=env,
        )
        stdout: str = done.stdout.decode(errors="replace")
        assert done.returncode == 0, (arguments, done.returncode, done.stderr.decode()[-3000:])
        return stdout

    async def start(self, image: str, variables: dict[str, str], *options: str) -> str:
        """Start the image detached with `variables` (passed by name: a value may hold a
        newline, which --env-file cannot); the container's id."""
        names = [word for name in variables for word in ("-e", name)]
        environment = {**os.environ, **variables}
        started = await self.run(
            "run", "-d", *HOST_OPTIONS, *options, *names, image, env=environment
        )
        return started.strip().splitlines()[-1]

    async def wait(self, container: str) -> int:
        """Until the container exits; its exit code."""
        return int((await self.run("wait", container)).split()[0])

    async def logs(self, container: str) -> str:
        """What the container wrote, stdout then stderr (the engine's own messages are not
        in it)."""
        done = await trio.run_process(
            [self.name, "logs", container], capture_stdout=True, capture_stderr=True, check=False
        )
        return (done.stdout + done.stderr).decode(errors="replace")

    async def inspect(self, *what: str) -> Any:
        """`ENGINE inspect WHAT`, parsed."""
        [found] = json.loads(await self.run("inspect", *what))
        return found

    async def healthcheck(self, container: str) -> int:
        """The image's HEALTHCHECK run once in the container, as the engine runs it; its
        exit code (podman has `healthcheck run`; docker only schedules it, so its command
        is run with exec)."""
        if self.name == "podman":
            command = ["healthcheck", "run", container]
        else:
            test = (await self.inspect(container))["Config"]["Healthcheck"]["Test"]
            assert test[0] == "CMD", test
            command = ["exec", container, *test[1:]]
        done = await trio.run_process(
            [self.name, *command], capture_stdout=True, capture_stderr=True, check=False
        )
        return done.returncode

    async def remove(self, container: str) -> None:
        await trio.run_process(
            [self.name, "rm", "-f", container],
            capture_stdout=True,
            capture_stderr=True,
            check=False,
        )
