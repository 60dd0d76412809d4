"""The adapter's memory under the worst a caller or a workflow can send, as peak RSS.

Each case runs in a fresh process (memory_probe.py), so that the peak is its own. The
bounds are generous, several times what the bounded adapter needs; an adapter that
keeps whole messages, builds whole pages or inflates whole replies goes far past them.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

from tests.integration.memory_probe import MESSAGE_CHARS, MESSAGES

MIB = 1024  # ru_maxrss counts KiB
ROOT = Path(__file__).parents[2]


def probe(scenario: str) -> dict[str, Any]:
    done = subprocess.run(
        [sys.executable, "-m", "tests.integration.memory_probe", scenario],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    report: dict[str, Any] = json.loads(done.stdout)
    return report


def test_big_messages_and_a_full_page_of_them_stay_bounded() -> None:
    report = probe("tasks")
    # 64 messages of 1 MB, each answered with 1 MB: kept whole, that is 2 MB a task, and
    # held once (the status message and the answer artifact share the answer's text).
    kept_kib = MESSAGES * 2 * MESSAGE_CHARS / 1024
    assert report["messages_kib"] - report["before_kib"] < 2 * kept_kib, report
    # One page of pageSize 100 over them, four at once: about 1 MB each, or one task whole
    # (its message, its answer in the history, the status and the artifact), not 100.
    assert report["answer_bytes"] < 5 * MESSAGE_CHARS, report
    assert 0 < report["listed"] < MESSAGES and report["next_page"], report
    assert report["after_kib"] - report["messages_kib"] < 32 * MIB, report


def test_gzip_bombs_inflate_no_further_than_the_read_limit() -> None:
    report = probe("gzip")
    # 16 replies that would decode to 1 GiB each, at once: each is read to its bound
    # (ADAPTER_MAX_REPLY_BYTES, 1 MiB in this probe).
    assert report["after_kib"] - report["before_kib"] < 80 * MIB, report
    [reason] = report["reasons"]
    assert "larger than ADAPTER_MAX_REPLY_BYTES (1,048,576 bytes)" in reason, report


def test_push_configs_hold_no_more_than_their_bounded_fields() -> None:
    report = probe("push")
    # Every field at its bound: about 11 KiB of text a config, held as it came.
    per_config_kib = (report["configs_kib"] - report["before_kib"]) / report["configs"]
    assert per_config_kib < 24, report
    # A task's list answers its 8 configs, credentials left out (write-only).
    assert report["list_bytes"] < 8 * 8 * 1024, report
    # A 1,000,000-character scheme is refused, every time.
    assert report["refused"] == 80, report
