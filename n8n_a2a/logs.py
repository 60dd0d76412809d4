"""Logging: one JSON object a line for machines, or key=value text for a terminal.

Structured fields travel in `extra={"fields": {...}}`. Nothing here ever sees a
request's headers: the token cannot reach a log line through this module.
"""

from __future__ import annotations

import json
import logging
import sys
from datetime import UTC, datetime
from typing import Any


def fields_of(record: logging.LogRecord) -> dict[str, Any]:
    found = getattr(record, "fields", None)
    return found if isinstance(found, dict) else {}


class JsonFormatter(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        line: dict[str, Any] = {
            "time": datetime.fromtimestamp(record.created, UTC).isoformat(timespec="milliseconds"),
            "level": record.levelname,
            "logger": record.name,
            "message": record.getMessage(),
            **fields_of(record),
        }
        if record.exc_info:
            line["exception"] = self.formatException(record.exc_info)
        return json.dumps(line, ensure_ascii=False, default=str)


class TextFormatter(logging.Formatter):
    def __init__(self) -> None:
        super().__init__("%(asctime)s %(levelname)-7s %(name)s: %(message)s")

    def format(self, record: logging.LogRecord) -> str:
        text = super().format(record)
        pairs = " ".join(f"{key}={value}" for key, value in fields_of(record).items())
        return f"{text} {pairs}" if pairs else text


def configure_logging(level: str, log_format: str) -> None:
    """Send every log line to stderr; `auto` is text on a terminal and JSON elsewhere."""
    use_json = log_format == "json" or (log_format == "auto" and not sys.stderr.isatty())
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(JsonFormatter() if use_json else TextFormatter())
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(level)
    # httpx logs each request at INFO ("HTTP Request: POST <webhook URL> ..."): a second
    # line per task, with the webhook's URL, whose path may be its secret, in every one.
    logging.getLogger("httpx").setLevel(max(logging.WARNING, root.level))
    # Hypercorn's one INFO line is "Running on <bind> (CTRL + C to quit)"; the server's
    # own start line says that, and the version and the public URL with it.
    logging.getLogger("hypercorn.error").setLevel(max(logging.WARNING, root.level))
