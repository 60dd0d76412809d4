"""The `n8n-a2a` command: its help and version, and what a person starting it sees when it
cannot start, or should think twice."""

from __future__ import annotations

import gc
import json
import socket
import subprocess
import sys
import tomllib
from collections.abc import Callable
from importlib.metadata import version
from pathlib import Path

import pytest
import trio

import n8n_a2a.__main__ as command
from n8n_a2a import __version__
from n8n_a2a.__main__ import main
from n8n_a2a.config import VARIABLES
from tests.support.environments import GOOD, OIDC

REQUIRED = [v.name for v in VARIABLES if v.required]


def test_an_address_in_use_is_one_line_and_exit_code_3() -> None:
    with socket.socket() as holder:
        holder.bind(("127.0.0.1", 0))
        holder.listen()
        port = holder.getsockname()[1]
        done = subprocess.run(
            [sys.executable, "-m", "n8n_a2a"],
            env={
                "PATH": "/usr/bin:/bin",
                **GOOD,
                "ADAPTER_HOST": "127.0.0.1",
                "ADAPTER_PORT": str(port),
                "ADAPTER_LOG_FORMAT": "text",
            },
            capture_output=True,
            text=True,
            timeout=60,
        )
    assert done.returncode == 3
    assert done.stderr.strip().splitlines() == [
        f"n8n-a2a: cannot listen on 127.0.0.1:{port} (ADAPTER_HOST, ADAPTER_PORT): "
        "address already in use"
    ]


def test_an_address_not_on_this_machine_is_one_line_and_exit_code_3() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "n8n_a2a"],
        # TEST-NET-1 (RFC 5737): assigned to no interface here.
        env={"PATH": "/usr/bin:/bin", **GOOD, "ADAPTER_HOST": "192.0.2.1", "ADAPTER_PORT": "0"},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 3
    [line] = done.stderr.strip().splitlines()
    assert line.startswith("n8n-a2a: cannot listen on 192.0.2.1:0 (ADAPTER_HOST, ADAPTER_PORT): ")
    assert "Traceback" not in done.stderr


def _run(*args: str, environ: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "n8n_a2a", *args],
        env={"PATH": "/usr/bin:/bin", **environ},
        capture_output=True,
        text=True,
        timeout=60,
    )


def test_the_command_exits_2_with_one_line_naming_the_variable() -> None:
    environ = {k: v for k, v in GOOD.items() if k != "ADAPTER_WEBHOOK_URL"}
    done = _run(environ=environ)
    assert done.returncode == 2
    assert done.stderr.strip().splitlines() == [
        "n8n-a2a: configuration error: ADAPTER_WEBHOOK_URL: is required and must not be empty"
    ]
    assert "Traceback" not in done.stderr


def test_the_probe_says_a_webhook_out_of_reach_and_exits_1() -> None:
    environ = {**GOOD, "ADAPTER_WEBHOOK_URL": "http://127.0.0.1:9/webhook/supply"}
    done = _run("--probe", environ=environ)
    assert done.returncode == 1
    assert done.stdout.startswith(
        "n8n-a2a: probe of ADAPTER_WEBHOOK_URL http://127.0.0.1:9/webhook/supply: "
        "could not reach it: ConnectError"
    )
    assert "Traceback" not in done.stderr


def test_mistakes_that_load_are_warned_of_and_the_card_still_printed() -> None:
    environ = {
        **GOOD,
        "ADAPTER_WEBHOOK_URL": "http://127.0.0.1:5678/webhook-test/supply",
        "ADAPTER_WEBHOK_TIMEOUT": "5",
    }
    done = _run("--check", environ=environ)
    assert done.returncode == 0
    assert [line.split(":", 3)[2].strip() for line in done.stderr.splitlines()] == [
        "ADAPTER_WEBHOOK_URL",
        "ADAPTER_WEBHOK_TIMEOUT",
    ]
    assert done.stderr.startswith("n8n-a2a: warning: ADAPTER_WEBHOOK_URL: is n8n's test URL")
    assert '"name": "Supply agent"' in done.stdout


def test_a_retired_variable_stops_the_start_with_one_line_saying_what_replaces_it() -> None:
    done = _run("--check", environ={**GOOD, "ADAPTER_MAX_STORED_TEXT": "8192"})
    assert done.returncode == 2
    [line] = done.stderr.strip().splitlines()
    assert line.startswith("n8n-a2a: configuration error: ADAPTER_MAX_STORED_TEXT: is retired")
    assert "ADAPTER_MEMORY_BUDGET" in line
    assert done.stdout == ""


def test_help_shows_both_payload_bounds_with_their_defaults(
    capsys: pytest.CaptureFixture[str],
) -> None:
    with pytest.raises(SystemExit):
        main(["--help"])
    shown = capsys.readouterr().out
    for name in ("ADAPTER_MAX_BODY_BYTES", "ADAPTER_MAX_REPLY_BYTES"):
        [line] = [line for line in shown.splitlines() if line.startswith(f"  {name}")]
        assert "(default 33554432)" in line, line  # 32 MiB: a 20 MiB file as base64, and room
    assert "ADAPTER_MAX_STORED_TEXT" not in shown


def test_an_empty_environment_gets_a_line_per_required_variable_at_once() -> None:
    done = _run("--check", environ={})
    assert done.returncode == 2
    assert done.stderr.strip().splitlines() == [
        f"n8n-a2a: configuration error: {name}: is required and must not be empty"
        for name in REQUIRED
    ]
    assert done.stdout == ""


def test_check_prints_the_card_and_exits() -> None:
    done = _run("--check", environ=GOOD)
    assert done.returncode == 0, done.stderr
    assert '"name": "Supply agent"' in done.stdout
    assert '"url": "http://supply.agents.svc:8080/a2a"' in done.stdout
    assert done.stderr == ""


def test_a_card_naming_this_machine_on_another_port_is_a_warning_not_an_error() -> None:
    done = _run("--check", environ={**GOOD, "ADAPTER_PUBLIC_URL": "http://127.0.0.1:9090/"})
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["url"] == "http://127.0.0.1:9090/"
    [line] = done.stderr.splitlines()
    assert line.startswith(
        "n8n-a2a: warning: ADAPTER_PUBLIC_URL: names port 9090 on this machine, but the adapter "
        "listens on ADAPTER_PORT 8080: "
    )


WITHOUT_JWT = "import sys; sys.modules['jwt'] = None; from n8n_a2a.__main__ import main; main()"


def test_the_base_install_serves_without_the_extra_and_says_when_it_is_needed() -> None:
    checked = subprocess.run(
        [sys.executable, "-c", WITHOUT_JWT, "--check"],
        env={"PATH": "/usr/bin:/bin", **GOOD},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert checked.returncode == 0, checked.stderr
    refused = subprocess.run(
        [sys.executable, "-c", WITHOUT_JWT],
        env={"PATH": "/usr/bin:/bin", **GOOD, **OIDC},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert refused.returncode == 2
    assert refused.stderr.strip().splitlines() == [
        "n8n-a2a: configuration error: ADAPTER_OIDC_ISSUER: verifying tokens needs the oidc "
        "extra: pip install 'n8n-a2a[oidc]'"
    ]


@pytest.fixture
def broken_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    """An environment load_settings would refuse: --help and --version must not read it."""
    for variable in VARIABLES:
        monkeypatch.delenv(variable.name, raising=False)
    monkeypatch.setenv("ADAPTER_PORT", "http")


@pytest.mark.usefixtures("broken_environment")
def test_help_lists_every_variable_whether_required_and_its_default(
    capsys: pytest.CaptureFixture[str],
) -> None:
    with pytest.raises(SystemExit) as exited:
        main(["--help"])
    assert exited.value.code == 0
    lines = capsys.readouterr().out.splitlines()
    optional = lines.index("optional environment variables:")
    assert lines[optional - len(REQUIRED) - 1] == "required environment variables:"
    listed = {
        line.split()[0]: (number, line)
        for number, line in enumerate(lines)
        if line.startswith("  ADAPTER_")
    }
    assert list(listed) == REQUIRED + [v.name for v in VARIABLES if not v.required]
    for variable in VARIABLES:
        number, line = listed[variable.name]
        assert (number > optional) is not variable.required, line
        assert variable.summary in line
        assert (f"(default {variable.shown_default})" in line) is bool(variable.shown_default)
    assert max(len(line) for line in lines) <= 100


@pytest.mark.usefixtures("broken_environment")
def test_version_prints_the_package_version(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exited:
        main(["--version"])
    assert exited.value.code == 0
    assert capsys.readouterr().out == f"n8n-a2a {__version__}\n"


def test_the_version_is_the_one_pyproject_and_the_installed_metadata_give() -> None:
    """n8n_a2a.__version__ is written out, not read from the metadata at every start."""
    pyproject = tomllib.loads((Path(__file__).parent.parent / "pyproject.toml").read_text())
    assert __version__ == pyproject["project"]["version"] == version("n8n-a2a")


def test_the_package_imports_no_metadata_reader_for_its_version() -> None:
    """importlib.metadata (email, zipfile, and a walk over sys.path) is no part of a start."""
    code = "import sys, n8n_a2a; print('importlib.metadata' in sys.modules)"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout == "False\n"


def test_the_commands_imports_run_with_no_pass_of_the_collector_and_are_frozen() -> None:
    """They make some 45,000 objects that live as long as the process: no young pass each
    700 of them, no older one over all made so far, nor one over them all; frozen after
    them, the collector as it was (main() tunes it)."""
    code = (
        "import gc, n8n_a2a\n"
        "gc.collect()  # none due on the way to the command's first line\n"
        "before, passes = gc.get_threshold(), []\n"
        "gc.callbacks.append(lambda phase, info: passes.append(info) if phase == 'start' else 0)\n"
        "import n8n_a2a.__main__\n"
        "print(len(passes), gc.get_threshold() == before, gc.isenabled(), gc.get_freeze_count())\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    passes, same, enabled, frozen = done.stdout.split()
    assert (passes, same, enabled) == ("0", "True", "True") and int(frozen) > 20_000, done.stdout


#: The command started until it listens, the collector's passes on the way counted; then
#: what it froze, and out.
UNTIL_LISTENING = """
import gc, os, n8n_a2a
gc.collect()  # none due on the way to the command's first line
passes = []
gc.callbacks.append(lambda phase, info: passes.append(info) if phase == "start" else 0)
import n8n_a2a.__main__ as command

listening = command.FreezeWhenListening.started


def started(self, value=None):
    listening(self, value)
    print(len(passes), gc.get_freeze_count(), flush=True)
    os._exit(0)


command.FreezeWhenListening.started = started
command.main([])
"""


def test_no_pass_of_the_collector_scans_the_start_before_it_is_frozen() -> None:
    """A young pass over what the start made cost 3 % of its instructions: its cyclic
    garbage (0.2 MiB) is frozen with the rest, the imports' after them, what main()
    made once the command listens."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    environment = {"PATH": "/usr/bin:/bin", **GOOD, "ADAPTER_PORT": str(port)}
    done = subprocess.run(
        [sys.executable, "-c", UNTIL_LISTENING],
        env={**environment, "ADAPTER_HOST": "127.0.0.1"},
        capture_output=True,
        text=True,
        timeout=60,
    )
    passes, frozen = done.stdout.split()
    assert int(passes) == 0 and int(frozen) > 20_000, done.stdout + done.stderr


def test_a_start_without_arguments_imports_no_parser() -> None:
    """argparse (and gettext with it) is for a command line that has options."""
    code = (
        "import sys, trio\n"
        "trio.run = lambda *_, **__: print(sorted({'argparse', 'gettext'} & set(sys.modules)))\n"
        "from n8n_a2a.__main__ import main\n"
        "main([])\n"
    )
    environment = {"PATH": "/usr/bin:/bin", **GOOD, "ADAPTER_LOG_FORMAT": "text"}
    done = subprocess.run(
        [sys.executable, "-c", code], env=environment, capture_output=True, text=True, check=True
    )
    assert done.stdout == "[]\n", done.stderr
    assert vars(command.parser().parse_args([])) == vars(command.NO_ARGUMENTS)


def run_main_serving_with(monkeypatch: pytest.MonkeyPatch, run: Callable[..., object]) -> None:
    """main() with a good environment, `run` in trio.run's place; the collector's
    thresholds, which main() sets for the whole process, set back after."""
    for name, value in GOOD.items():
        monkeypatch.setenv(name, value)
    monkeypatch.setattr(command, "configure_logging", lambda *_: None)
    monkeypatch.setattr(trio, "run", run)
    before = gc.get_threshold()
    try:
        main([])
    finally:
        gc.set_threshold(*before)


def test_the_collector_is_tuned_before_the_adapter_serves(monkeypatch: pytest.MonkeyPatch) -> None:
    before = gc.get_threshold()
    served_with: list[tuple[int, ...]] = []
    run_main_serving_with(monkeypatch, lambda *_: served_with.append(gc.get_threshold()))
    assert served_with == [(command.YOUNG_GENERATION, *before[1:])]


def test_what_the_start_made_is_frozen_once_the_command_listens(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """serve() gets a task status whose started() moves every object the collector tracks
    into its permanent generation: no full pass after scans what the start made."""
    statuses: list[object] = []
    run_main_serving_with(
        monkeypatch, lambda serving: statuses.append(serving.keywords["task_status"])
    )
    [status] = statuses
    assert isinstance(status, command.FreezeWhenListening)
    gc.unfreeze()  # what importing the command froze: this process's
    try:
        status.started(["http://127.0.0.1:8000/"])
        assert gc.get_freeze_count() > 10_000
    finally:
        gc.unfreeze()
