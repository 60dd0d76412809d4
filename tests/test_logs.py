from __future__ import annotations

import json
import logging

import pytest

from n8n_a2a.logs import JsonFormatter, TextFormatter, configure_logging


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
