"""The code dataclasses and attrs generate, compiled once instead of at every start.

A dataclass writes its methods (__init__, __repr__, __eq__; __hash__, __setattr__ and
__delattr__ too when frozen) as source text as its class is defined, and compiles each;
attrs does the same for trio's classes. Parsing and compiling that text, the same at
every start, was a third of a start's instructions (390 million of 1,270 to the card:
n8n_a2a's 602 methods, hypercorn's, h11's and the others', trio's). So the build compiles it once
for this interpreter (`python -m n8n_a2a.prebuilt`, beside pip's compiling of the
bytecode at install) into FILE, and the command reads FILE before it imports anything
that defines such a class (`load`): from then on, dataclasses and attrs are handed the
code already compiled from a text FILE holds.

It is the code compiling the text makes: a text is found by the BLAKE2b digest of itself,
its file name, its mode and the compiler flags its caller's module gives it (attrs'
compiles under `from __future__ import annotations`), in a FILE for this bytecode (its
magic number first, the interpreter's cache tag in its name). A text FILE does not hold is
compiled as before, and a missing, stale or unreadable FILE costs the start its compiling,
nothing else. attrs writes into a frozen class's __hash__ a number its hash seed makes,
another at each start: such a text is found with a number of the same width in its place
(`Seeded`), and its code handed out with its own number (trio's twenty such classes were
compiled anew at every start, 30 million instructions). typing compiles the text of each
forward reference (a TypedDict's fields, under `from __future__ import annotations`):
that code is handed out too. Each module is given its compiler in its own namespace
(`dataclasses.exec`, `attr._make.compile`, `typing.compile`, found before the builtin):
the builtins stay as they are for everything else. One not imported yet is given it as
it is (`Giving`), before its code runs: attrs' own classes, defined as attr._make is
imported (by trio), were compiled anew at every start (16 million instructions).
"""

from __future__ import annotations

import builtins
import importlib
import importlib.util
import itertools
import marshal
import os
import sys
from collections.abc import Callable
from importlib.machinery import ModuleSpec
from importlib.util import MAGIC_NUMBER
from types import CodeType, ModuleType
from typing import Any

try:  # hashlib's own blake2b, without hashlib's import of OpenSSL's digests (_hashlib)
    from _blake2 import blake2b
except ImportError:  # an interpreter without the module: hashlib's
    from hashlib import blake2b

#: Code by what it is compiled from (its source, file name, mode and compiler flags), as
#: their BLAKE2b digest of DIGEST bytes: the texts themselves would be read for nothing.
Codes = dict[bytes, CodeType]
DIGEST = 16
#: A compiler of generated code: source, file name, mode and flags in, its code out.
CodeOf = Callable[[str, str, str, int], CodeType]

#: The widths of attrs' seeded numbers FILE holds the code for: all but one in 1,000 of
#: them (a 64-bit hash has 19 digits nine times in ten, 18 one in ten, and a sign half the
#: time).
SEEDED_WIDTHS = range(17, 21)
#: What precedes the seeded number, on a line of its own, in attrs' __hash__.
HASHED = "hash((\n"

#: The modules that compile the code they generate (or, typing, forward references' text),
#: and the builtin each calls for it.
COMPILERS = (("dataclasses", "exec"), ("attr._make", "compile"), ("typing", "compile"))
#: Beside the package's bytecode, for this interpreter's (None: it keeps none).
FILE = (
    None
    if sys.implementation.cache_tag is None
    else os.path.join(
        os.path.dirname(__file__), "__pycache__", f"generated.{sys.implementation.cache_tag}.bin"
    )
)


class Shelf:
    """Compiled code as FILE holds it, after its magic number: how many pieces (4 bytes),
    their digests (DIGEST bytes each), where each ends (4 bytes each), then each piece of
    code marshalled alone. A piece is found by its digest in the bytes read from FILE and
    unmarshalled when asked for: no object a piece until then. Unmarshalled all at once,
    or indexed by a dict, the start's other objects would be made among them, and their
    room stay resident once let go (0.3 MiB at idle)."""

    def __init__(self, data: memoryview) -> None:
        count = int.from_bytes(data[:4], "little")
        self._digests = data[4 : 4 + DIGEST * count].tobytes()
        self._ends = data[4 + DIGEST * count : 4 + (DIGEST + 4) * count]
        self._pieces = data[4 + (DIGEST + 4) * count :]
        last = int.from_bytes(self._ends[-4:], "little") if count else 0
        if len(self._ends) != 4 * count or last != len(self._pieces):
            raise ValueError("not whole")

    def get(self, key: bytes) -> CodeType | None:
        at = self._digests.find(key)
        while at > 0 and at % DIGEST:  # across two digests' border: not one
            at = self._digests.find(key, at + 1)
        if at < 0:
            return None
        index, ends = at // DIGEST, self._ends
        start = int.from_bytes(ends[4 * index - 4 : 4 * index], "little") if index else 0
        end = int.from_bytes(ends[4 * index : 4 * index + 4], "little")
        try:
            code = marshal.loads(self._pieces[start:end])
        except (EOFError, ValueError, TypeError):
            return None
        return code if isinstance(code, CodeType) else None

    def clear(self) -> None:
        self._digests, self._ends, self._pieces = b"", memoryview(b""), memoryview(b"")

    @staticmethod
    def of(made: Codes) -> bytes:
        """What `made` is shelved as."""
        pieces = [marshal.dumps(code) for code in made.values()]
        ends = itertools.accumulate(len(piece) for piece in pieces)
        return b"".join(
            [
                len(made).to_bytes(4, "little"),
                *made,
                *(end.to_bytes(4, "little") for end in ends),
                *pieces,
            ]
        )


#: The shelves of code handed out, for `forget`.
_GIVEN: list[Shelf] = []


def load(path: str | None = None) -> bool:
    """Hand the code compiled at `path` (FILE) to the compilers; False if there is none
    for this interpreter, or they were given theirs already (nothing changes then)."""
    shelf = read(path)
    return shelf is not None and install(shelf)


def forget() -> None:
    """Let go of the code handed out by `load`, once the start has defined its classes
    (a class defined later, at a request, has its code compiled as before)."""
    for shelf in _GIVEN:
        shelf.clear()


def record() -> Codes:
    """Give the compilers no code, and keep all they compile: what `write` writes."""
    made: Codes = {}
    if not install(Shelf(memoryview(Shelf.of({}))), made):
        raise RuntimeError("the compilers of generated code were given theirs already")
    return made


def read(path: str | None = None) -> Shelf | None:
    """The code at `path` (FILE); None if it is missing, unreadable or for other bytecode."""
    path = path or FILE
    if path is None:
        return None
    try:
        with open(path, "rb") as file:
            data = file.read()
    except OSError:
        return None
    if not data.startswith(MAGIC_NUMBER):
        return None
    try:
        return Shelf(memoryview(data)[len(MAGIC_NUMBER) :])
    except ValueError:
        return None


def write(made: Codes, path: str | None = None) -> str:
    """Write `made` at `path` (FILE), whole: a start reads the old file or the new one."""
    path = path or FILE
    if path is None:
        raise RuntimeError(f"{sys.implementation.name} keeps no compiled bytecode")
    os.makedirs(os.path.dirname(path), exist_ok=True)
    partial = f"{path}.{os.getpid()}"
    with open(partial, "wb") as file:
        file.write(MAGIC_NUMBER + Shelf.of(made))
    os.replace(partial, path)
    return path


def install(shelf: Shelf, made: Codes | None = None) -> bool:
    """Give each module of COMPILERS its compiler, handing out the code on `shelf` (and
    keeping in `made`, if given, what it compiles for want of it): in its namespace if it
    is imported, else as it is (`Giving`: attrs' own classes, defined as it is imported,
    get theirs too). False if one has one already: once a process."""
    givens: list[tuple[str, str, Callable[..., Any]]] = []
    code_of = _code_of(shelf, made)
    for name, builtin in COMPILERS:
        module = sys.modules.get(name)
        if module is None and importlib.util.find_spec(name.partition(".")[0]) is None:
            continue  # attrs is trio's: there unless trio is gone
        if (module is not None and builtin in vars(module)) or Giving.waiting(name):
            return False
        compiler = _exec(code_of, name) if builtin == "exec" else _compile(code_of, name)
        givens.append((name, builtin, compiler))
    for name, builtin, compiler in givens:
        if name in sys.modules:
            setattr(sys.modules[name], builtin, compiler)
        else:
            sys.meta_path.insert(0, Giving(name, builtin, compiler))
    _GIVEN.append(shelf)
    return True


class Giving:
    """A finder of no module, first on sys.meta_path until `name` is imported: the
    loader the other finders find for it puts `builtin` in the module's namespace before
    it runs the module's code (a spec asked for and not loaded changes nothing)."""

    def __init__(self, name: str, builtin: str, compiler: Callable[..., Any]) -> None:
        self.name, self.builtin, self.compiler = name, builtin, compiler

    @staticmethod
    def waiting(name: str) -> bool:
        return any(isinstance(f, Giving) and f.name == name for f in sys.meta_path)

    def find_spec(self, name: str, path: Any = None, target: Any = None) -> ModuleSpec | None:
        if name != self.name:
            return None
        spec = None
        for finder in sys.meta_path:
            find = None if finder is self else getattr(finder, "find_spec", None)
            if find is not None and (spec := find(name, path, target)) is not None:
                break
        loader = spec.loader if spec is not None else None
        run = getattr(loader, "exec_module", None)
        if run is None:
            return spec

        def exec_module(module: ModuleType) -> None:
            setattr(module, self.builtin, self.compiler)
            del vars(loader)["exec_module"]  # the loader's own again
            if self in sys.meta_path:
                sys.meta_path.remove(self)
            run(module)

        vars(loader)["exec_module"] = exec_module  # this loader's, this module's only
        return spec


def _future_flags(module: ModuleType) -> int:
    """The compiler flags code called from `module` compiles with, not told otherwise:
    those of its `from __future__` imports."""
    future = importlib.import_module("__future__")
    names = vars(module)
    flags = 0
    for name in future.all_feature_names:
        feature = getattr(future, name)
        if name in names and names[name] is feature:
            flags |= feature.compiler_flag
    return int(flags)


def _code_of(shelf: Shelf, made: Codes | None) -> CodeOf:
    def code_of(source: str, filename: str, mode: str, flags: int) -> CodeType:
        seeded = Seeded.of(source)
        if seeded is None:
            return found(source, filename, mode, flags)
        if made is not None:  # the build: each width a start may write
            for width in SEEDED_WIDTHS:
                found(seeded.text(width), filename, mode, flags)
        return seeded.given(found(seeded.text(), filename, mode, flags))

    def found(source: str, filename: str, mode: str, flags: int) -> CodeType:
        text = f"{flags} {mode} {filename}\n{source}".encode()
        key = blake2b(text, digest_size=DIGEST).digest()
        code = shelf.get(key)
        if code is None:
            code = builtins.compile(source, filename, mode, flags, True)
            if made is not None:
                made[key] = code
        return code

    return code_of


class Seeded:
    """A text of attrs' with a frozen class's __hash__, whose number (what the class's
    generated file name hashes to) the hash seed makes: written at `start` of the text
    as `written`. Its code is compiled from the text with a stand-in of the same width,
    ones (the same positions then for every instruction), and given its number back."""

    def __init__(self, source: str, start: int, written: str, number: int) -> None:
        self.source, self.start, self.written, self.number = source, start, written, number

    @classmethod
    def of(cls, source: str) -> Seeded | None:
        at = source.find(HASHED)
        if at < 0:
            return None
        begin = at + len(HASHED)
        line = source[begin : source.find("\n", begin)]
        indent = len(line) - len(line.lstrip(" "))
        written = line[indent:-1]
        if not written.removeprefix("-").isdecimal() or not line.endswith(","):
            return None  # not as attrs writes it: compiled as it is
        return cls(source, begin + indent, written, int(written))

    def text(self, width: int | None = None) -> str:
        """The text with a stand-in of `width` (the number's own) in the number's place."""
        stand_in = "1" * (width or len(self.written))
        return self.source[: self.start] + stand_in + self.source[self.start + len(self.written) :]

    def given(self, code: CodeType) -> CodeType:
        """`code` compiled from text(), its __hash__ given the number for the stand-in."""
        return _given(code, self.number, int("1" * len(self.written)))


def _given(code: CodeType, number: int, stand_in: int) -> CodeType:
    constants = tuple(
        _given(constant, number, stand_in)
        if type(constant) is CodeType
        else number
        if code.co_name == "__hash__" and type(constant) is int and constant == stand_in
        else constant
        for constant in code.co_consts
    )
    return code.replace(co_consts=constants)


def _exec(code_of: CodeOf, name: str) -> Callable[..., Any]:
    """builtins.exec as called from module `name`, a text's code found by `code_of`."""
    flags = _Flags(name)

    def exec_(source: Any, /, *args: Any, **kwargs: Any) -> Any:
        if type(source) is str:
            source = code_of(source, "<string>", "exec", flags.of())
        return builtins.exec(source, *args, **kwargs)

    return exec_


def _compile(code_of: CodeOf, name: str) -> Callable[..., Any]:
    """builtins.compile as called from module `name`, a text's code found by `code_of`
    where it is asked as that module would (no flags, no optimization level of its own)."""
    module_flags = _Flags(name)

    def compile_(
        source: Any,
        filename: Any,
        mode: str,
        flags: int = 0,
        dont_inherit: bool = False,
        optimize: int = -1,
        **kwargs: Any,
    ) -> Any:
        inherited = module_flags.of()
        if not dont_inherit:
            flags |= inherited
        asked_plainly = flags == inherited and optimize == -1 and not kwargs
        if asked_plainly and type(source) is str and type(filename) is str:
            return code_of(source, filename, mode, flags)
        return builtins.compile(source, filename, mode, flags, True, optimize, **kwargs)

    return compile_


class _Flags:
    """The compiler flags of module `name`'s `from __future__` imports, read at the first
    compile it asks for (its namespace has them by then, if it was not imported before)."""

    def __init__(self, name: str) -> None:
        self.name, self.flags = name, -1

    def of(self) -> int:
        if self.flags < 0:
            self.flags = _future_flags(sys.modules[self.name])
        return self.flags
