"""The test tree's own layout: test files import no test file; what several folders share
lives in tests/support/, which stands on nothing else of the tests.

A test file is a `test_*.py` or a `conftest.py`. A helper module beside its only users (a
name without `test_`, such as tests/interop/matrix.py) is fine while those users are in
its folder.
"""

from __future__ import annotations

import ast
from pathlib import Path

from tests.support.imports import ROOT, Import, imports_of, module_of, parsed, sources

FILES = sources("tests")
MODULES = {module_of(path): path for path in FILES}


def is_test_file(module: str) -> bool:
    last = module.rpartition(".")[2]
    return last.startswith("test_") or last == "conftest"


def is_package(module: str) -> bool:
    return MODULES[module].name == "__init__.py"


def loaded(imported: Import) -> list[str]:
    """The modules of the tests this import loads, packages left out."""
    return sorted(m for m in imported.targets(set(MODULES)) if not is_package(m))


def test_no_test_file_imports_another_test_file() -> None:
    refused = [
        f"{imported.where} imports {module}"
        for path in FILES
        for imported in imports_of(path)
        for module in loaded(imported)
        if is_test_file(module)
    ]
    assert not refused, (
        "a test file (test_*.py or conftest.py) is imported; move what it shares to "
        "tests/support/ (fixtures stay in a conftest.py, where pytest finds them):\n"
        + "\n".join(refused)
    )


def test_a_helper_outside_support_is_used_only_in_its_own_folder() -> None:
    refused = [
        f"{imported.where} imports {module}, a helper of {MODULES[module].parent.name}/"
        for path in FILES
        for imported in imports_of(path)
        for module in loaded(imported)
        if not module.startswith("tests.support.")
        and not is_test_file(module)
        and MODULES[module].parent != path.parent
    ]
    assert not refused, (
        "a helper used from another folder belongs in tests/support/:\n" + "\n".join(refused)
    )


def test_support_imports_nothing_else_of_the_tests() -> None:
    refused = [
        f"{imported.where} imports {module}"
        for path in FILES
        if module_of(path).startswith("tests.support")
        for imported in imports_of(path)
        for module in loaded(imported)
        if not module.startswith("tests.support.")
    ]
    assert not refused, (
        "tests/support/ is what the tests stand on; it imports none of them:\n" + "\n".join(refused)
    )


def holds_code(path: Path) -> bool:
    body = parsed(path).body
    if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
        body = body[1:]  # the docstring
    return bool(body)


def test_a_package_init_holds_no_helpers() -> None:
    refused = [
        str(path.relative_to(ROOT))
        for path in FILES
        if path.name == "__init__.py" and holds_code(path)
    ]
    assert not refused, (
        "a package's __init__.py in the tests holds code; helpers go in a module whose name "
        "says what they are:\n" + "\n".join(refused)
    )


def own_test_file(module: Path) -> Path:
    """Where a module's tests live: n8n_a2a/a/b.py in tests/a/test_b.py (__main__ in
    tests/test_main.py)."""
    relative = module.relative_to(ROOT / "n8n_a2a")
    name = "main" if module.stem == "__main__" else module.stem
    return ROOT / "tests" / relative.parent / f"test_{name}.py"


def test_every_module_has_its_own_test_file() -> None:
    modules = [path for path in sources("n8n_a2a") if path.name != "__init__.py"]
    missing = sorted(
        str(path.relative_to(ROOT)) for path in modules if not own_test_file(path).exists()
    )
    assert not missing, "a module without tests/<its folder>/test_<its name>.py:\n" + "\n".join(
        missing
    )


def test_the_rules_see_the_imports_they_refuse() -> None:
    """The reading of imports itself: relative imports, a module imported as a name."""
    here = Path(__file__)
    assert module_of(here) == "tests.test_layout"
    found = {(i.module, i.name) for i in imports_of(here)}
    assert ("tests.support.imports", "imports_of") in found
    driver = MODULES["tests.interop.test_a2a_js"]
    [from_interop] = [i for i in imports_of(driver) if i.module == "tests.interop"]
    assert loaded(from_interop) == ["tests.interop.matrix"]
