"""Logging: one JSON object a line for machines, or key=value text for a terminal.

Structured fields travel in `extra={"fields": {...}}`. Nothing here ever sees a
request's headers: the token cannot reach a log line through this module. A text line
is one line whatever its message and fields hold: their control characters (a newline
among them) are escaped, a value with a space or an `=` is quoted, and a traceback's
lines are indented, so that no value a caller sent can pose as a line of its own.
"""

from __future__ import annotations

import json
import logging
import sys
import time
from typing import Any


def fields_of(record: logging.LogRecord) -> dict[str, Any]:
    found = getattr(record, "fields", None)
    return found if isinstance(found, dict) else {}


#: json.dumps with these options makes its encoder anew for every line.
_ENCODER = json.JSONEncoder(ensure_ascii=False, default=str)


class JsonFormatter(logging.Formatter):
    def __init__(self) -> None:
        super().__init__()
        self._second: int | None = None  # the last line's second, and its text to it
        self._second_text = ""

    def format(self, record: logging.LogRecord) -> str:
        line: dict[str, Any] = {
            "time": self._time(record.created),
            "level": record.levelname,
            "logger": record.name,
            "message": record.getMessage(),
            **fields_of(record),
        }
        if record.exc_info:
            line["exception"] = self.formatException(record.exc_info)
        return _ENCODER.encode(line)

    def _time(self, created: float) -> str:
        """`created` as datetime.fromtimestamp(created, UTC).isoformat(timespec=
        "milliseconds") writes it (rounded to the microsecond as it rounds), its second
        written once a second: every turn logs a line, and the datetime costs more than
        the rest of the line's time."""
        second = int(created)
        micro = round((created - second) * 1e6)
        if micro >= 1_000_000:
            second, micro = second + 1, micro - 1_000_000
        if second != self._second:
            self._second = second
            self._second_text = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(second))
        return f"{self._second_text}.{micro // 1000:03d}+00:00"


# C0 and C1 controls, DEL, and the Unicode line and paragraph separators.
_CONTROLS = [*range(0x20), *range(0x7F, 0xA0), 0x2028, 0x2029]
_ESCAPES = {code: f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}" for code in _CONTROLS}
_ESCAPES.update({ord("\n"): "\\n", ord("\r"): "\\r", ord("\t"): "\\t"})


class TextFormatter(logging.Formatter):
    def __init__(self) -> None:
        super().__init__("%(asctime)s %(levelname)-7s %(name)s: %(message)s")

    def formatMessage(self, record: logging.LogRecord) -> str:
        return super().formatMessage(record).translate(_ESCAPES)

    def formatException(self, ei: Any) -> str:
        return "    " + super().formatException(ei).replace("\n", "\n    ")

    def format(self, record: logging.LogRecord) -> str:
        text = super().format(record)
        pairs = " ".join(f"{key}={_shown(value)}" for key, value in fields_of(record).items())
        if not pairs:
            return text
        line, newline, rest = text.partition("\n")  # after the line: a traceback, indented
        return f"{line} {pairs}{newline}{rest}"


def _shown(value: object) -> str:
    """A field's value as one token of the line: quoted (JSON) when it holds a space, an
    `=` or a quote, so that it cannot pose as another field either."""
    text = str(value).translate(_ESCAPES)
    if text and not any(mark in text for mark in ' ="'):
        return text
    return json.dumps(text, ensure_ascii=False)


def configure_logging(level: str, log_format: str) -> None:
    """Send every log line to stderr; `auto` is text on a terminal and JSON elsewhere."""
    use_json = log_format == "json" or (log_format == "auto" and not sys.stderr.isatty())
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(JsonFormatter() if use_json else TextFormatter())
    root = logging.getLogger()
    root.handlers[:] = [handler]
    # Neither format shows where a line was logged from, nor its thread or process: the
    # logging HOWTO's "Optimization" switches spare each record looking them up (a walk
    # up the stack, on every line: one per turn).
    logging._srcfile = None
    logging.logThreads = logging.logProcesses = logging.logMultiprocessing = False
    root.setLevel(level)
    # httpx logs each request at INFO ("HTTP Request: POST <webhook URL> ..."): a second
    # line per task, with the webhook's URL, whose path may be its secret, in every one.
    logging.getLogger("httpx").setLevel(max(logging.WARNING, root.level))
    # Hypercorn's one INFO line is "Running on <bind> (CTRL + C to quit)"; the server's
    # own start line says that, and the version and the public URL with it.
    logging.getLogger("hypercorn.error").setLevel(max(logging.WARNING, root.level))
