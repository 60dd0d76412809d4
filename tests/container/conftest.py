"""The image's figures (tests/container/test_image.py), printed after the run's results."""

from __future__ import annotations

import pytest

from tests.container.engine import FIGURES


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    if FIGURES:
        terminalreporter.section("container image figures")
        for line in FIGURES:
            terminalreporter.write_line(line)
