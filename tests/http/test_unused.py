"""What hypercorn imports for what the adapter never asks of it, stood in for: how hypercorn
uses it, pinned (a release that uses it otherwise fails here), and a stand-in's names
importing its module as they are used. (That a start imports none of it is
tests/test_server.py's.)"""

from __future__ import annotations

import ast
import importlib
import importlib.metadata
import importlib.util
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from n8n_a2a.http import unused
from n8n_a2a.http.unused import UNUSED, StandIn, defer_unused

HYPERCORN = importlib.metadata.version("hypercorn")
#: hypercorn's sources, read with `ast` (nothing imported to find out).
SOURCES = Path(importlib.util.find_spec("hypercorn").origin).parent  # type: ignore[arg-type, union-attr]
#: hypercorn's modules never imported by the adapter: QUIC's and asyncio's workers.
NEVER = ("protocol/h3.py", "protocol/quic.py", "asyncio/")


def imports_of_unused() -> Iterator[tuple[str, str, ast.Import | ast.ImportFrom]]:
    """Each import, by one of hypercorn's modules, of a module UNUSED stands in for: the
    importing file, the module and the import."""
    for path in sorted(SOURCES.rglob("*.py")):
        where = path.relative_to(SOURCES).as_posix()
        if where.startswith(NEVER):
            continue
        package = ["hypercorn", *where.removesuffix(".py").split("/")[:-1]]
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom):
                base = package[: len(package) - node.level + 1] if node.level else []
                module = ".".join([*base, *([node.module] if node.module else [])])
                if module in UNUSED:
                    yield where, module, node
            elif isinstance(node, ast.Import):
                for alias in node.names:
                    if alias.name in UNUSED:
                        yield where, alias.name, node


def test_hypercorn_imports_from_each_only_the_names_stood_in_for() -> None:
    found = {
        (where, module, tuple(alias.name for alias in node.names))
        for where, module, node in imports_of_unused()
    }
    assert found == {
        ("protocol/__init__.py", "hypercorn.protocol.h2", ("H2Protocol",)),
        ("protocol/h11.py", "hypercorn.protocol.ws_stream", ("WSStream",)),
        # Imported once the HTTP/2 protocol is: not in the adapter.
        ("protocol/h2.py", "hypercorn.protocol.ws_stream", ("WSStream",)),
        ("protocol/h2.py", "h2.events", ("h2.events",)),
        ("typing.py", "h2.events", ("h2.events",)),
        ("config.py", "tomllib", ("tomllib",)),
        ("logging.py", "tomllib", ("tomllib",)),
        ("logging.py", "logging.config", ("dictConfig", "fileConfig")),
    }, f"hypercorn {HYPERCORN} imports them otherwise"


def annotations_in(tree: ast.AST) -> set[int]:
    """The ids of the nodes of every annotation in `tree` (text, under `from __future__
    import annotations`: what it names is not looked up)."""
    annotations = [
        node.annotation
        for node in ast.walk(tree)
        if isinstance(node, ast.arg | ast.AnnAssign) and node.annotation is not None
    ]
    annotations += [
        node.returns
        for node in ast.walk(tree)
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node.returns is not None
    ]
    return {id(node) for annotation in annotations for node in ast.walk(annotation)}


@pytest.mark.parametrize(
    ("where", "name"),
    [
        ("protocol/__init__.py", "H2Protocol"),
        ("protocol/h11.py", "WSStream"),
        ("logging.py", "dictConfig"),
        ("logging.py", "fileConfig"),
    ],
)
def test_hypercorn_only_calls_a_name_stood_in_for(where: str, name: str) -> None:
    """A stand-in's name is a function that calls the module's own: calling it is all it
    can do (a class stood in for makes one, but is no class)."""
    source = (SOURCES / where).read_text()
    assert "from __future__ import annotations" in source
    tree = ast.parse(source)
    called = {id(node.func) for node in ast.walk(tree) if isinstance(node, ast.Call)}
    uses = [n for n in ast.walk(tree) if isinstance(n, ast.Name) and n.id == name]
    otherwise = [n.lineno for n in uses if id(n) not in called | annotations_in(tree)]
    assert uses and otherwise == [], f"hypercorn {HYPERCORN} {where}:{otherwise} uses {name}"


def test_hypercorns_typing_only_annotates_with_h2s_events() -> None:
    source = (SOURCES / "typing.py").read_text()
    assert "from __future__ import annotations" in source
    tree = ast.parse(source)
    events = [n for n in ast.walk(tree) if isinstance(n, ast.Attribute) and n.attr == "events"]
    read = [n.lineno for n in events if id(n) not in annotations_in(tree)]
    assert events and read == [], f"hypercorn {HYPERCORN} typing.py:{read} reads h2.events"


@pytest.mark.parametrize("where", ["config.py", "logging.py"])
def test_hypercorn_reads_tomllib_only_in_its_functions(where: str) -> None:
    tree = ast.parse((SOURCES / where).read_text())
    inside = {
        id(node)
        for function in ast.walk(tree)
        if isinstance(function, ast.FunctionDef | ast.AsyncFunctionDef)
        for node in ast.walk(function)
    }
    reads = [
        node
        for node in ast.walk(tree)
        if isinstance(node, ast.Attribute)
        and isinstance(node.value, ast.Name)
        and node.value.id == "tomllib"
    ]
    at_import = [node.lineno for node in reads if id(node) not in inside]
    assert reads and at_import == [], f"hypercorn {HYPERCORN} {where}:{at_import} reads tomllib"


@pytest.fixture
def colorsys(monkeypatch: pytest.MonkeyPatch) -> StandIn:
    """A stand-in for a module not imported yet (any will do), taken away after."""
    monkeypatch.delitem(sys.modules, "colorsys", raising=False)
    stand_in = StandIn("colorsys", ("hls_to_rgb",))
    monkeypatch.setitem(sys.modules, "colorsys", stand_in)
    return stand_in


def test_a_name_stood_in_for_imports_its_module_at_its_first_call(colorsys: StandIn) -> None:
    assert not hasattr(colorsys, "__path__") and sys.modules["colorsys"] is colorsys
    assert colorsys.hls_to_rgb(0.0, 1.0, 0.0) == (1.0, 1.0, 1.0)
    real = sys.modules["colorsys"]
    assert real is not colorsys and not isinstance(real, StandIn)
    assert colorsys.rgb_to_hls is real.rgb_to_hls  # any other name: the module's


def test_any_other_name_imports_it_as_it_is_looked_up(colorsys: StandIn) -> None:
    assert colorsys.ONE_THIRD == 1.0 / 3.0
    assert unused.imported("colorsys") is sys.modules["colorsys"] is not colorsys


def test_nothing_is_stood_in_for_once_hypercorns_protocol_package_is_imported() -> None:

    before = dict(sys.modules)
    defer_unused()
    assert sys.modules == before
    assert not isinstance(sys.modules["hypercorn.protocol"], StandIn)
