"""What hypercorn and trio import for what the adapter never asks of them, stood in for: how
hypercorn and trio use it, pinned (a release that uses it otherwise fails here), and a
stand-in's names importing its module as they are used. (That a start imports none of it
is tests/test_server.py's, and that an https webhook is called through trio's TLS stood
in for too.)"""

from __future__ import annotations

import ast
import importlib
import importlib.metadata
import importlib.util
import json
import os
import subprocess
import sys
import typing
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType

import pytest
import trustme

from n8n_a2a.http import unused
from n8n_a2a.http.unused import (
    FORWARDED,
    NEW_TYPES,
    THREAD_CACHE,
    TRIO_NAMESPACES,
    TRIO_UNUSED,
    UNUSED,
    Forwarding,
    StandIn,
    Unimported,
    defer_unused,
)

HYPERCORN = importlib.metadata.version("hypercorn")
TRIO = importlib.metadata.version("trio")


def sources_of(package: str) -> Path:
    """A package's folder, its sources read with `ast` (nothing imported to find out)."""
    return Path(importlib.util.find_spec(package).origin).parent  # type: ignore[arg-type, union-attr]


SOURCES = sources_of("hypercorn")
TRIO_SOURCES = sources_of("trio")
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
        if module not in ("hypercorn.typing", "ssl")  # below
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
        ("typing.py", "multiprocessing.synchronize", ("Event",)),
        ("utils.py", "multiprocessing.synchronize", ("Event",)),
        ("trio/run.py", "multiprocessing.synchronize", ("Event",)),
        # The multi-process runner (hypercorn's command): not in the adapter.
        ("run.py", "multiprocessing.synchronize", ("Event",)),
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


def test_hypercorn_imports_from_its_typing_the_names_stood_in_for() -> None:
    taken = {
        alias.name
        for _, module, node in imports_of_unused()
        if module == "hypercorn.typing"
        for alias in node.names
    }
    assert taken == set(UNUSED["hypercorn.typing"]), f"hypercorn {HYPERCORN} takes others"


def runtime_uses_of_types(tree: ast.AST, names: set[str]) -> list[ast.Name]:
    """The uses of `names` in `tree` that a function standing in for a type would not do
    for: not in an annotation, nor the type given to cast() or a memory channel, nor a
    NewType called."""
    allowed = set(annotations_in(tree))
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and ast.unparse(node.func) == "cast" and node.args:
            allowed.add(id(node.args[0]))
        called = node.func if isinstance(node, ast.Call) else None
        if isinstance(called, ast.Name) and called.id in NEW_TYPES["hypercorn.typing"]:
            allowed.add(id(called))
        if isinstance(node, ast.Subscript) and ast.unparse(node.value).endswith(
            "open_memory_channel"
        ):
            allowed.update(id(n) for n in ast.walk(node.slice))
    return [
        n
        for n in ast.walk(tree)
        if isinstance(n, ast.Name) and n.id in names and id(n) not in allowed
    ]


def test_hypercorn_uses_its_typing_only_where_a_stand_in_does() -> None:
    """Its types in annotations (text, under `from __future__ import annotations`), as
    cast()'s type, as a memory channel's argument; ConnectionState called (a NewType)."""
    found = []
    for where, module, node in imports_of_unused():
        if module != "hypercorn.typing":
            continue
        source = (SOURCES / where).read_text()
        assert "from __future__ import annotations" in source, where
        names = {alias.asname or alias.name for alias in node.names}
        uses = runtime_uses_of_types(ast.parse(source), names)
        found += [f"{where}:{n.lineno} {n.id}" for n in uses]
    assert found == [], f"hypercorn {HYPERCORN} uses its types otherwise"


def test_the_adapter_uses_hypercorns_typing_only_where_a_stand_in_does() -> None:
    package = Path(unused.__file__).parent.parent
    found = []
    for path in sorted(package.rglob("*.py")):
        tree = ast.parse(path.read_text())
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and node.module == "hypercorn.typing":
                names = {alias.asname or alias.name for alias in node.names}
                uses = runtime_uses_of_types(tree, names)
                found += [f"{path.name}:{n.lineno} {n.id}" for n in uses]
    assert found == []


def test_hypercorns_config_imports_from_ssl_only_the_names_forwarded() -> None:
    found = {
        (where, tuple(sorted(alias.name for alias in node.names)))
        for where, module, node in imports_of_unused()
        if module == "ssl"
    }
    assert found == {
        ("config.py", FORWARDED["ssl"]),
        ("__main__.py", ("ssl",)),  # hypercorn's command line: not in the adapter
    }, f"hypercorn {HYPERCORN} imports ssl so"


def test_hypercorns_config_reads_a_name_of_ssl_as_a_value_only_after_calling_one() -> None:
    """Each of them in annotations, called, or an attribute of it read (Forwarding does
    for all three); but OP_NO_COMPRESSION is a value (an int), read after the call to
    create_default_context, which has put ssl's own names in the config's place."""
    tree = ast.parse((SOURCES / "config.py").read_text())
    names = set(FORWARDED["ssl"])
    called = {id(n.func) for n in ast.walk(tree) if isinstance(n, ast.Call)}
    read = {id(n.value) for n in ast.walk(tree) if isinstance(n, ast.Attribute)}
    uses = [n for n in ast.walk(tree) if isinstance(n, ast.Name) and n.id in names]
    as_values = [n for n in uses if id(n) not in called | read | annotations_in(tree)]
    assert [n.id for n in as_values] == ["OP_NO_COMPRESSION"], f"hypercorn {HYPERCORN}"
    [function] = [
        f
        for f in ast.walk(tree)
        if isinstance(f, ast.FunctionDef) and any(n in ast.walk(f) for n in as_values)
    ]
    calls_first = [
        n.lineno
        for n in ast.walk(function)
        if isinstance(n, ast.Call) and ast.unparse(n.func) == "create_default_context"
    ]
    assert calls_first and min(calls_first) < as_values[0].lineno, f"hypercorn {HYPERCORN}"


def test_a_forwarded_name_is_the_modules_own_and_every_module_that_took_it_gets_that(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setitem(FORWARDED, "colorsys", ("ONE_THIRD", "hls_to_rgb"))
    monkeypatch.delitem(sys.modules, "colorsys", raising=False)
    stand_in = StandIn("colorsys", ())
    monkeypatch.setitem(sys.modules, "colorsys", stand_in)
    importer = ModuleType("importer")
    vars(importer).update(third=stand_in.ONE_THIRD, rgb=stand_in.hls_to_rgb, colorsys=stand_in)
    monkeypatch.setitem(sys.modules, "importer", importer)
    assert isinstance(vars(importer)["third"], Forwarding)
    assert vars(importer)["third"].real == 1.0 / 3.0  # an attribute read: the module's own
    real = sys.modules["colorsys"]
    assert not isinstance(real, StandIn)
    assert vars(importer) == vars(importer) | {
        "third": real.ONE_THIRD,
        "rgb": real.hls_to_rgb,
        "colorsys": real,
    }
    assert Forwarding("colorsys", "hls_to_rgb")(0.0, 1.0, 0.0) == (1.0, 1.0, 1.0)


def test_a_new_type_stood_in_for_gives_back_what_it_is_called_with() -> None:
    stand_in = StandIn("hypercorn.typing", UNUSED["hypercorn.typing"])
    state = {"key": "value"}
    assert stand_in.ConnectionState(state) is state
    assert sys.modules.get("hypercorn.typing") is not stand_in


@pytest.mark.parametrize("where", ["typing.py", "utils.py", "trio/run.py"])
def test_hypercorn_names_multiprocessings_event_only_as_a_type(where: str) -> None:
    """EventType in annotations (text), and in typing.py's WorkerFunc alias, inside
    Optional[...]: typing takes a function there as it takes a class."""
    source = (SOURCES / where).read_text()
    assert "from __future__ import annotations" in source
    tree = ast.parse(source)
    in_a_type = {
        id(node)
        for subscript in ast.walk(tree)
        if isinstance(subscript, ast.Subscript)
        and isinstance(subscript.value, ast.Name)
        and subscript.value.id == "Optional"
        for node in ast.walk(subscript.slice)
    }
    uses = [n for n in ast.walk(tree) if isinstance(n, ast.Name) and n.id == "EventType"]
    otherwise = [n.lineno for n in uses if id(n) not in annotations_in(tree) | in_a_type]
    assert uses and otherwise == [], f"hypercorn {HYPERCORN} {where}:{otherwise} uses EventType"
    stand_in = StandIn("multiprocessing.synchronize", UNUSED["multiprocessing.synchronize"])
    assert typing.Optional[stand_in.Event] is not None  # noqa: UP045 - as hypercorn writes it


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


def test_a_stand_in_whose_package_is_not_imported_goes_as_the_package_comes(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """multiprocessing is not imported for its module's stand-in: once it is, by anyone,
    `import multiprocessing.synchronize` must find the module itself (the package has no
    attribute for a stand-in)."""
    for name in ("xmlrpc", "xmlrpc.client"):
        monkeypatch.delitem(sys.modules, name, raising=False)
    stand_in = StandIn("xmlrpc.client", ("dumps",))
    monkeypatch.setitem(sys.modules, "xmlrpc.client", stand_in)
    finder = Unimported("xmlrpc", "xmlrpc.client")
    monkeypatch.setattr(sys, "meta_path", [finder, *sys.meta_path])
    import xmlrpc

    assert finder not in sys.meta_path and "xmlrpc.client" not in sys.modules
    assert stand_in.dumps((1,)).startswith("<params>")  # a name taken before: the module's
    import xmlrpc.client

    assert not isinstance(xmlrpc.client, StandIn) and sys.modules["xmlrpc.client"] is xmlrpc.client


def trio_imports(where: str) -> Iterator[tuple[str, ast.ImportFrom]]:
    """Each `from ... import` at the top of one of trio's modules (not in a function, nor
    under TYPE_CHECKING): the module it imports from, and the import."""
    package = ["trio", *where.split("/")[:-1]]  # a relative import's base, level 1

    def top(body: list[ast.stmt]) -> Iterator[ast.stmt]:
        for node in body:
            if isinstance(node, ast.If):
                checking = "TYPE_CHECKING" in ast.unparse(node.test)
                yield from top(node.orelse if checking else node.body + node.orelse)
            elif isinstance(node, ast.Try):
                yield from top(node.body + [s for h in node.handlers for s in h.body])
            else:
                yield node

    for node in top(ast.parse((TRIO_SOURCES / where).read_text()).body):
        if isinstance(node, ast.ImportFrom):
            base = package[: len(package) - node.level + 1] if node.level else []
            yield ".".join([*base, *([node.module] if node.module else [])]), node


#: trio's modules that trio's own import never reaches (tests, tools, the platforms
#: other than Linux), or reaches only through a module stood in for.
TRIO_NEVER = ("_tests/", "testing/", "_tools/", "_subprocess_platform/", "_core/_tests/")


def test_trios_namespaces_take_from_each_module_only_the_names_stood_in_for() -> None:
    taken: dict[str, set[str]] = {}
    for namespace in TRIO_NAMESPACES:
        where = "__init__.py" if namespace == "trio" else namespace.split(".")[1] + ".py"
        for module, node in trio_imports(where):
            if module in TRIO_UNUSED:
                taken.setdefault(module, set()).update(alias.name for alias in node.names)
    assert taken == {module: set(names) for module, names in TRIO_UNUSED.items()}, (
        f"trio {TRIO} takes other names from them"
    )


def test_no_other_module_of_trio_imports_one_at_its_top() -> None:
    """Nor trio's thread cache but trio._core, for its one name."""
    deferred = {*TRIO_UNUSED, THREAD_CACHE[0]}
    found = set()
    for path in sorted(TRIO_SOURCES.rglob("*.py")):
        where = path.relative_to(TRIO_SOURCES).as_posix()
        if where.startswith(TRIO_NEVER) or where in ("__init__.py", "lowlevel.py"):
            continue
        for module, node in trio_imports(where):
            if module in deferred:
                found.add((where, module, tuple(alias.name for alias in node.names)))
    assert found == {
        # start_thread_soon, a function: the stand-in's calls it.
        ("_core/__init__.py", "trio._core._thread_cache", THREAD_CACHE[1]),
        ("_core/_run.py", "trio._core._thread_cache", THREAD_CACHE[1]),
        # Itself stood in for: the module it imports is the real one.
        ("_path.py", "trio._file_io", ("AsyncIOWrapper", "wrap_file")),
    }, f"trio {TRIO} imports them otherwise"


#: Each name trio's namespaces take from a module stood in for, as it is looked up: its
#: `__module__` and `__qualname__`, and whether it is the module's own; then, with `LAZY`
#: in the environment, the modules imported before (none), and each module at work.
TRIO_NAMES = """
import json, os, sys
if os.environ.get("LAZY"):
    from n8n_a2a.http.unused import defer_unused

    defer_unused()
import trio
from n8n_a2a.http.unused import THREAD_CACHE, TRIO_NAMESPACES, TRIO_UNUSED

deferred = [*TRIO_UNUSED, "ctypes.util", "multiprocessing"]
before = sorted(m for m in deferred if m in sys.modules)
thread_cache = type(sys.modules[THREAD_CACHE[0]]).__name__
names = []
for namespace in TRIO_NAMESPACES:
    for module, taken in TRIO_UNUSED.items():
        for name in taken:
            if hasattr(sys.modules[namespace], name):
                value = getattr(sys.modules[namespace], name)
                own = value is getattr(sys.modules[module], name)
                names.append([namespace, name, value.__module__, value.__qualname__, own])
print(json.dumps({"before": before, "thread_cache": thread_cache, "names": names}))
"""

#: At work, each module stood in for while the command's start did not use it: TLS (the
#: webhook's dial, to a name looked up in a thread), a subprocess, a path and a file.
TRIO_AT_WORK = """
import sys
from functools import partial
from n8n_a2a.http.unused import StandIn, defer_unused

defer_unused()
import trio
from n8n_a2a.webhook.network import Origin, open_stream

assert "trio._ssl" not in sys.modules and "trio._subprocess" not in sys.modules
assert isinstance(sys.modules["ssl"], StandIn)
trio.SSLStream  # trio's TLS imported with ssl stood in for: ssl's own, once it is
import ssl, trustme


async def echo(stream: trio.abc.Stream) -> None:
    await stream.send_all(await stream.receive_some())
    await stream.aclose()


async def main() -> None:
    authority = trustme.CA()
    serving = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    authority.issue_cert("localhost").configure_cert(serving)
    trusting = ssl.create_default_context()
    authority.configure_trust(trusting)
    async with trio.open_nursery() as nursery:
        serve = partial(trio.serve_ssl_over_tcp, echo, 0, serving, host="127.0.0.1")
        [listener] = await nursery.start(serve)
        port = listener.transport_listener.socket.getsockname()[1]
        stream = await open_stream(Origin("https", "localhost", port), trusting)
        await stream.send(b"ping")
        assert await stream.receive() == b"ping"
        await stream.aclose()
        nursery.cancel_scope.cancel()
    assert (await trio.run_process([sys.executable, "-c", "pass"])).returncode == 0
    path = trio.Path(__import__("n8n_a2a").__file__)
    assert await path.exists()
    async with await trio.open_file(await path.resolve(), "rb") as file:
        assert b"n8n-a2a" in await file.read()
    # No stand-in between a caller and the modules now: their own names everywhere.
    cache = sys.modules["trio._core._thread_cache"]
    assert trio.lowlevel.start_thread_soon is cache.start_thread_soon
    assert sys.modules["trio._threads"].start_thread_soon is cache.start_thread_soon
    assert sys.modules["trio._ssl"]._stdlib_ssl is sys.modules["ssl"]
    print("at work")


trio.run(main)
"""


def python(code: str, **environment: str) -> str:
    done = subprocess.run(
        [sys.executable, "-c", code],
        env={**os.environ, **environment},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


@pytest.mark.slow  # Python processes of their own: trio not imported yet
def test_trio_stood_in_for_gives_each_name_as_trio_does_and_each_module_works() -> None:
    eager, lazy = (json.loads(python(TRIO_NAMES, LAZY=lazy)) for lazy in ("", "1"))
    assert lazy["before"] == [] and lazy["thread_cache"] == "StandIn"
    assert eager["thread_cache"] == "module"
    assert lazy["names"] == eager["names"] and len(eager["names"]) == 17
    assert all(own for *_, own in lazy["names"])
    assert python(TRIO_AT_WORK) == "at work\n"


#: hypercorn's TLS, which the adapter never asks of it, made with ssl stood in for (the
#: certificate and key files as arguments).
HYPERCORN_TLS = """
import sys
from n8n_a2a.http.unused import StandIn, defer_unused

defer_unused()
import hypercorn.config

assert isinstance(sys.modules["ssl"], StandIn) and "_ssl" not in sys.modules
config = hypercorn.config.Config()
config.certfile, config.keyfile = sys.argv[1:]
context = config.create_ssl_context()
import ssl

assert isinstance(context, ssl.SSLContext) and context.minimum_version is ssl.TLSVersion.TLSv1_2
assert context.options == ssl.OP_NO_COMPRESSION
assert hypercorn.config.OP_NO_COMPRESSION is ssl.OP_NO_COMPRESSION
assert hypercorn.config.create_default_context is ssl.create_default_context
print("served over TLS")
"""


@pytest.mark.slow  # a Python process of its own: ssl not imported yet
def test_hypercorns_tls_is_made_with_ssl_stood_in_for(tmp_path: Path) -> None:
    certificate = trustme.CA().issue_cert("127.0.0.1")
    cert_file, key_file = tmp_path / "cert.pem", tmp_path / "key.pem"
    certificate.cert_chain_pems[0].write_to_path(str(cert_file))
    certificate.private_key_pem.write_to_path(str(key_file))
    done = subprocess.run(
        [sys.executable, "-c", HYPERCORN_TLS, str(cert_file), str(key_file)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0 and done.stdout == "served over TLS\n", done.stderr
