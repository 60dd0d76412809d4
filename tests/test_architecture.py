"""The house plan's arrows that must never exist (/work/shared/design/ARCHITECTURE.md),
checked on the package's source: each rule its own test, each refusal `file:line`.

Every import counts: at the top, in a function, under `if TYPE_CHECKING:`.
"""

from __future__ import annotations

import ast
import itertools
from collections.abc import Iterator
from pathlib import Path

from tests.support.imports import ROOT, Import, imports_of, module_of, parsed, sources

FILES = sources("n8n_a2a")


def within(module: str, package: str) -> bool:
    return module == package or module.startswith(package + ".")


MODULES = {module_of(path): path for path in FILES}

#: The pure folders: the wire (protocol/) and the rules (core/), every module in them,
#: whatever comes to live there.
PURE_PACKAGES = ("n8n_a2a.protocol", "n8n_a2a.core")
PURE = sorted(m for m in MODULES if any(within(m, p) for p in PURE_PACKAGES))
#: What does I/O (or runs it): none of it in the pure core.
IO = {"trio", "httpx", "httpcore", "quart", "quart_trio", "hypercorn", "psycopg", "socket"}
MAX_FILE_LINES = 400
MAX_FUNCTION_LINES = 80


def package_imports(module: str) -> Iterator[tuple[Import, set[str]]]:
    """Each import of `module`, with the package's modules it loads (packages included:
    their __init__.py runs)."""
    for imported in imports_of(MODULES[module]):
        yield imported, imported.targets(set(MODULES))


def refused(lines: list[str], rule: str) -> str:
    return rule + ":\n" + "\n".join(lines)


def test_protocol_imports_nothing_of_the_package_outside_protocol() -> None:
    lines = [
        f"{imported.where} imports {imported.shown}"
        for module in MODULES
        if within(module, "n8n_a2a.protocol")
        for imported, loaded in package_imports(module)
        if any(not within(m, "n8n_a2a.protocol") and m != "n8n_a2a" for m in loaded)
    ]
    assert not lines, refused(lines, "protocol/ imports nothing of n8n_a2a outside protocol/")


def test_the_pure_core_reaches_no_io_and_no_config() -> None:
    """Nor through another module of the package: what the pure core imports is pure too."""
    reached_from: dict[str, str | None] = dict.fromkeys(PURE)
    waiting = list(PURE)
    while waiting:
        module = waiting.pop()
        for _, loaded in package_imports(module):
            for found in loaded - reached_from.keys():
                if not within(found, "n8n_a2a.config"):  # refused below, not walked
                    reached_from[found] = module
                    waiting.append(found)

    def chain(module: str) -> str:
        way = [module]
        while (by := reached_from[way[-1]]) is not None:
            way.append(by)
        return " <- ".join(way)

    lines = [
        f"{imported.where} imports {imported.shown} (reached: {chain(module)})"
        for module in sorted(reached_from)
        for imported, loaded in package_imports(module)
        if imported.module.partition(".")[0] in IO
        or any(within(m, "n8n_a2a.config") for m in loaded)
    ]
    assert not lines, refused(
        lines,
        "protocol/ and core/ import neither "
        + ", ".join(sorted(IO))
        + " nor n8n_a2a.config, nor any module of the package that does",
    )


def test_no_store_imports_the_workflow_contract() -> None:
    lines = [
        f"{imported.where} imports {imported.shown}"
        for module in MODULES
        if within(module, "n8n_a2a.store")
        for imported, loaded in package_imports(module)
        if {"n8n_a2a.core.contract", "n8n_a2a.core.replies"} & set(loaded)
    ]
    assert not lines, refused(
        lines, "n8n_a2a/store/ never imports n8n_a2a.core.contract nor its words (no Verdict)"
    )


def test_the_app_never_imports_the_webhook() -> None:
    lines = [
        f"{imported.where} imports {imported.shown}"
        for module in MODULES
        if within(module, "n8n_a2a.app")
        for imported, loaded in package_imports(module)
        if any(within(m, "n8n_a2a.webhook") for m in loaded)
    ]
    assert not lines, refused(lines, "n8n_a2a/app/ never imports n8n_a2a.webhook")


#: The floors, lowest first (the house plan's fourth): a module imports from its own floor
#: or below, never above. The package's own __init__.py (its __version__) is under them all.
FLOORS: tuple[tuple[str, ...], ...] = (
    ("protocol",),
    ("core",),
    ("config", "auth", "store", "observability"),
    ("webhook", "push", "budget", "http", "executor"),
    ("app",),
    ("server",),
    ("__main__", "prebuilt"),
)
#: Imports allowed up a floor: only one deferred into a function, and only with the reason
#: it cannot be otherwise, as {(importing module, imported module): reason}. None so far.
UPWARD: dict[tuple[str, str], str] = {}


def floor(module: str) -> int:
    """The floor of a module of the package; -1 for the package's own __init__.py."""
    if module == "n8n_a2a":
        return -1
    room = module.split(".")[1]
    return next(level for level, rooms in enumerate(FLOORS) if room in rooms)


def deferred_lines(path: Path) -> set[int]:
    """The lines of the imports made inside a function (run at its call, not at import)."""
    return {
        node.lineno
        for function in ast.walk(parsed(path))
        if isinstance(function, ast.FunctionDef | ast.AsyncFunctionDef)
        for node in ast.walk(function)
        if isinstance(node, ast.Import | ast.ImportFrom)
    }


def test_every_room_of_the_package_is_on_a_floor() -> None:
    rooms = {module.split(".")[1] for module in MODULES if module != "n8n_a2a"}
    placed = {room for rooms in FLOORS for room in rooms}
    assert rooms - placed == set(), "a folder or module of n8n_a2a/ is on no floor: place it"
    assert placed - rooms == set(), "a floor names a room n8n_a2a/ does not have"


def upward_imports() -> Iterator[tuple[str, str, Import, bool]]:
    """Each import of a module of a floor above the importer's: (importer, imported, the
    import, whether it is deferred)."""
    for module, path in MODULES.items():
        deferred = deferred_lines(path)
        for imported, loaded in package_imports(module):
            for target in sorted(loaded):
                if floor(target) > floor(module):
                    yield module, target, imported, imported.line in deferred


def test_a_module_imports_only_from_its_own_floor_or_below() -> None:
    """Every import counts (at the top, in a function, under `if TYPE_CHECKING:`), but a
    deferred one listed in UPWARD with its reason."""
    lines = list(  # one line an import, though it load a package and its module
        dict.fromkeys(
            f"{imported.where} imports {imported.shown} (floor {floor(target)} from floor "
            f"{floor(module)})"
            for module, target, imported, deferred in upward_imports()
            if not (deferred and (module, target) in UPWARD)
        )
    )
    assert not lines, refused(
        lines, "no import up a floor: " + " < ".join(", ".join(f) for f in FLOORS)
    )


def test_every_allowed_upward_import_is_still_made() -> None:
    made = {(module, target) for module, target, _, deferred in upward_imports() if deferred}
    assert set(UPWARD) <= made, f"UPWARD lists imports no longer made: {set(UPWARD) - made}"


def import_graph() -> dict[str, dict[str, str]]:
    """module -> {module it imports: where}. Every import counts. A module's own packages
    are loaded before it whatever it imports: an import of one counts only where it reads
    a name the package's __init__.py defines (`from . import Listener`), not a submodule."""
    graph: dict[str, dict[str, str]] = {module: {} for module in MODULES}
    for module in MODULES:
        for imported, loaded in package_imports(module):
            for target in loaded - {module}:
                own_package = within(module, target)
                reads_a_name = target == imported.module and imported.shown not in MODULES
                if not own_package or reads_a_name:
                    graph[module].setdefault(target, imported.where)
    return graph


def a_cycle(graph: dict[str, dict[str, str]]) -> list[str]:
    """One circle of the graph as the modules along it, the first again at the end; []
    for none."""
    done: set[str] = set()
    path: list[str] = []

    def visit(module: str) -> list[str]:
        if module in path:
            return [*path[path.index(module) :], module]
        if module in done:
            return []
        path.append(module)
        for target in sorted(graph[module]):
            if found := visit(target):
                return found
        path.pop()
        done.add(module)
        return []

    for module in sorted(graph):
        if found := visit(module):
            return found
    return []


def test_no_module_imports_itself_through_others() -> None:
    """No circle between modules: every import counts, a deferred one as much as one at
    the top (a circle a deferred import hides is a circle still)."""
    graph = import_graph()
    cycle = a_cycle(graph)
    lines = [f"{graph[a][b]} imports {b}" for a, b in itertools.pairwise(cycle)]
    assert not cycle, refused(lines, "no import circle: " + " -> ".join(cycle))


def test_the_circle_finder_finds_a_circle() -> None:
    looped = {"a": {"b": "a.py:1"}, "b": {"c": "b.py:1"}, "c": {"a": "c.py:1"}, "d": {}}
    assert a_cycle(looped) == ["a", "b", "c", "a"]
    assert a_cycle({"a": {"b": "a.py:1"}, "b": {}}) == []


def private(name: str) -> bool:
    return name.startswith("_") and not name.startswith("__")


def dotted(node: ast.expr) -> str | None:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute) and (base := dotted(node.value)) is not None:
        return f"{base}.{node.attr}"
    return None


def private_uses(path: Path, source: str | None = None) -> Iterator[str]:
    """`from n8n_a2a.x import _y`, and `x._y` where x names another module of the package."""
    here = module_of(path)
    names: dict[str, str] = {}  # a local name -> the module of the package it is
    for imported in imports_of(path, source):
        if not within(imported.module, "n8n_a2a"):
            continue
        if imported.name is not None and private(imported.name):
            yield f"{imported.where} imports {imported.shown}"
        elif imported.name is None and imported.bound == imported.module.partition(".")[0]:
            names[imported.bound] = imported.bound  # `import n8n_a2a.x`: n8n_a2a.x._y
        elif imported.shown in MODULES:
            names[imported.bound] = imported.shown
    for node in ast.walk(parsed(path, source)):
        if isinstance(node, ast.Attribute) and private(node.attr):
            first, _, rest = (dotted(node.value) or "").partition(".")
            module = ".".join(filter(None, [names.get(first), rest]))
            if first in names and module in MODULES and module != here:
                yield f"{path.relative_to(ROOT)}:{node.lineno} uses {module}.{node.attr}"


def test_no_module_uses_another_modules_private_names() -> None:
    lines = [line for path in FILES for line in private_uses(path)]
    assert not lines, refused(lines, "no module imports or uses another module's _private name")


def test_no_module_imports_private_parts_of_httpx_httpcore_or_hypercorn() -> None:
    lines = [
        f"{imported.where} imports {imported.shown}"
        for path in FILES
        for imported in imports_of(path)
        if imported.module.partition(".")[0] in {"httpx", "httpcore", "hypercorn"}
        and any(private(part) for part in imported.shown.split("."))
    ]
    assert not lines, refused(lines, "nothing reaches into httpx, httpcore or hypercorn's privates")


def test_no_file_is_over_400_lines() -> None:
    lines = [
        f"{path.relative_to(ROOT)}: {count} lines"
        for path in FILES
        if (count := len(path.read_text().splitlines())) > MAX_FILE_LINES
    ]
    assert not lines, refused(lines, f"no file in n8n_a2a/ over {MAX_FILE_LINES} lines")


def test_no_function_is_over_80_lines() -> None:
    lines = [
        f"{path.relative_to(ROOT)}:{node.lineno} {node.name}: {count} lines"
        for path in FILES
        for node in ast.walk(parsed(path))
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
        and (count := (node.end_lineno or node.lineno) - node.lineno + 1) > MAX_FUNCTION_LINES
    ]
    assert not lines, refused(lines, f"no function in n8n_a2a/ over {MAX_FUNCTION_LINES} lines")


def test_the_rules_read_relative_imports_aliases_and_private_uses() -> None:
    """The rules' own reading, on a source made for it in place of store/pages.py."""
    store = MODULES["n8n_a2a.store.pages"]
    source = (
        "from ..core.contract import Verdict\n"
        "from . import fanout\n"
        "from .. import webhook as w\n"
        "import n8n_a2a.core.sanitising as text\n"
        "import n8n_a2a.core.retention\n"
        "from n8n_a2a.auth.caller import _secret\n"
        "w._pool, text._cut, n8n_a2a.core.retention._kept, fanout.clock, Verdict._x\n"
    )
    seen = [(i.module, i.name, i.bound) for i in imports_of(store, source)]
    assert seen == [
        ("n8n_a2a.core.contract", "Verdict", "Verdict"),
        ("n8n_a2a.store", "fanout", "fanout"),
        ("n8n_a2a", "webhook", "w"),
        ("n8n_a2a.core.sanitising", None, "text"),
        ("n8n_a2a.core.retention", None, "n8n_a2a"),
        ("n8n_a2a.auth.caller", "_secret", "_secret"),
    ]
    uses = sorted(line.partition(" ")[2] for line in private_uses(store, source))
    assert uses == [
        "imports n8n_a2a.auth.caller._secret",
        "uses n8n_a2a.core.retention._kept",
        "uses n8n_a2a.core.sanitising._cut",
        "uses n8n_a2a.webhook._pool",
    ]
