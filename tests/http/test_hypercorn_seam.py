"""The hypercorn API the seam relies on, pinned: a hypercorn release that changes a name,
a signature or the stream its per-connection server takes fails here, saying what
changed, instead of failing connections at run time. (The seam's behaviour is tested
over sockets in tests/integration/test_connections.py.)"""

from __future__ import annotations

import ast
import dataclasses
import importlib
import importlib.metadata
import inspect
from collections.abc import Callable
from pathlib import Path

import pytest

import n8n_a2a.http
from n8n_a2a.http import hypercorn_seam
from n8n_a2a.http.connection import Connection

HYPERCORN = importlib.metadata.version("hypercorn")
PACKAGE = Path(n8n_a2a.__file__).parent
SEAM = Path(n8n_a2a.http.__file__).parent / "hypercorn_seam.py"
#: The protocol the seam puts in place of hypercorn's H11Protocol: the seam's other half.
PROTOCOL = Path(n8n_a2a.http.__file__).parent / "protocol.py"
# hypercorn's own names are imported inside the tests that use them: a name that is gone
# fails its test, not the collection of every test here.

#: hypercorn's modules any module may import: its public Config and the ASGI types.
PUBLIC = {"hypercorn.config", "hypercorn.typing"}

#: Every name the seam imports from hypercorn, by module.
IMPORTED = {
    "hypercorn.app_wrappers": {"ASGIWrapper"},
    "hypercorn.config": {"Config", "Sockets"},
    "hypercorn.events": {"Closed", "Event", "RawData", "Updated"},
    "hypercorn.protocol.h11": {"H11Protocol"},  # to check it is ours (hypercorn_h11.py)
    "hypercorn.trio.lifespan": {"Lifespan"},
    "hypercorn.trio.tcp_server": {"MAX_RECV", "TCPServer"},
    "hypercorn.trio.worker_context": {"TrioSingleTask", "WorkerContext"},
    "hypercorn.typing": {"AppWrapper", "ASGIFramework", "LifespanState", "TaskGroup"},
    "hypercorn.utils": {"repr_socket_addr"},
}

#: Every name the protocol imports from hypercorn, by module.
PROTOCOL_IMPORTED = {
    "hypercorn.config": {"Config"},
    "hypercorn.events": {"Closed", "Event", "RawData", "Updated"},
    "hypercorn.typing": {"AppWrapper", "ConnectionState", "TaskGroup", "WorkerContext"},
}

#: What the seam calls, as it calls it: the parameters in order (`*` before the keyword-only
#: ones; `self` left out) and whether the call is awaited.
CALLED = {
    ("hypercorn.trio.tcp_server", "TCPServer"): ("app, config, context, state, stream", False),
    ("hypercorn.trio.tcp_server", "TCPServer.run"): ("", True),
    ("hypercorn.trio.tcp_server", "TCPServer.protocol_send"): ("event", True),
    ("hypercorn.trio.worker_context", "WorkerContext"): ("max_requests", False),
    ("hypercorn.trio.worker_context", "TrioSingleTask"): ("", False),
    ("hypercorn.trio.worker_context", "TrioSingleTask.restart"): ("task_group, action", True),
    ("hypercorn.trio.lifespan", "Lifespan"): ("app, config, state", False),
    ("hypercorn.trio.lifespan", "Lifespan.handle_lifespan"): ("*, task_status", True),
    ("hypercorn.trio.lifespan", "Lifespan.wait_for_startup"): ("", True),
    ("hypercorn.trio.lifespan", "Lifespan.wait_for_shutdown"): ("", True),
    ("hypercorn.app_wrappers", "ASGIWrapper"): ("app", False),
    ("hypercorn.utils", "repr_socket_addr"): ("family, address", False),
    # Overridden by ServedConfig, which calls it once a second.
    ("hypercorn.config", "Config.response_headers"): ("protocol", False),
    # The protocol's (protocol.py): each request's app run in the connection's task group.
    ("hypercorn.trio.task_group", "TaskGroup.spawn"): ("func, args", False),
    ("hypercorn.trio.worker_context", "WorkerContext.mark_request"): ("", True),
    ("hypercorn.logging", "Logger.exception"): ("message, args, kwargs", True),
}


def hypercorn_imports(source: str) -> dict[str, set[str]]:
    """The names a module's source imports from hypercorn, by module."""
    found: dict[str, set[str]] = {}
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("hypercorn"):
            found.setdefault(node.module or "", set()).update(a.name for a in node.names)
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.startswith("hypercorn"):
                    found.setdefault(alias.name, set())
    return found


def parameters(target: Callable[..., object]) -> str:
    """The target's parameters as the table above spells them."""
    spelled: list[str] = []
    for parameter in inspect.signature(target).parameters.values():
        if parameter.name == "self":
            continue
        if parameter.kind is inspect.Parameter.KEYWORD_ONLY and "*" not in spelled:
            spelled.append("*")
        spelled.append(parameter.name)
    return ", ".join(spelled)


def resolve(module: str, qualname: str) -> object:
    found: object = importlib.import_module(module)
    for name in qualname.split("."):
        found = getattr(found, name)
    return found


def test_the_seam_imports_from_hypercorn_only_what_is_pinned_here() -> None:
    assert hypercorn_imports(SEAM.read_text()) == IMPORTED
    assert hypercorn_imports(PROTOCOL.read_text()) == PROTOCOL_IMPORTED


def test_no_other_module_imports_hypercorn_beyond_its_config_and_types() -> None:
    beyond = {
        f"{path.relative_to(PACKAGE.parent)}: {module}"
        for path in PACKAGE.rglob("*.py")
        if path not in (SEAM, PROTOCOL)
        for module in hypercorn_imports(path.read_text())
        if module not in PUBLIC
    }
    assert beyond == set()


def test_every_name_the_seam_imports_is_there() -> None:
    missing = [
        f"{module}.{name}"
        for module, names in [*IMPORTED.items(), *PROTOCOL_IMPORTED.items()]
        for name in sorted(names)
        if not hasattr(importlib.import_module(module), name)
    ]
    assert missing == [], f"hypercorn {HYPERCORN} no longer has {', '.join(missing)}"


def test_everything_the_seam_calls_keeps_its_signature() -> None:
    changed = []
    for (module, qualname), (expected, awaited) in CALLED.items():
        target = resolve(module, qualname)
        assert callable(target), f"{module}.{qualname} is no longer callable"
        found = parameters(target)
        if found != expected:
            changed.append(f"{module}.{qualname} takes ({found}), the seam passes ({expected})")
        if inspect.iscoroutinefunction(target) != awaited:
            changed.append(f"{module}.{qualname} is {'no longer' if awaited else 'now'} async")
    assert changed == [], f"hypercorn {HYPERCORN} changed: " + "; ".join(changed)


def test_what_the_seam_reads_and_sets_is_there() -> None:
    from hypercorn.config import Config, Sockets
    from hypercorn.trio.worker_context import WorkerContext

    assert "insecure_sockets" in {field.name for field in dataclasses.fields(Sockets)}
    assert isinstance(Config().graceful_timeout, float)
    terminated = WorkerContext(None).terminated
    assert inspect.iscoroutinefunction(terminated.set), "context.terminated.set is not async"
    assert parameters(terminated.set) == ""


def test_the_per_connection_server_takes_our_stream_as_plain_tcp() -> None:
    from hypercorn.trio.tcp_server import TCPServer

    # TCPServer tells TLS from plain TCP by whether the stream has `do_handshake`, and
    # takes the addresses of a plain one from its `socket`.
    run = inspect.getsource(TCPServer.run)
    assert "await self.stream.do_handshake()" in run, f"hypercorn {HYPERCORN} changed TLS"
    assert "except AttributeError:" in run, f"hypercorn {HYPERCORN} tells TLS apart otherwise"
    assert "socket = self.stream.socket" in run, f"hypercorn {HYPERCORN} finds the socket otherwise"
    assert not hasattr(Connection, "do_handshake")
    assert isinstance(inspect.getattr_static(Connection, "socket"), property)


def test_the_per_connection_server_makes_its_protocol_once_as_it_runs() -> None:
    from hypercorn.protocol import ProtocolWrapper
    from hypercorn.trio.tcp_server import TCPServer

    # The seam's TCPServer forgets its protocol once run has returned (an instance
    # attribute): TCPServer must only declare it in __init__, and assign it once in run.
    assert "self.protocol: ProtocolWrapper\n" in inspect.getsource(TCPServer.__init__)
    run = inspect.getsource(TCPServer.run)
    assert run.count("self.protocol = ProtocolWrapper(") == 1, f"hypercorn {HYPERCORN} changed"
    assert run.index("self.protocol = ProtocolWrapper(") < run.index("await self._read_data()")
    # The wrapper makes an H11Protocol (ours: test_hypercorn_h11.py) unless ALPN asked for
    # h2 (only over TLS), and hands every event to its `protocol`.
    wrapper = inspect.getsource(ProtocolWrapper.__init__)
    assert 'if alpn_protocol == "h2":' in wrapper, f"hypercorn {HYPERCORN} picks otherwise"
    assert "self.protocol = H11Protocol(" in wrapper
    handle = inspect.getsource(ProtocolWrapper.handle)
    assert "return await self.protocol.handle(event)" in handle


def test_hypercorn_switches_protocols_only_on_what_the_adapter_s_protocol_never_raises() -> None:
    from hypercorn.protocol import ProtocolWrapper

    # ProtocolWrapper makes an H2Protocol on two errors of H11Protocol's, which
    # HTTP11Protocol never raises (nor makes a WebSocket's stream).
    handle = inspect.getsource(ProtocolWrapper.handle)
    assert handle.count("except ") == 2, f"hypercorn {HYPERCORN} switches otherwise"
    assert "except H2ProtocolAssumedError" in handle and "except H2CProtocolRequiredError" in handle
    ours = PROTOCOL.read_text()
    assert "H2" not in ours and "WSStream" not in ours


def test_the_protocol_s_events_are_the_per_connection_server_s() -> None:
    from hypercorn.events import Closed, RawData, Updated

    assert [field.name for field in dataclasses.fields(Updated)] == ["idle"]
    assert dataclasses.fields(Closed) == ()
    assert [field.name for field in dataclasses.fields(RawData)] == ["data", "address"]


def test_the_per_connection_server_sends_each_piece_through_protocol_send() -> None:
    from hypercorn.events import RawData
    from hypercorn.trio.tcp_server import TCPServer

    # The seam's server passes by the send lock for the bytes its connection holds: its
    # protocol must send through TCPServer.protocol_send, each piece a RawData.
    assert "self.protocol_send," in inspect.getsource(TCPServer.run)
    assert [field.name for field in dataclasses.fields(RawData)][:1] == ["data"]


def test_the_per_connection_server_times_idle_time_with_its_idle_task_on_updated() -> None:
    from hypercorn.trio.tcp_server import TCPServer
    from hypercorn.trio.worker_context import WorkerContext

    # The seam's server stops the idle task run() starts at the first request, starts no
    # other until shutdown, and closes idle connections itself: TCPServer must time idle
    # time with that one task, started once by run() and then by each Updated event.
    run, send = inspect.getsource(TCPServer.run), inspect.getsource(TCPServer.protocol_send)
    assert run.count("self.idle_task.restart(") == 1, f"hypercorn {HYPERCORN} changed"
    assert "await self.idle_task.restart(self._task_group, self._idle_timeout)" in send
    assert "await self.idle_task.stop()" in send
    assert "self.context.terminated.wait()" in inspect.getsource(TCPServer._idle_timeout)
    protocol = PROTOCOL.read_text()
    assert "Updated(idle=False)" in protocol and "Updated(idle=True)" in protocol
    assert WorkerContext(None).terminated.is_set() is False


def test_the_seams_read_loop_is_hypercorns_less_its_timeout_per_read() -> None:
    from hypercorn.config import Config
    from hypercorn.trio.tcp_server import TCPServer

    from n8n_a2a.http.hypercorn_seam import _HTTP11Server
    from n8n_a2a.server import hypercorn_config

    # _HTTP11Server._read_data is TCPServer's, line for line, but for the fail_after
    # around each read, which hypercorn's read_timeout sets and the adapter leaves off.
    theirs = inspect.getsource(TCPServer._read_data).splitlines()
    assert theirs[3:5] == [
        "                with trio.fail_after(self.config.read_timeout or inf):",
        "                    data = await self.stream.receive_some(MAX_RECV)",
    ], f"hypercorn {HYPERCORN} reads otherwise"
    assert [line.strip() for line in theirs[5:]] == [
        "except (",
        "trio.ClosedResourceError,",
        "trio.BrokenResourceError,",
        "trio.TooSlowError,",
        "):",
        "break",
        "else:",
        "await self.protocol.handle(RawData(bytes(data)))",
        'if data == b"":',
        "break",
        "await self.protocol.handle(Closed())",
    ], f"hypercorn {HYPERCORN} reads otherwise"
    # Each read as large as hypercorn's.
    assert "receive_some(MAX_RECV)" in inspect.getsource(_HTTP11Server._read_data)
    # Which the adapter's config leaves as hypercorn has it: off.
    assert Config().read_timeout is None
    assert "config.read_timeout" not in inspect.getsource(hypercorn_config)


def test_the_response_headers_are_hypercorns_made_once_a_second(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import wsgiref.handlers

    from hypercorn.config import Config

    now = [1764820950.2]
    monkeypatch.setattr("n8n_a2a.http.hypercorn_seam.time.time", lambda: now[0])
    monkeypatch.setattr("hypercorn.config.time", lambda: now[0])
    served = hypercorn_seam.ServedConfig()
    first = served.response_headers("h11")
    assert first == Config().response_headers("h11")
    assert (b"date", wsgiref.handlers.format_date_time(now[0]).encode()) in first
    first.append((b"x", b"y"))  # the caller's own list
    now[0] += 0.7
    assert served.response_headers("h11") == first[:-1]  # the same second: made before
    now[0] += 0.4
    later = served.response_headers("h11")
    assert later == Config().response_headers("h11") != first[:-1]
    assert served.response_headers("h2") == Config().response_headers("h2")
