"""The executor's configuration: each setting reaches the executor under its own name."""

from __future__ import annotations

import dataclasses

import pytest

from n8n_a2a.executor import ExecutorConfig
from n8n_a2a.protocol.media import TEXT, Modes
from tests.support.adapter import make_settings


def test_each_setting_reaches_the_executor() -> None:
    settings = make_settings(
        skill_id="book_room",
        max_concurrent_calls=7,
        max_queued_calls=9,
        allow_input_required=True,
        input_ttl=120.0,
        input_modes=(TEXT, "application/json"),
        output_modes=("application/json",),
        lease_seconds=33.0,
    )
    assert ExecutorConfig.from_settings(settings) == ExecutorConfig(
        skill_id="book_room",
        max_concurrent_calls=7,
        max_queued_calls=9,
        input_required=True,
        input_ttl=120.0,
        modes=Modes((TEXT, "application/json"), ("application/json",)),
        store_patience=33.0,
        webhook_timeout=settings.webhook_timeout,
    )


def test_its_defaults_are_the_settings_defaults() -> None:
    """An executor made in a test behaves as the server's, setting for setting."""
    # (make_settings shortens the webhook timeout for the tests: the default's is 60 s.)
    settings = make_settings(webhook_timeout=60.0)
    assert dataclasses.replace(ExecutorConfig.from_settings(settings), skill_id="s") == (
        ExecutorConfig("s")
    )


def test_it_is_frozen() -> None:
    with pytest.raises(dataclasses.FrozenInstanceError):
        ExecutorConfig("s").max_concurrent_calls = 1  # type: ignore[misc]
