"""`n8n/run start --keep`: n8n's data kept from one start to the next (the owner account,
the workflows built in its editor), the examples imported again over it, not doubled, and
all published; a start without it begins afresh. Its own n8n, started three times."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.e2e.real_n8n import run
from tests.support.adapter import free_port


def test_a_kept_start_keeps_n8ns_data_and_a_plain_one_begins_afresh(tmp_path: Path) -> None:
    if os.environ.get("N8N_A2A_SKIP_E2E") == "1":
        pytest.skip("N8N_A2A_SKIP_E2E=1: the end-to-end tests against a real n8n are skipped")
    run("install", timeout=1800)
    datadir, port = tmp_path / "n8n", str(free_port())
    marker = datadir / "home" / "built-in-the-editor"
    try:
        run("start", str(datadir), port, timeout=300)
        database = datadir / "home" / ".n8n" / "database.sqlite"
        assert database.exists()
        marker.write_text("a workflow of the user's")
        run("stop", str(datadir), timeout=60)
        # Kept: the same home, the examples published again (start waits for every webhook).
        run("start", "--keep", str(datadir), port, timeout=300)
        assert marker.read_text() == "a workflow of the user's"
        run("stop", str(datadir), timeout=60)
        run("start", str(datadir), port, timeout=300)
        assert not marker.exists()
    finally:
        run("stop", str(datadir), timeout=60)
