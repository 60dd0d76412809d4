"""What a Python source file imports, read with `ast` (nothing is imported to find out):
the layout tests' and the architecture tests' one reading of the import statements."""

from __future__ import annotations

import ast
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

#: The checkout: n8n_a2a/ and tests/ are under it.
ROOT = Path(__file__).resolve().parents[2]


@dataclass(frozen=True)
class Import:
    """One name an import statement brings in, its module made absolute."""

    path: Path  # the importing file
    line: int
    module: str  # `import a.b` -> "a.b"; `from a.b import c` -> "a.b"
    name: str | None  # `from a.b import c` -> "c"; None for `import a.b`
    bound: str  # the local name: `import a.b` -> "a"; `import a.b as x`, `... import c as x` -> "x"

    @property
    def where(self) -> str:
        return f"{self.path.relative_to(ROOT)}:{self.line}"

    @property
    def shown(self) -> str:
        return self.module if self.name is None else f"{self.module}.{self.name}"

    def targets(self, modules: set[str]) -> set[str]:
        """The modules among `modules` this import loads: the module and its packages, and
        the imported name where that is a module itself (`from tests.interop import matrix`)."""
        parts = self.module.split(".")
        found = {".".join(parts[:n]) for n in range(1, len(parts) + 1)}
        if self.name is not None:
            found.add(f"{self.module}.{self.name}")
        return found & modules


def module_of(path: Path) -> str:
    """The dotted name of the module at `path` (a package is its __init__.py)."""
    parts = list(path.resolve().relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def sources(folder: str) -> list[Path]:
    """Every .py file under ROOT/folder, sorted."""
    return sorted((ROOT / folder).rglob("*.py"))


def parsed(path: Path, source: str | None = None) -> ast.Module:
    """The file's syntax tree (of `source` in its place, if given)."""
    return ast.parse(path.read_text() if source is None else source, filename=str(path))


def imports_of(path: Path, source: str | None = None) -> Iterator[Import]:
    """Every import in the file: at the top, in functions, under `if TYPE_CHECKING:`."""
    package = module_of(path) if path.name == "__init__.py" else module_of(path).rpartition(".")[0]
    for node in ast.walk(parsed(path, source)):
        if isinstance(node, ast.Import):
            for alias in node.names:
                bound = alias.asname or alias.name.partition(".")[0]
                yield Import(path, node.lineno, alias.name, None, bound)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - node.level + 1]
                module = ".".join([*base, node.module] if node.module else base)
            else:
                module = node.module or ""
            for alias in node.names:
                yield Import(path, node.lineno, module, alias.name, alias.asname or alias.name)
