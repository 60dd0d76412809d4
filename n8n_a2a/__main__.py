"""The `n8n-a2a` command: check the environment, then serve the adapter."""

from __future__ import annotations

import gc

#: Container objects made, net of those freed, between two young passes of the
#: collector: Python's 700 (2,000 from 3.14) made for a server seventy times as many.
YOUNG_GENERATION = 50_000

# The imports below make some 45,000 objects that live as long as the process. They run
# with the collector off, and what they made is frozen after them (as what the start
# makes next is once it listens: FreezeWhenListening): no pass of the collector scans
# any of it, then or later. At Python's 700 there was a young pass each 700 of them and
# older ones over all made so far; at YOUNG_GENERATION, a young pass over them all, 3 % of
# the instructions to the card, which freed their cyclic garbage: some 2,000 objects (the
# classes dataclass(slots=True) and attrs make anew, attrs' builders), frozen with the
# rest instead, 0.2 MiB more at idle. And before them, the generated code of the
# dataclasses (and trio's attrs classes) they define is read compiled
# (prebuilt/generated.py).
_collecting = gc.isenabled()
gc.disable()

from .prebuilt.generated import forget, load

load()

# trio's modules and hypercorn's that the start never uses stood in for, before trio is
# imported (http/unused.py).
from .http.unused import defer_unused

defer_unused()

import json
import sys
from functools import partial
from types import SimpleNamespace
from typing import TYPE_CHECKING

import trio

from . import __version__
from .app.card import card_facts, served_card
from .config import VARIABLES, ConfigError, Settings, doubts, load_settings
from .config.tracing import ENDPOINT_VARIABLES, tracing_requested
from .observability import traces
from .observability.logs import configure_logging
from .server import CannotListen, serve

if TYPE_CHECKING:
    import argparse

gc.freeze()
if _collecting:
    gc.enable()


def main(argv: list[str] | None = None) -> None:
    argv = sys.argv[1:] if argv is None else argv
    # A server's start has none (the image's): no parser, nor argparse's import (1 %).
    arguments = parser().parse_args(argv) if argv else NO_ARGUMENTS
    try:
        settings = load_settings()
    except ConfigError as error:
        for problem in error.problems:
            print(f"n8n-a2a: configuration error: {problem}", file=sys.stderr)
        raise SystemExit(2) from None
    for doubt in doubts(settings):
        print(f"n8n-a2a: warning: {doubt}", file=sys.stderr)
    if arguments.check:
        card = served_card(card_facts(settings), settings.card_signer, legacy=True)
        print(json.dumps(card, indent=2))
        return
    if arguments.probe:
        _probe(settings)
    configure_logging(settings.log_level, settings.log_format)
    if tracing_requested():
        _start_tracing()
    tune_collector()
    try:
        trio.run(partial(serve, settings, task_status=FreezeWhenListening()))
    except CannotListen as error:
        print(f"n8n-a2a: {error}", file=sys.stderr)
        raise SystemExit(3) from None
    finally:
        traces.stop()  # the spans still held go out


def _probe(settings: Settings) -> None:
    """Say whether n8n has ADAPTER_WEBHOOK_URL's webhook registered, running nothing
    (webhook/probe.py); exit 0 if it has, 1 if not."""
    from .webhook.probe import probe  # httpx: only for this, never at a server's start

    run = partial(probe, settings.webhook_url, ca_bundle=settings.ca_bundle, patience=10.0)
    probed = trio.run(run)
    print(f"n8n-a2a: probe of ADAPTER_WEBHOOK_URL {settings.webhook_url}: {probed.finding}")
    raise SystemExit(0 if probed.registered else 1)


def tune_collector() -> None:
    """Make the collector's young generation YOUNG_GENERATION objects.

    Each send under way holds some 190 of them (43 coroutines among them, trio's cancel
    scopes, its connections' state) until its webhook answers: a burst of 1,000 slow sends
    holds 190,000. At 10,000 a burst had 20 young passes and 2 middle ones, each scanning
    the sends still under way again, and one in a few the full pass over everything the
    process holds (some 250,000 objects with 10,000 tasks kept); 16 % of the burst's CPU
    went to the collector, and more to the caches it emptied. At 50,000: 5 young passes,
    none of the others. What the adapter leaves to the collector, cyclic garbage, is
    rare (a connection, a call make none), so what waits longer for it stays small."""
    gc.set_threshold(YOUNG_GENERATION, *gc.get_threshold()[1:])


class FreezeWhenListening:
    """serve()'s task status in the command: once it listens, gc.freeze().

    What the start made after its imports (the app, its tables; the imports' own objects
    were frozen after them) lives as long as the process; frozen, no pass of the
    collector scans it again. Nothing is collected first: that would be a full pass on
    the way to the first request, for the few objects of cyclic garbage the start leaves
    (the imports' 2,000, 0.2 MiB, are frozen too). The compiled generated code read for
    the start (prebuilt/generated.py) is let go first: its classes are made."""

    def started(self, value: list[str] | None = None) -> None:
        forget()
        gc.freeze()


def _start_tracing() -> None:
    try:
        traces.start()
    except ImportError:
        print(
            f"n8n-a2a: configuration error: {' or '.join(ENDPOINT_VARIABLES)} is set, but "
            "tracing needs the otel extra: pip install 'n8n-a2a[otel]'",
            file=sys.stderr,
        )
        raise SystemExit(2) from None


#: What the parser makes of no arguments (tests/test_main.py holds the two the same).
NO_ARGUMENTS = SimpleNamespace(check=False, probe=False)


def parser() -> argparse.ArgumentParser:
    import argparse

    parser = argparse.ArgumentParser(
        prog="n8n-a2a",
        description="Serve an A2A agent in front of one n8n workflow, configured by the\n"
        "ADAPTER_* environment variables below.",
        epilog=_variables(),
        # The table of variables keeps its columns; argparse would refill it as prose.
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument(
        "--check", action="store_true", help="validate the environment, print the card and exit"
    )
    parser.add_argument(
        "--probe",
        action="store_true",
        help="validate the environment, then ask n8n whether the webhook is registered (a CORS "
        "preflight: no workflow runs), print what it says and exit 0 if it is, 1 if not",
    )
    parser.add_argument("--version", action="version", version=f"n8n-a2a {__version__}")
    return parser


def _variables() -> str:
    """Every variable, one a line: the required ones first, then the others with defaults."""
    width = max(len(variable.name) for variable in VARIABLES)
    lines = []
    for heading, required in (("required", True), ("optional", False)):
        lines.append(f"{heading} environment variables:")
        for variable in (v for v in VARIABLES if v.required == required):
            default = variable.shown_default
            meaning = variable.summary + (f" (default {default})" if default else "")
            lines.append(f"  {variable.name:<{width}}  {meaning}")
    return "\n".join(lines)


if __name__ == "__main__":
    main()
