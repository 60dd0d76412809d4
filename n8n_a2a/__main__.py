"""The `n8n-a2a` command: check the environment, then serve the adapter."""

from __future__ import annotations

import argparse
import json
import os
import sys
from functools import partial

import trio

from .config import ConfigError, load_settings
from .logs import configure_logging
from .protocol.card import agent_card
from .server import CannotListen, serve


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        prog="n8n-a2a",
        description="Serve an A2A agent in front of one n8n workflow, configured by ADAPTER_* "
        "environment variables.",
    )
    parser.add_argument(
        "--check", action="store_true", help="validate the environment, print the card and exit"
    )
    arguments = parser.parse_args(argv)
    try:
        settings = load_settings(os.environ)
    except ConfigError as error:
        print(f"n8n-a2a: configuration error: {error}", file=sys.stderr)
        raise SystemExit(2) from None
    if arguments.check:
        print(json.dumps(agent_card(settings, legacy_fields=True), indent=2))
        return
    configure_logging(settings.log_level, settings.log_format)
    try:
        trio.run(partial(serve, settings))
    except CannotListen as error:
        print(f"n8n-a2a: {error}", file=sys.stderr)
        raise SystemExit(3) from None


if __name__ == "__main__":
    main()
