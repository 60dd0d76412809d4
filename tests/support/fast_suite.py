"""The fast suite's rule, enforced: a test not marked `slow` starts no process and reaches
no address but this machine's own (127.0.0.0/8, ::1, a Unix socket). A pytest plugin
(tests/conftest.py loads it).

Python's audit hooks see every start of a process and every socket's connect, bind and
send, whichever library makes them (subprocess, trio.run_process, asyncio, os.fork,
httpx, a C extension through CPython's socket module), and once added they cannot be
removed: no new helper, import or alias walks around the rule, as it would around a list
of forbidden imports. The refused operation raises, so no process starts; and the test's
report fails even where the code under test swallowed the exception.

Loopback stays allowed: the in-process adapter and stub webhook (the `start_adapter`
and `stub` fixtures) listen on 127.0.0.1 in the test's own process, start in
milliseconds and need nothing installed. A PostgreSQL on 127.0.0.1 is its own process:
starting it is refused, so its fixtures mark their tests slow.

A setup and a call are watched, a teardown not: a session's PostgreSQL or n8n stops in
the teardown of whichever test runs last, fast or slow. A name's lookup is not refused
(trio asks getaddrinfo for a number first, and the audit event does not say which); the
connect to the address it found is.
"""

from __future__ import annotations

import _posixsubprocess
import ipaddress
import socket
import sys
from collections.abc import Callable, Generator, Iterator
from dataclasses import dataclass, field
from typing import Any

import pytest

#: The audit events that start a process (or replace this one); the last is this module's
#: own, raised by its wrapper of _posixsubprocess.fork_exec below.
PROCESS_EVENTS = frozenset(
    {
        "subprocess.Popen",
        "os.system",
        "os.exec",
        "os.posix_spawn",
        "os.spawn",
        "os.fork",
        "os.forkpty",
        "fast_suite.fork_exec",
    }
)
#: The audit events that reach an address: their arguments are (socket, address).
SOCKET_EVENTS = frozenset({"socket.connect", "socket.bind", "socket.sendto", "socket.sendmsg"})
HOW_TO_MARK = (
    "mark the test @pytest.mark.slow, or list the fixture that does it in "
    "tests/conftest.py's MARKERS_BY_FIXTURE, or move the test to a slow folder "
    "(MARKERS_BY_PATH)"
)


class NotInTheFastSuite(Exception):
    """Raised in place of the operation a fast test may not make (not an OSError: code
    that handles a refused connection must not take this for one)."""


@dataclass(eq=False)  # told apart by identity: a nested run may watch a test of the same name
class Watch:
    """One test's run: whether the rule holds for it, and what it was refused."""

    test: str
    enforced: bool
    refused: list[str] = field(default_factory=list)


#: The tests running, innermost last: pytester's inline runs nest a session in a test.
WATCHING: list[Watch] = []


def is_local(sock: socket.socket, address: Any) -> bool:
    """Whether `address` is this machine's own: any non-IP family (a Unix socket), or an IP
    address on loopback. A bind to "" or 0.0.0.0 listens on every interface: not local."""
    if sock.family not in (socket.AF_INET, socket.AF_INET6) or address is None:
        return True  # None: a sendmsg on a connected socket, its connect already judged
    host = str(address[0]).partition("%")[0]  # an IPv6 scope ("fe80::1%eth0") is no part
    if host == "localhost":
        return True
    try:
        ip = ipaddress.ip_address(host)
    except ValueError:  # a name to resolve: somewhere else, as far as the rule knows
        return False
    mapped = getattr(ip, "ipv4_mapped", None)  # ::ffff:127.0.0.1
    return ip.is_loopback or (mapped is not None and mapped.is_loopback)


def refusal(event: str, args: tuple[Any, ...]) -> str | None:
    """What a fast test may not do, said; None for what it may."""
    if event in PROCESS_EVENTS:
        return f"started a process ({event}: {shown(args)})"
    if event in SOCKET_EVENTS and not is_local(args[0], args[1]):
        return f"reached beyond this machine ({event} to {args[1]!r})"
    return None


def shown(args: tuple[Any, ...]) -> str:
    """The command of a process event, short: (executable, argv, ...) for most of them."""
    argv = next((a for a in args if isinstance(a, list | tuple)), args)
    text = " ".join(map(str, argv))
    return text if len(text) <= 120 else text[:117] + "..."


def audit(event: str, args: tuple[Any, ...]) -> None:
    """The audit hook: runs for every audited event in the process, so it returns at once
    for all but the few it watches."""
    if not WATCHING or (event not in PROCESS_EVENTS and event not in SOCKET_EVENTS):
        return
    watch = WATCHING[-1]
    if watch.enforced and (why := refusal(event, args)) is not None:
        watch.refused.append(why)
        raise NotInTheFastSuite(f"{watch.test} is in the fast suite but {why}: {HOW_TO_MARK}")


def audited(fork_exec: Callable[..., int]) -> Callable[..., int]:
    """_posixsubprocess.fork_exec with an audit event: multiprocessing's spawn and forkserver
    start their processes through it and raise none of their own (subprocess.Popen raises
    its own first, then comes here too)."""

    def fork_exec_audited(*args: Any, **kwargs: Any) -> int:
        sys.audit("fast_suite.fork_exec", args[0] if args else ())
        return fork_exec(*args, **kwargs)

    return fork_exec_audited


sys.addaudithook(audit)
_posixsubprocess.fork_exec = audited(_posixsubprocess.fork_exec)


#: What a test was refused in its setup or call, kept for its report.
REFUSED = pytest.StashKey[list[str]]()


def watched(item: pytest.Item) -> Iterator[None]:
    """Watch one phase of a test: the body of the setup and call hooks below."""
    watch = Watch(item.nodeid, enforced=item.get_closest_marker("slow") is None)
    WATCHING.append(watch)
    try:
        yield
    finally:
        WATCHING.remove(watch)
        item.stash.setdefault(REFUSED, []).extend(watch.refused)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_setup(item: pytest.Item) -> Iterator[None]:
    yield from watched(item)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item: pytest.Item) -> Iterator[None]:
    yield from watched(item)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(
    item: pytest.Item,
) -> Generator[None, pytest.TestReport, pytest.TestReport]:
    """A refused test fails, though the code under test caught the exception."""
    report = yield
    refused = item.stash.get(REFUSED, [])
    if refused:
        said = "\n".join(f"{item.nodeid} is in the fast suite but {why}" for why in refused)
        said += f"\n{HOW_TO_MARK}"
        if not report.failed:
            report.outcome = "failed"
            report.longrepr = said
        elif NotInTheFastSuite.__name__ not in str(report.longrepr):
            report.sections.append(("fast suite", said))  # it failed otherwise: say both
        refused.clear()
    return report
