"""The words between a call's machine and its driver: two kinds of action that never
overlap (the driver awaits one kind, does the other at once), all frozen values."""

from __future__ import annotations

import dataclasses
import typing

import pytest

from n8n_a2a.executor import call_events


def members(union: object) -> set[type]:
    return set(typing.get_args(union))


def test_every_action_is_awaited_or_done_at_once_never_both() -> None:
    awaited, now = members(call_events.Awaited), members(call_events.Now)
    assert not awaited & now
    assert awaited | now == members(call_events.Action)


def test_what_is_heard_is_no_step_of_the_drivers() -> None:
    assert not members(call_events.Heard) & members(call_events.Event)


EVERY_KIND = sorted(
    members(call_events.Action) | members(call_events.Event) | members(call_events.Heard),
    key=lambda kind: kind.__name__,
)


@pytest.mark.parametrize("kind", EVERY_KIND, ids=[kind.__name__ for kind in EVERY_KIND])
def test_each_is_a_frozen_value(kind: type) -> None:
    assert dataclasses.is_dataclass(kind)
    assert kind.__dataclass_params__.frozen  # type: ignore[attr-defined]
