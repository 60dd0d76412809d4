"""Media types and the agent's modes: what may come in and go out."""

from __future__ import annotations

import pytest

from n8n_a2a.protocol.media import TEXT_ONLY, Modes, media_type


@pytest.mark.parametrize(
    ("raw", "essence"),
    [
        ("text/plain", "text/plain"),
        ("Image/PNG", "image/png"),
        ("text/csv; charset=utf-8", "text/csv"),
        ("application/vnd.ms-excel", "application/vnd.ms-excel"),
        ("image/*", "image/*"),
        ("*/*", "*/*"),
        ("text", None),
        ("text/", None),
        ("/plain", None),
        ("*/plain", None),
        ("te xt/plain", None),
        ("a/" + "b" * 127, "a/" + "b" * 127),
        ("a/" + "b" * 128, None),
    ],
)
def test_media_type_reads_the_essence_or_refuses(raw: str, essence: str | None) -> None:
    assert media_type(raw) == essence


def test_the_default_takes_and_gives_text_only() -> None:
    assert TEXT_ONLY.takes("text/plain") and TEXT_ONLY.gives("text/plain")
    assert not TEXT_ONLY.takes("application/json") and not TEXT_ONLY.gives("image/png")


def test_any_type_takes_every_type() -> None:
    modes = Modes(("*/*",), ("*/*",))
    assert modes.takes("video/mp4") and modes.gives("application/json")


@pytest.mark.parametrize(
    ("accepted", "met"),
    [
        (["image/png"], False),
        (["image/*"], False),
        (["text/*"], True),
        (["*/*"], True),
        (["TEXT/PLAIN; q=1"], True),
        (["not a type", "also/not a type"], False),
    ],
)
def test_accepted_output_modes_meet_the_text_answer(accepted: list[str], met: bool) -> None:
    assert TEXT_ONLY.answers_any_of(accepted) is met
