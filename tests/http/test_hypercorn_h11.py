"""The module that stands for hypercorn's `hypercorn.protocol.h11`: what hypercorn takes
from it and how it makes a protocol with that, pinned; and that in the adapter's process
hypercorn's wrapper makes the adapter's protocol."""

from __future__ import annotations

import ast
import importlib.metadata
import inspect
import subprocess
import sys
from pathlib import Path
from typing import Any

import hypercorn
import pytest
from hypercorn.config import Config
from hypercorn.events import RawData
from hypercorn.trio.task_group import TaskGroup
from hypercorn.trio.worker_context import WorkerContext
from hypercorn.typing import ConnectionState

import n8n_a2a.http  # noqa: F401  (puts the module in place: unused.py)
from n8n_a2a.http import hypercorn_h11
from n8n_a2a.http.protocol import HTTP11Protocol

HYPERCORN = importlib.metadata.version("hypercorn")
SOURCES = Path(hypercorn.__file__).parent


def test_hypercorn_takes_from_its_h11_module_only_the_names_here() -> None:
    taken = {}
    for path in SOURCES.rglob("*.py"):
        where = path.relative_to(SOURCES).as_posix()
        package = ["hypercorn", *where.removesuffix(".py").split("/")[:-1]]
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom):
                base = package[: len(package) - node.level + 1] if node.level else []
                module = ".".join([*base, *([node.module] if node.module else [])])
                if module == "hypercorn.protocol.h11":
                    taken[where] = sorted(alias.name for alias in node.names)
            elif isinstance(node, ast.Import):
                assert "hypercorn.protocol.h11" not in [alias.name for alias in node.names]
    assert taken == {"protocol/__init__.py": sorted(hypercorn_h11.__all__)}, (
        f"hypercorn {HYPERCORN} imports its HTTP/1.1 protocol otherwise"
    )


def test_the_wrapper_makes_its_h11_protocol_with_what_ours_takes() -> None:
    from hypercorn.protocol import ProtocolWrapper

    made = [
        node
        for node in ast.walk(ast.parse(inspect.getsource(ProtocolWrapper).strip()))
        if isinstance(node, ast.Call)
        and isinstance(node.func, ast.Name)
        and node.func.id == "H11Protocol"
    ]
    assert len(made) == 1, f"hypercorn {HYPERCORN} makes its HTTP/1.1 protocol otherwise"
    assert not made[0].keywords
    given = [ast.unparse(argument) for argument in made[0].args]
    taken = list(inspect.signature(HTTP11Protocol).parameters)
    # The wrapper passes its own state as the connection's: the one name that differs.
    assert given == [f"self.{name.removeprefix('connection_')}" for name in taken]


def test_in_the_adapter_hypercorns_wrapper_makes_ours() -> None:
    # (That h11 is never imported: tests/test_server.py, in a start of its own.)
    import hypercorn.protocol

    assert sys.modules["hypercorn.protocol.h11"] is hypercorn_h11
    assert hypercorn.protocol.h11 is hypercorn_h11
    wrapper = hypercorn.protocol.ProtocolWrapper(
        None,  # type: ignore[arg-type]
        Config(),
        WorkerContext(None),
        TaskGroup(),
        ConnectionState({}),
        False,
        ("127.0.0.1", 50000),
        ("127.0.0.1", 8000),
        None,  # type: ignore[arg-type]
        "http/1.1",
    )
    made: object = wrapper.protocol  # typed as hypercorn's: its h11 module's, or its h2
    assert type(made) is HTTP11Protocol


async def test_an_error_of_the_protocol_passes_the_wrapper_as_itself() -> None:
    """The wrapper's `except` clauses name the two errors: were they not exception classes,
    any error of the protocol's would reach hypercorn's server as a TypeError."""
    from hypercorn.protocol import ProtocolWrapper

    class Failing:
        async def handle(self, event: Any) -> None:
            raise LookupError("the protocol's own")

    wrapper = ProtocolWrapper.__new__(ProtocolWrapper)
    wrapper.protocol = Failing()  # type: ignore[assignment]
    with pytest.raises(LookupError, match="the protocol's own"):
        await wrapper.handle(RawData(b""))
    assert issubclass(hypercorn_h11.H2ProtocolAssumedError, Exception)
    assert issubclass(hypercorn_h11.H2CProtocolRequiredError, Exception)


@pytest.mark.slow  # a Python process of its own: hypercorn's protocol package imported first
def test_the_seam_will_not_serve_with_hypercorns_own_h11_protocol() -> None:
    done = subprocess.run(
        [
            sys.executable,
            "-c",
            "import hypercorn.protocol\nimport n8n_a2a.http.hypercorn_seam",
        ],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 1
    assert "ImportError: hypercorn.protocol was imported before n8n_a2a.http" in done.stderr
