"""Driving `n8n/run` from the tests: the running n8n, and the calls that start and stop it."""

from __future__ import annotations

import subprocess
from dataclasses import dataclass
from pathlib import Path

import pytest

RUN = Path(__file__).resolve().parents[2] / "n8n" / "run"


@dataclass(frozen=True)
class N8n:
    """A running n8n: its base URL and port."""

    base_url: str
    port: int

    def webhook(self, path: str) -> str:
        """The production webhook URL of a Webhook node's path."""
        return f"{self.base_url}/webhook/{path}"


def run(*args: str, timeout: float) -> str:
    """Run `n8n/run` and return its stdout; fail the tests with its own words when it fails."""
    try:
        done = subprocess.run(
            [str(RUN), *args], capture_output=True, text=True, timeout=timeout, check=False
        )
    except subprocess.TimeoutExpired as expired:
        pytest.fail(f"n8n/run {' '.join(args)} took over {timeout:g} s: {expired}", pytrace=False)
    if done.returncode != 0:
        pytest.fail(
            f"n8n/run {' '.join(args)} failed (exit {done.returncode}):\n{done.stderr[-4000:]}",
            pytrace=False,
        )
    return done.stdout
