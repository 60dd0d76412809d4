"""The retry schedule: how far apart one update is POSTed again to a receiver that lags."""

from __future__ import annotations

import pytest

from n8n_a2a.push.attempts import RetrySchedule


@pytest.mark.parametrize(
    ("attempts", "draw", "delay"),
    [
        (1, 0.0, 0.25),  # docs/push.md: 0.25-0.5 s first
        (1, 0.999, 0.49975),
        (2, 0.0, 0.5),  # then twice that
        (3, 0.5, 1.5),
        (7, 0.0, 15.0),
        (8, 0.0, 15.0),  # up to 30 s
        (8, 0.999, 29.985),
        (20, 0.5, 22.5),
    ],
)
def test_the_backoff_doubles_up_to_its_cap(attempts: int, draw: float, delay: float) -> None:
    assert RetrySchedule().delay(attempts, draw) == pytest.approx(delay)


def test_the_backoff_cap_is_a_setting() -> None:
    assert RetrySchedule(backoff_cap=4.0).delay(10, 0.5) == pytest.approx(3.0)
