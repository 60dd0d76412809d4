"""What hypercorn and trio import for what the adapter never asks of them, stood in for
until used.

hypercorn imports at its own import: its HTTP/2 protocol (its protocol package does), its
WebSocket stream (its HTTP/1.1 protocol), h2's events (its typing module), and with them
h2, hpack, hyperframe, priority and wsproto, for protocols the adapter refuses
(framing.py turns the HTTP/2 preface down and drops `Upgrade`; a plain TCP stream has no
ALPN to ask for h2); tomllib and logging.config (its config and logging
modules), for configuration files the adapter never gives it (it is configured by its
environment, and logs its own way); multiprocessing's synchronize (its typing and
utils), for its multi-process runner's annotations; its typing module, TypedDicts and
Protocols for its annotations (12 million instructions); and ssl (its config), for TLS
the adapter never asks of it (it serves plain HTTP), with OpenSSL's libraries.
`defer_unused`, run by the command before it imports trio (and as this package is
imported: before the seam imports hypercorn's protocol package, or server.py its
config), puts a stand-in for each in sys.modules: a name hypercorn's modules import
from one (H2Protocol, WSStream, dictConfig, fileConfig, Event, the types) is a function
that imports the module at its first call and calls the name's own, but for a NewType,
one of the stand-in's own (ConnectionState, called on every connection, gives back what
it is given), and for ssl's, a Forwarding (FORWARDED); any other name imports the module
as it is looked up. Nothing changes but when they are imported: in the adapter, never,
but for ssl, as the first https URL (a webhook's, a push's, an issuer's) is dialled or a
CA bundle is read. Its HTTP/1.1 protocol's module, which its protocol package imports
(and with it h11 and its HTTPStream), is not stood in for but replaced (REPLACED): the
adapter serves HTTP/1.1 with its own protocol, and hypercorn_h11.py, put in that
module's place, hands hypercorn's protocol package the adapter's as its H11Protocol.

trio imports, as it is imported, its DTLS, TLS, subprocess, path and file modules, and
its thread cache, which looks for the pthread library (ctypes.util, which runs
`ldconfig -p` in a child process). The adapter's start uses none of them: DTLS,
subprocesses, async paths and files never; TLS for an https webhook, a push to an https
URL or an issuer's keys; a thread to look a host name up, for the first scrape's metrics
or for the shared store. So, when trio is not imported yet, each of those modules is a
stand-in while it is: the names trio's namespaces (the package, trio.lowlevel) take from
one are taken out of them again, and each imports its module as it is first looked up
there (`trio.SSLStream`), with the public metadata trio gives its names (`__module__`
"trio"); the thread cache's one name, start_thread_soon, is a function that imports it
at its first call, as hypercorn's are. (The ssl module itself is imported by hypercorn's
config all the same.)

tests/http/test_unused.py pins how hypercorn and trio use them (a release that uses them
otherwise fails there), and that each works when it is used; tests/test_server.py that a
start imports none of them, and that the command calls an https webhook by its name.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable
from types import ModuleType
from typing import Any, NewType

#: Each module stood in for, and the names hypercorn's own modules import from it.
UNUSED: dict[str, tuple[str, ...]] = {
    "hypercorn.protocol.h2": ("H2Protocol",),
    "hypercorn.protocol.ws_stream": ("WSStream",),
    "h2.events": (),  # hypercorn.typing: `import h2.events`, read in annotations only
    "tomllib": (),  # `import tomllib`, read by Config.from_toml and a TOML logconfig
    "logging.config": ("dictConfig", "fileConfig"),  # called for a logconfig
    # hypercorn.typing, utils and trio.run: `from multiprocessing.synchronize import Event
    # as EventType`, for the multi-process runner's annotations (and typing's WorkerFunc).
    "multiprocessing.synchronize": ("Event",),
    "ssl": (),  # FORWARDED's
    "hypercorn.typing": (
        # Its ASGI and protocol types: in annotations (text), and at run time a type given
        # to cast() or as a memory channel's argument, where a function does as well as
        # the type; and ConnectionState (NEW_TYPES), called on each connection.
        "ASGIFramework",
        "ASGIReceiveCallable",
        "ASGIReceiveEvent",
        "ASGISendCallable",
        "ASGISendEvent",
        "AppWrapper",
        "ConnectionState",
        "Event",
        "Framework",
        "H11SendableEvent",
        "HTTPResponseStartEvent",
        "HTTPScope",
        "LifespanScope",
        "LifespanState",
        "ResponseSummary",
        "Scope",
        "SingleTask",
        "TaskGroup",
        "WSGIFramework",
        "WWWScope",
        "WebsocketAcceptEvent",
        "WebsocketResponseBodyEvent",
        "WebsocketResponseStartEvent",
        "WebsocketScope",
        "WorkerContext",
        "WorkerFunc",
    ),
}
#: The ssl module, which hypercorn's config imports seven names from, for TLS the adapter
#: never asks of it (it serves plain HTTP), and with them OpenSSL's libraries (24 million
#: instructions): the webhook's client, a push's and an issuer's import it as each first
#: dials https, or a CA bundle is configured. Its names are FORWARDED: each, called or an
#: attribute of it read (Purpose.CLIENT_AUTH), is the module's own, imported then; and
#: as it is, the modules that took them get the module's own in their place (`imported`),
#: for those they read as values (OP_NO_COMPRESSION, after create_default_context's call).
FORWARDED = {
    "ssl": (
        "OP_NO_COMPRESSION",
        "Purpose",
        "SSLContext",
        "TLSVersion",
        "VerifyFlags",
        "VerifyMode",
        "create_default_context",
    )
}
#: hypercorn's modules whose place a module of the adapter's takes in sys.modules, for
#: good: its HTTP/1.1 protocol's, whose H11Protocol is the adapter's (hypercorn_h11.py).
REPLACED = {"hypercorn.protocol.h11": "n8n_a2a.http.hypercorn_h11"}
#: Names of UNUSED's that are NewTypes, called at run time: a NewType gives back what it
#: is called with, so the stand-in's is a NewType of its own, called without importing
#: the module (hypercorn's typing: its connections' state, on every connection).
NEW_TYPES = {"hypercorn.typing": ("ConnectionState",)}
#: Packages not imported for their module's stand-in: multiprocessing's own (its
#: contexts, pickle) would be two fifths of what the stand-in saves. Such a stand-in is
#: taken out of sys.modules as its package is imported (`Unimported`).
PACKAGES_LEFT = ("multiprocessing",)


#: trio's modules the adapter's start does not use, and the names trio's namespaces take
#: from each as trio is imported: imported as such a name is first looked up.
TRIO_UNUSED: dict[str, tuple[str, ...]] = {
    "trio._dtls": ("DTLSChannel", "DTLSChannelStatistics", "DTLSEndpoint"),
    "trio._ssl": ("NeedHandshakeError", "SSLListener", "SSLStream"),
    "trio._highlevel_ssl_helpers": (
        "open_ssl_over_tcp_listeners",
        "open_ssl_over_tcp_stream",
        "serve_ssl_over_tcp",
    ),
    "trio._subprocess": ("Process", "open_process", "run_process"),
    "trio._path": ("Path", "PosixPath", "WindowsPath"),
    "trio._file_io": ("open_file", "wrap_file"),
}
#: trio's namespaces that take names from TRIO_UNUSED's modules.
TRIO_NAMESPACES = ("trio", "trio.lowlevel")
#: trio's thread cache, and the one name trio takes from it (a function).
THREAD_CACHE = ("trio._core._thread_cache", ("start_thread_soon",))


class StandIn(ModuleType):
    """A module not imported yet, whose names import it as they are used."""

    def __init__(self, name: str, names: tuple[str, ...]) -> None:
        super().__init__(name, f"stands in for {name}, imported at its first use")
        for each in names:
            setattr(self, each, _calling(name, each))
        for each in NEW_TYPES.get(name, ()):
            setattr(self, each, NewType(each, Any))
        for each in FORWARDED.get(name, ()):
            setattr(self, each, Forwarding(name, each))

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__"):  # what the import system asks of any module
            raise AttributeError(name)
        return getattr(imported(self.__name__), name)


class Unbound:
    """What a name of trio's takes from a module of TRIO_UNUSED while trio is imported:
    taken out of trio's namespaces once it is."""


def defer_unused() -> None:
    """Stand in for trio's modules, then for hypercorn's: each unless what imports them
    is imported already."""
    if "trio" not in sys.modules:
        _defer_trio()
    if "hypercorn.protocol" not in sys.modules:
        _defer_hypercorn()


def _defer_hypercorn() -> None:
    """Stand in for each module of UNUSED not imported already; then put each of REPLACED's
    own in its module's place (imported once the stand-ins are: ours imports hypercorn's
    config, which imports ssl)."""
    stand_ins: dict[str, ModuleType] = {
        name: StandIn(name, names) for name, names in UNUSED.items() if name not in sys.modules
    }
    sys.modules.update(stand_ins)
    for name, ours in REPLACED.items():
        if name not in sys.modules:
            stand_ins[name] = sys.modules[name] = importlib.import_module(ours)
    for name, stand_in in stand_ins.items():
        package, _, module = name.rpartition(".")
        if package in PACKAGES_LEFT and package not in sys.modules:
            sys.meta_path.insert(0, Unimported(package, name))
        elif package:
            setattr(importlib.import_module(package), module, stand_in)


class Unimported:
    """A finder of no module, first on sys.meta_path while `package` is not imported:
    as it is, the stand-in for its `module` is taken out of sys.modules (the package has
    no attribute for it: `import package.module` finds the module itself from then on),
    and the finder out of sys.meta_path."""

    def __init__(self, package: str, module: str) -> None:
        self.package, self.module = package, module

    def find_spec(self, name: str, path: object = None, target: object = None) -> None:
        if name == self.package:
            sys.meta_path.remove(self)
            if isinstance(sys.modules.get(self.module), StandIn):
                del sys.modules[self.module]


def _defer_trio() -> None:
    """Import trio with a stand-in for each module of TRIO_UNUSED and for its thread
    cache; then take the names its namespaces took from the first out of them."""
    unbound = {name: ModuleType(name, "stands in while trio is imported") for name in TRIO_UNUSED}
    for name, module in unbound.items():
        for each in TRIO_UNUSED[name]:
            setattr(module, each, Unbound())
    cache, names = THREAD_CACHE
    sys.modules.update({**unbound, cache: StandIn(cache, names)})
    try:
        importlib.import_module("trio")
    finally:
        for name, module in unbound.items():
            if sys.modules.get(name) is module:
                del sys.modules[name]
    for namespace in TRIO_NAMESPACES:
        _unbind(importlib.import_module(namespace))
    setattr(importlib.import_module("trio._core"), cache.rpartition(".")[2], sys.modules[cache])


def _unbind(namespace: ModuleType) -> None:
    """Take each Unbound name out of `namespace`: its module is imported as it is first
    looked up there (PEP 562's __getattr__)."""
    taken = {name for name, value in vars(namespace).items() if isinstance(value, Unbound)}
    for name in taken:
        delattr(namespace, name)
    module_of = {
        name: module for module, names in TRIO_UNUSED.items() for name in names if name in taken
    }

    def __getattr__(name: str) -> Any:
        module = module_of.get(name)
        if module is None:
            raise AttributeError(f"module {namespace.__name__!r} has no attribute {name!r}")
        _bind(namespace, importlib.import_module(module), module_of)
        return vars(namespace)[name]

    vars(namespace)["__getattr__"] = __getattr__


def _bind(namespace: ModuleType, module: ModuleType, module_of: dict[str, str]) -> None:
    """Put back in `namespace` each name it takes from `module`, with the public metadata
    trio gives its names as it is imported (`__module__` the namespace's: tracebacks,
    pickling)."""
    names = {name: getattr(module, name) for name, of in module_of.items() if of == module.__name__}
    importlib.import_module("trio._util").fixup_module_metadata(namespace.__name__, names)
    for name, value in names.items():
        setattr(namespace, name, value)


def imported(name: str) -> ModuleType:
    """The module itself, imported now if a stand-in held its place; then every module's
    name for the stand-in, or for one of its names, is the module's own (`_rebind`)."""
    stand_in = sys.modules.get(name)
    if not isinstance(stand_in, StandIn):
        return importlib.import_module(name)
    del sys.modules[name]  # the package's attribute follows the import
    module = importlib.import_module(name)
    _rebind(stand_in, module)
    return module


def _rebind(stand_in: StandIn, module: ModuleType) -> None:
    """Give each module that took `stand_in`, or one of its names, the module's own in its
    place: what hypercorn's config reads as a value (OP_NO_COMPRESSION), and no stand-in
    between a caller and the module from then on (trio's thread cache, on every thread
    started; ssl in trio's TLS stream, imported while it stood in). Once a stand-in, some
    400 modules' names: 0.5 ms."""
    own: dict[int, object] = {id(stand_in): module}
    for taken, value in vars(stand_in).items():
        if not taken.startswith("__"):
            own[id(value)] = getattr(module, taken)
    for importer in list(sys.modules.values()):
        if not isinstance(importer, ModuleType) or isinstance(importer, StandIn):
            continue
        namespace = vars(importer)
        for global_name, value in list(namespace.items()):
            if id(value) in own:
                namespace[global_name] = own[id(value)]


class Forwarding:
    """A name of FORWARDED's module, taken from its stand-in: called, or an attribute of
    it read, it is the module's own name (the module imported then)."""

    def __init__(self, module: str, name: str) -> None:
        self.module, self.name = module, name

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self._own()(*args, **kwargs)

    def __getattr__(self, attribute: str) -> Any:
        if attribute.startswith("__"):
            raise AttributeError(attribute)
        return getattr(self._own(), attribute)

    def _own(self) -> Any:
        return getattr(imported(self.module), self.name)


def _calling(module: str, name: str) -> Callable[..., Any]:
    def call(*args: Any, **kwargs: Any) -> Any:
        return getattr(imported(module), name)(*args, **kwargs)

    call.__name__ = call.__qualname__ = name
    return call
