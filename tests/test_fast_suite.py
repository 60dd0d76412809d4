"""The fast suite's guard (tests/support/fast_suite.py), proved on tests of its own run
inline by pytester: a fast test that starts a process or reaches beyond this machine
fails, saying the marker to add; a slow one may; loopback stays allowed.

No process starts here, nor any connection leaves: the guard refuses each before it is
made, and the slow test raises the audit event itself."""

from __future__ import annotations

import socket

import pytest

from tests.support.fast_suite import is_local

INNER = """
import socket, subprocess, sys
import pytest
import trio

def test_a_process(tmp_path):
    subprocess.run(["touch", str(tmp_path / "started")])

def test_a_process_caught(tmp_path):
    try:
        subprocess.run(["touch", str(tmp_path / "started")])
    except Exception:
        pass  # the code under test swallows the refusal: the test fails all the same

def test_a_trio_process(tmp_path):
    trio.run(trio.run_process, ["touch", str(tmp_path / "started")])

def test_a_connection_elsewhere():
    socket.create_connection(("192.0.2.1", 9), timeout=0.1)  # TEST-NET-1

def test_a_loopback_connection():
    with socket.create_server(("127.0.0.1", 0)) as server:
        socket.create_connection(server.getsockname()).close()

@pytest.fixture
def started():
    subprocess.run(["true"])

def test_a_fixture_that_starts_a_process(started):
    pass

@pytest.mark.slow
def test_a_slow_process():
    sys.audit("subprocess.Popen", "true", ["true"], None, None)
"""


@pytest.fixture
def outcomes(pytester: pytest.Pytester) -> dict[str, str]:
    """Each inner test's name -> "passed", or why it failed."""
    pytester.makeconftest('pytest_plugins = ("tests.support.fast_suite",)')
    pytester.makeini("[pytest]\nmarkers =\n    slow: slow")
    pytester.makepyfile(test_inner=INNER)
    reports = pytester.inline_run("-p", "no:cacheprovider").getreports()
    said: dict[str, str] = {}
    for report in reports:
        name = report.nodeid.rpartition("::")[2]
        if report.failed or name not in said:
            said[name] = str(report.longrepr) if report.failed else "passed"
    assert not list(pytester.path.rglob("started")), "a refused process started"
    return said


def test_a_fast_test_that_starts_a_process_fails_naming_the_marker(
    outcomes: dict[str, str],
) -> None:
    for name in ("test_a_process", "test_a_trio_process", "test_a_fixture_that_starts_a_process"):
        assert "started a process" in outcomes[name], name
        assert "@pytest.mark.slow" in outcomes[name], name


def test_a_refusal_caught_by_the_code_under_test_fails_the_test(outcomes: dict[str, str]) -> None:
    said = outcomes["test_a_process_caught"]
    assert "test_a_process_caught is in the fast suite but started a process" in said
    assert "(subprocess.Popen: touch " in said
    assert "@pytest.mark.slow" in said


def test_a_fast_test_reaches_only_this_machine(outcomes: dict[str, str]) -> None:
    assert "reached beyond this machine" in outcomes["test_a_connection_elsewhere"]
    assert outcomes["test_a_loopback_connection"] == "passed"


def test_a_slow_test_may_start_a_process(outcomes: dict[str, str]) -> None:
    assert outcomes["test_a_slow_process"] == "passed"


@pytest.mark.parametrize(
    ("family", "address", "local"),
    [
        (socket.AF_INET, ("127.0.0.1", 80), True),
        (socket.AF_INET, ("127.9.9.9", 80), True),
        (socket.AF_INET, ("localhost", 80), True),
        (socket.AF_INET, ("0.0.0.0", 80), False),  # every interface
        (socket.AF_INET, ("", 80), False),
        (socket.AF_INET, ("192.0.2.1", 80), False),
        (socket.AF_INET, ("n8n.example", 80), False),
        (socket.AF_INET6, ("::1", 80, 0, 0), True),
        (socket.AF_INET6, ("::ffff:127.0.0.1", 80, 0, 0), True),
        (socket.AF_INET6, ("fe80::1%lo", 80, 0, 0), False),
        (socket.AF_UNIX, "/run/a.sock", True),
        (socket.AF_INET, None, True),  # sendmsg on a connected socket
    ],
)
def test_local_is_loopback_or_a_unix_socket(
    family: socket.AddressFamily, address: object, local: bool
) -> None:
    with socket.socket(family) as sock:
        assert is_local(sock, address) is local
