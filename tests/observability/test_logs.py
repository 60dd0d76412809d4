from __future__ import annotations

import json
import logging
import sys
from datetime import UTC, datetime

import pytest

from n8n_a2a.observability.logs import JsonFormatter, TextFormatter, configure_logging


def record(**fields: object) -> logging.LogRecord:
    made = logging.LogRecord(
        "n8n_a2a.executor", logging.INFO, "x.py", 1, "task %s", ("done",), None
    )
    made.fields = fields
    return made


def test_json_puts_the_fields_at_the_top_level() -> None:
    line = json.loads(JsonFormatter().format(record(task_id="t-1", webhook_status=None)))
    assert line["message"] == "task done"
    assert (line["level"], line["logger"]) == ("INFO", "n8n_a2a.executor")
    assert (line["task_id"], line["webhook_status"]) == ("t-1", None)
    assert line["time"].endswith("+00:00")


@pytest.mark.parametrize(
    "created",
    [0.0, 1764820950.1995, 1764820950.9999996, 1764820950.9995, 1764820951.0005, 951782400.5],
)
def test_a_lines_time_is_the_datetimes_to_the_millisecond(created: float) -> None:
    """Its second written once a second, a line's time reads as the datetime writes it."""
    formatter = JsonFormatter()
    for moment in (created - 1, created, created):  # a new second, then the same one
        made = record()
        made.created = moment
        expected = datetime.fromtimestamp(moment, UTC).isoformat(timespec="milliseconds")
        assert json.loads(formatter.format(made))["time"] == expected


def test_text_appends_the_fields_as_pairs() -> None:
    assert TextFormatter().format(record(task_id="t-1")).endswith("task done task_id=t-1")


@pytest.mark.parametrize(
    ("log_format", "formatter"), [("json", JsonFormatter), ("text", TextFormatter)]
)
def test_configure_sets_the_level_and_the_format(log_format: str, formatter: type) -> None:
    root = logging.getLogger()
    saved = root.handlers[:], root.level
    try:
        configure_logging("WARNING", log_format)
        assert root.level == logging.WARNING
        [handler] = root.handlers
        assert isinstance(handler.formatter, formatter)
    finally:
        root.handlers[:], _ = saved
        root.setLevel(saved[1])


FORGED = "x\n2026-12-01 12:00:00,000 ERROR   n8n_a2a.auth: forged\r\x1b[2J\u2028"


def test_no_message_or_field_value_can_split_a_text_line() -> None:
    made = logging.LogRecord(
        "n8n_a2a.app.edge", logging.INFO, "x.py", 1, "A2A error: %s", (FORGED,), None
    )
    made.fields = {"method": FORGED, "code": -32602, "detail": "a b=c"}
    line = TextFormatter().format(made)
    assert len(line.splitlines()) == 1 and "\x1b" not in line and "\u2028" not in line
    assert "A2A error: x\\n2026-12-01" in line
    assert 'detail="a b=c"' in line and "code=-32602" in line
    assert line.count(" method=") == 1


def test_a_traceback_stays_under_its_line_indented() -> None:
    try:
        raise ValueError(FORGED)
    except ValueError:
        made = logging.LogRecord("n8n_a2a", logging.ERROR, "x.py", 1, "failed", (), sys.exc_info())
    made.fields = {"event": "x"}
    first, *rest = TextFormatter().format(made).split("\n")
    assert first.endswith("failed event=x")
    assert rest and all(line.startswith("    ") for line in rest)
