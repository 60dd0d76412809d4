"""container/build where it cannot build: a clear line, never a half-made image."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

from tests.container.files import ROOT

BUILD = ROOT / "container" / "build"


def _stand_in(folder: Path, name: str) -> None:
    """A command that is there but answers nothing: a docker client with no daemon."""
    command = folder / name
    command.write_text("#!/bin/sh\necho 'Cannot connect to the daemon' >&2\nexit 1\n")
    command.chmod(0o755)


def test_with_no_engine_it_says_what_to_install_in_one_line(tmp_path: Path) -> None:
    for name in ("docker", "podman"):
        _stand_in(tmp_path, name)
    environment = {**os.environ, "PATH": f"{tmp_path}:{os.environ['PATH']}"}
    done = subprocess.run(
        [str(BUILD)], capture_output=True, text=True, env=environment, timeout=60, check=False
    )
    assert done.returncode != 0
    assert done.stdout == "", "no image name: nothing was built"
    [line] = done.stderr.splitlines()
    assert line.startswith("container/build: no container engine runs here: install podman")


def test_help_and_a_second_argument(tmp_path: Path) -> None:
    helped = subprocess.run([str(BUILD), "--help"], capture_output=True, text=True, timeout=60)
    assert helped.returncode == 0 and helped.stdout.startswith("usage: container/build [TAG]")
    refused = subprocess.run([str(BUILD), "a", "b"], capture_output=True, text=True, timeout=60)
    assert refused.returncode == 2 and refused.stderr.startswith("usage:")
