"""The checkout's commands (scripts/, n8n/run, bench/run): what they do before any real work.

Each runs for real, from a copy where the tools it would hand the work to are stand-ins
that write down how they were called: no test here installs anything.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

CHECKOUT = Path(__file__).resolve().parents[1]
BASH = shutil.which("bash") or "/bin/bash"


def stand_in(path: Path, log: Path, *, exit_code: int = 0) -> None:
    """An executable that appends its name, its arguments and PYTHONWARNINGS to `log`."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(
        f'#!/bin/sh\necho "$0 $* [PYTHONWARNINGS=$PYTHONWARNINGS]" >>{log}\nexit {exit_code}\n'
    )
    path.chmod(0o755)


def tools(folder: Path, *names: str) -> Path:
    """A PATH folder holding only these tools of this machine's."""
    folder.mkdir(parents=True, exist_ok=True)
    for name in names:
        found = shutil.which(name)
        assert found, f"{name} is needed to run this test"
        (folder / name).symlink_to(found)
    return folder


def run(command: list[str], cwd: Path, environ: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [BASH, *command], cwd=cwd, env=environ, capture_output=True, text=True, timeout=60
    )


def calls(log: Path) -> list[str]:
    return log.read_text().splitlines() if log.exists() else []


# --- scripts/venv ---------------------------------------------------------------------------


def test_venv_reinstalls_only_when_pyproject_changes_and_without_the_editable_warning(
    tmp_path: Path,
) -> None:
    checkout, log = tmp_path / "checkout", tmp_path / "log"
    (checkout / "scripts").mkdir(parents=True)
    shutil.copy(CHECKOUT / "scripts" / "venv", checkout / "scripts" / "venv")
    shutil.copy(CHECKOUT / "pyproject.toml", checkout / "pyproject.toml")
    stand_in(checkout / ".venv" / "bin" / "python", log)
    environ = {"PATH": os.environ["PATH"]}

    for _ in range(2):
        done = run(["scripts/venv"], checkout, environ)
        assert done.returncode == 0, done.stderr
    [install] = calls(log)
    assert "-m pip install --quiet --disable-pip-version-check -e .[test]" in install
    assert "[PYTHONWARNINGS=ignore:Editable installation]" in install

    with (checkout / "pyproject.toml").open("a") as pyproject:
        pyproject.write("# a change\n")
    assert run(["scripts/venv"], checkout, environ).returncode == 0
    assert len(calls(log)) == 2


# --- scripts/test ---------------------------------------------------------------------------


def fake_checkout_for_scripts_test(root: Path, log: Path) -> Path:
    (root / "scripts").mkdir(parents=True)
    shutil.copy(CHECKOUT / "scripts" / "test", root / "scripts" / "test")
    stand_in(root / "scripts" / "venv", log)
    stand_in(root / "n8n" / "run", log)
    for tool in ("ruff", "mypy", "pytest", "python"):
        stand_in(root / ".venv" / "bin" / tool, log)
    return root


def test_skipping_the_e2e_tests_skips_the_n8n_install(tmp_path: Path) -> None:
    log = tmp_path / "log"
    checkout = fake_checkout_for_scripts_test(tmp_path / "checkout", log)
    environ = {"PATH": os.environ["PATH"]}

    done = run(["scripts/test", "-q"], checkout, {**environ, "N8N_A2A_SKIP_E2E": "1"})
    assert done.returncode == 0, done.stderr
    ran = [line.removeprefix(f"{checkout}/") for line in calls(log)]
    assert not [line for line in ran if line.startswith("n8n/run")]
    assert [line for line in ran if line.startswith(".venv/bin/pytest")]

    log.unlink()
    assert run(["scripts/test", "-q"], checkout, environ).returncode == 0
    ran = [line.removeprefix(f"{checkout}/") for line in calls(log)]
    assert [line for line in ran if line.startswith("n8n/run install")]


# --- n8n/run --------------------------------------------------------------------------------


def test_n8n_run_help_prints_the_usage_and_does_nothing(tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    for flag in ("--help", "-h"):
        done = run(
            [str(CHECKOUT / "n8n" / "run"), flag],
            tmp_path,
            {"PATH": os.environ["PATH"], "N8N_A2A_CACHE": str(cache)},
        )
        assert (done.returncode, done.stderr) == (0, "")
        lines = done.stdout.splitlines()
        assert lines[0].startswith("n8n/run - a real n8n")
        assert "  n8n/run install" in done.stdout
        assert "g++" in done.stdout
        assert not any(line.startswith("#") for line in lines)
    assert not cache.exists()


def test_n8n_run_without_a_command_prints_the_commands_and_exits_2(tmp_path: Path) -> None:
    environ = {"PATH": os.environ["PATH"], "HOME": str(tmp_path)}
    done = run([str(CHECKOUT / "n8n" / "run")], tmp_path, environ)
    assert done.returncode == 2
    assert [line.split()[:2] for line in done.stderr.splitlines()] == [
        ["n8n/run", "install"],
        ["n8n/run", "start"],
        ["n8n/run", "stop"],
        ["n8n/run", "--help"],
    ]


def test_n8n_install_names_a_missing_compiler_before_it_starts(tmp_path: Path) -> None:
    log, cache = tmp_path / "log", tmp_path / "cache"
    bin_folder = tools(tmp_path / "bin", "dirname", "sed", "date", "make", "python3")
    stand_in(bin_folder / "npm", log)  # never a real install, whatever the script does
    done = run(
        [str(CHECKOUT / "n8n" / "run"), "install"],
        tmp_path,
        {"PATH": str(bin_folder), "N8N_A2A_CACHE": str(cache)},
    )
    assert done.returncode == 1
    [line] = done.stderr.splitlines()
    assert line.startswith("n8n/run: install needs npm, g++, make and python3")
    assert line.endswith("missing: g++. On Debian or Ubuntu: apt-get install g++")
    assert calls(log) == []
    assert not cache.exists()


# --- bench/run ------------------------------------------------------------------------------


def test_bench_help_prints_every_option_and_installs_nothing(tmp_path: Path) -> None:
    log, cache = tmp_path / "log", tmp_path / "cache"
    # No wrk on this PATH: before it printed help, bench/run went to install it.
    bin_folder = tools(tmp_path / "bin", "dirname", "id")
    stand_in(bin_folder / "apt-get", log, exit_code=1)
    done = run(
        [str(CHECKOUT / "bench" / "run"), "--help"],
        tmp_path,
        {"PATH": str(bin_folder), "N8N_A2A_CACHE": str(cache), "PYTHON": sys.executable},
    )
    assert (done.returncode, done.stderr) == (0, "")
    assert done.stdout.startswith("usage: bench/run ")
    assert "--delay DELAY" in done.stdout
    assert calls(log) == []
    assert not cache.exists()
