"""The generated code compiled once: a class defined with it gets the code compiling its
text makes, and a file that is missing, stale or broken changes nothing."""

from __future__ import annotations

import dataclasses
import importlib
import importlib.util
import marshal
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from importlib.util import MAGIC_NUMBER
from pathlib import Path
from types import CodeType, FunctionType, SimpleNamespace
from typing import cast

import attr
import pytest

from n8n_a2a.prebuilt import generated
from n8n_a2a.prebuilt.generated import COMPILERS

Strip = Callable[[], None]
#: A file's content after its magic number, for no code.
FILE_OF_NOTHING = bytes(4)


@pytest.fixture
def bare(monkeypatch: pytest.MonkeyPatch) -> Iterator[Strip]:
    """The compilers as Python has them, stripped again by the function it gives, and
    given back as they were after the test (this process's may have theirs: importing
    the command loads FILE where the checkout has one)."""
    modules = {name: (importlib.import_module(name), builtin) for name, builtin in COMPILERS}
    was = {name: vars(module).get(builtin) for name, (module, builtin) in modules.items()}

    def strip() -> None:
        for module, builtin in modules.values():
            vars(module).pop(builtin, None)

    strip()
    monkeypatch.setattr(generated, "_GIVEN", [])
    yield strip
    strip()
    for name, (module, builtin) in modules.items():
        if was[name] is not None:
            setattr(module, builtin, was[name])


def point() -> type:
    @dataclass(frozen=True)
    class Point:
        x: int
        y: int = 0
        tags: list[str] = dataclasses.field(default_factory=list, compare=False)

    return Point


def pair() -> type:
    @attr.frozen
    class Pair:
        a: int
        b: str = "b"

    return Pair


def methods(cls: type) -> dict[str, FunctionType]:
    return {
        name: function
        for name, function in vars(cls).items()
        if isinstance(function, FunctionType) and name.startswith("__")
    }


def same_code(one: type, other: type) -> None:
    ones, others = methods(one), methods(other)
    assert ones.keys() == others.keys() and len(ones) >= 4, ones.keys()
    for name, function in ones.items():
        assert function.__code__ == others[name].__code__, name
        assert function.__annotations__ == others[name].__annotations__, name


def test_a_class_gets_the_code_compiling_its_text_makes(tmp_path: Path, bare: Strip) -> None:
    as_python_does = point(), pair()
    made = generated.record()
    recorded = point(), pair()
    assert made, "the compilers kept nothing"
    path = generated.write(made, str(tmp_path / "generated.bin"))
    bare()
    again: generated.Codes = {}
    shelf = generated.read(path)
    assert shelf is not None and generated.install(shelf, again)
    found = point(), pair()
    assert again == {}, "a text the file holds was compiled anew"
    for cls in range(2):
        same_code(as_python_does[cls], recorded[cls])
        same_code(as_python_does[cls], found[cls])
    Point, Pair = found
    assert Point(1) == Point(1, 0, ["other"]) and hash(Point(1)) == hash(Point(1, 0))
    assert repr(Point(2)).endswith("Point(x=2, y=0, tags=[])")
    with pytest.raises(dataclasses.FrozenInstanceError):
        Point(1).x = 2
    assert Pair(1) == Pair(1, "b") and Pair(1) != Pair(2) and repr(Pair(1)).endswith("(a=1, b='b')")
    with pytest.raises(attr.exceptions.FrozenInstanceError):
        Pair(1).a = 2


def test_given_once_a_process_and_let_go_after_the_start(tmp_path: Path, bare: Strip) -> None:
    made = generated.record()
    point()
    path = generated.write(made, str(tmp_path / "generated.bin"))
    with pytest.raises(RuntimeError):
        generated.record()
    assert not generated.load(path), "given twice"
    bare()
    again: generated.Codes = {}
    shelf = generated.read(path)
    assert shelf is not None and generated.install(shelf, again)
    point()
    assert again == {}
    generated.forget()
    point()
    assert again, "code let go was handed out still"


@pytest.mark.parametrize(
    "content",
    [
        b"",
        b"\0\0\0\0" + FILE_OF_NOTHING,  # another bytecode's
        MAGIC_NUMBER + b"\xff",
        MAGIC_NUMBER + (2).to_bytes(4, "little") + bytes(20),  # cut short
        MAGIC_NUMBER + generated.Shelf.of({bytes(generated.DIGEST): compile("", "", "exec")})[:-1],
    ],
)
def test_a_file_stale_or_broken_changes_nothing(
    tmp_path: Path, bare: Strip, content: bytes
) -> None:
    path = tmp_path / "generated.bin"
    path.write_bytes(content)
    assert generated.read(str(path)) is None
    assert not generated.load(str(path))
    assert not generated.load(str(tmp_path / "missing.bin"))
    assert all(
        builtin not in vars(importlib.import_module(name)) for name, builtin in generated.COMPILERS
    )


def test_each_piece_is_found_by_its_whole_digest() -> None:
    one, two = compile("x = 1", "<x>", "exec"), compile("x = 2", "<x>", "exec")
    ones = b"\x01" * (generated.DIGEST // 2)
    halves = bytes(generated.DIGEST // 2)
    made = {halves + ones: one, ones + halves: one}  # ones * 2 across their border
    assert generated.Shelf(memoryview(generated.Shelf.of(made))).get(ones * 2) is None
    made[ones * 2] = two
    shelf = generated.Shelf(memoryview(generated.Shelf.of(made)))
    assert shelf.get(ones * 2) == two and shelf.get(halves + ones) == one
    shelf.clear()
    assert shelf.get(ones * 2) is None


def test_a_piece_that_is_no_code_is_not_found() -> None:
    key, code = bytes(generated.DIGEST), compile("", "", "exec")
    size = len(marshal.dumps(code))
    garbled = generated.Shelf.of({key: code})[:-size] + b"\xff" * size
    not_code = generated.Shelf.of({key: cast(CodeType, (1, 2))})
    for content in (garbled, not_code):
        assert generated.Shelf(memoryview(content)).get(key) is None


def hashed(number: int) -> str:
    """A text as attrs writes it for a frozen class, with its seeded number."""
    return (
        "def __eq__(self, other):\n    return self.a == other.a\n"
        "def __hash__(self):\n        return hash((\n"
        f"                {number},\n                self.a,\n            ))\n"
    )


@pytest.mark.parametrize("number", [-1234567890123456789, 98765432109876543, 7])
def test_a_text_with_a_seeded_number_is_found_with_its_own(bare: Strip, number: int) -> None:
    """attrs writes into a frozen class's __hash__ what its name hashes to: another number
    at each hash seed. The file holds its code for the widths a number has but once in
    1,000 starts, and that code is handed out with the start's number; one of another
    width is compiled as before."""
    filename = "<attrs generated methods pair.Pair>"
    made = generated.record()
    compiler = vars(importlib.import_module("attr._make"))["compile"]
    compiler(hashed(4_000_000_000_000_000_000), filename, "exec")
    assert len(made) == len(generated.SEEDED_WIDTHS)
    bare()
    again: generated.Codes = {}
    assert generated.install(generated.Shelf(memoryview(generated.Shelf.of(made))), again)
    compiler = vars(importlib.import_module("attr._make"))["compile"]
    code = compiler(hashed(number), filename, "exec")
    assert bool(again) == (len(str(number)) not in generated.SEEDED_WIDTHS)
    annotations = importlib.import_module("__future__").annotations.compiler_flag
    assert code == compile(hashed(number), filename, "exec", annotations, True)
    namespace: dict[str, Callable[[object], int]] = {}
    exec(code, namespace)
    assert namespace["__hash__"](SimpleNamespace(a="a")) == hash((number, "a"))


def test_what_the_compilers_are_not_asked_plainly_is_compiled_as_asked(bare: Strip) -> None:
    generated.record()
    attrs_compile = vars(importlib.import_module("attr._make"))["compile"]
    source = "def f(x: int) -> None: pass\n"
    # Asked to inherit nothing: no `from __future__ import annotations`, as the builtin.
    told = attrs_compile(source, "<f>", "exec", dont_inherit=True)
    assert told == compile(source, "<f>", "exec", 0, True)
    namespace: dict[str, object] = {}
    vars(dataclasses)["exec"](told, namespace)
    assert namespace["f"].__annotations__ == {"x": int, "return": None}


def test_the_file_is_beside_the_packages_bytecode() -> None:
    assert generated.FILE is not None
    assert Path(generated.FILE).parent == Path(generated.__file__).parent / "__pycache__"


#: A module that compiles a text as it is imported, as attr._make does for attrs' own
#: classes.
COMPILING = 'from __future__ import annotations\ncode = compile("x: int = 1", "<made>", "exec")\n'


def test_a_module_not_imported_yet_is_given_its_compiler_before_its_code_runs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "compiling_at_import.py").write_text(COMPILING)
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delitem(sys.modules, "compiling_at_import", raising=False)
    asked: list[tuple[str, str]] = []

    def compiler(source: str, filename: str, mode: str) -> CodeType:
        asked.append((source, filename))
        return compile(source, filename, mode)

    giving = generated.Giving("compiling_at_import", "compile", compiler)
    monkeypatch.setattr(sys, "meta_path", [giving, *sys.meta_path])
    spec = importlib.util.find_spec("compiling_at_import")  # asked, not loaded
    assert spec is not None and giving in sys.meta_path
    assert generated.Giving.waiting("compiling_at_import")
    module = importlib.import_module("compiling_at_import")
    assert asked == [("x: int = 1", "<made>")] and vars(module)["compile"] is compiler
    assert giving not in sys.meta_path and "exec_module" not in vars(module.__loader__)
    assert not generated.Giving.waiting("compiling_at_import")
