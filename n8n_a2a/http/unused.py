"""What hypercorn imports for what the adapter never asks of it, stood in for until used.

hypercorn imports at its own import: its HTTP/2 protocol (its protocol package does), its
WebSocket stream (its HTTP/1.1 protocol), h2's events (its typing module), and with them
h2, hpack, hyperframe, priority and wsproto, for protocols the adapter refuses
(framing.py turns the HTTP/2 preface down and drops `Upgrade`, the seam refuses a
protocol other than HTTP/1.1); and tomllib and logging.config (its config and logging
modules), for configuration files the adapter never gives it (it is configured by its
environment, and logs its own way). `defer_unused`, run as this package is imported
(before the seam imports hypercorn's protocol package, or server.py its config), puts a
stand-in for each in sys.modules: a name hypercorn's modules import from one (H2Protocol,
WSStream, dictConfig, fileConfig) is a function that imports the module at its first
call and calls the name's own, and any other name imports the module as it is looked
up. Nothing changes but when they are imported: in the adapter, never.
tests/http/test_unused.py pins how hypercorn uses them (a release that uses them
otherwise fails there).
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable
from types import ModuleType
from typing import Any

#: Each module stood in for, and the names hypercorn's own modules import from it.
UNUSED: dict[str, tuple[str, ...]] = {
    "hypercorn.protocol.h2": ("H2Protocol",),
    "hypercorn.protocol.ws_stream": ("WSStream",),
    "h2.events": (),  # hypercorn.typing: `import h2.events`, read in annotations only
    "tomllib": (),  # `import tomllib`, read by Config.from_toml and a TOML logconfig
    "logging.config": ("dictConfig", "fileConfig"),  # called for a logconfig
}


class StandIn(ModuleType):
    """A module not imported yet, whose names import it as they are used."""

    def __init__(self, name: str, names: tuple[str, ...]) -> None:
        super().__init__(name, f"stands in for {name}, imported at its first use")
        for each in names:
            setattr(self, each, _calling(name, each))

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__"):  # what the import system asks of any module
            raise AttributeError(name)
        return getattr(imported(self.__name__), name)


def defer_unused() -> None:
    """Stand in for each module of UNUSED, unless hypercorn's protocol package (which
    imports two of them) or the module itself is imported already."""
    if "hypercorn.protocol" in sys.modules:
        return
    stand_ins = {
        name: StandIn(name, names) for name, names in UNUSED.items() if name not in sys.modules
    }
    sys.modules.update(stand_ins)
    for name, stand_in in stand_ins.items():
        package, _, module = name.rpartition(".")
        if package:
            setattr(importlib.import_module(package), module, stand_in)


def imported(name: str) -> ModuleType:
    """The module itself, imported now if a stand-in held its place."""
    if isinstance(sys.modules.get(name), StandIn):
        del sys.modules[name]  # the package's attribute follows the import
    return importlib.import_module(name)


def _calling(module: str, name: str) -> Callable[..., Any]:
    def call(*args: Any, **kwargs: Any) -> Any:
        return getattr(imported(module), name)(*args, **kwargs)

    call.__name__ = call.__qualname__ = name
    return call
