"""Version negotiation (A2A spec §3.6): which codec answers a request, and the -32009."""

from __future__ import annotations

import pytest

from n8n_a2a.protocol.errors import A2AError, ErrorCode
from n8n_a2a.protocol.versions import METHODS, SUPPORTED, V03, V1, codec_for, negotiate


@pytest.mark.parametrize(
    ("requested", "version"),
    [
        (None, "0.3"),
        ("", "0.3"),
        (" ", "0.3"),
        ("0.3", "0.3"),
        ("0.3.0", "0.3"),
        ("1.0", "1.0"),
        ("1", "1.0"),
        ("1.0.0", "1.0"),
        # A2A 1.1 as drafted, served to a caller that asks (never on the card).
        ("1.1", "1.1"),
        ("1.1.0", "1.1"),
    ],
)
def test_version_negotiation(requested: str | None, version: str) -> None:
    assert codec_for(requested).facts.version == version


@pytest.mark.parametrize(
    "requested",
    [
        *["2.0", "0.2", "1.2", "latest", "1.0.0.0", "x" * 1000],
        # Digits only in ASCII, and few of them: int() takes superscript and Arabic-Indic
        # digits, and refuses more than 4,300 of them.
        *["¹", "²", "1.²", "\u0663.\u0660", "1" * 4301, "1." + "0" * 40, "0001.0"],
    ],
)
def test_unsupported_versions_are_32009(requested: str) -> None:
    with pytest.raises(A2AError) as raised:
        codec_for(requested)
    assert raised.value.code is ErrorCode.VERSION_NOT_SUPPORTED
    assert len(raised.value.message) < 200


def test_a_version_not_served_is_told_what_is() -> None:
    with pytest.raises(A2AError) as raised:
        codec_for("2.0")
    assert raised.value.message == (
        "A2A version '2.0' is not supported; this agent speaks 0.3, 1.0 (and the 1.1 draft)"
    )


def test_the_card_declares_the_released_versions_and_the_draft_only_answers() -> None:
    assert sorted(SUPPORTED) == ["0.3", "1.0"]
    draft = codec_for("1.1")
    assert draft.facts.generation and not V1.facts.generation and not V03.facts.generation
    # The draft is 1.0's wire: its methods and spellings, plus the generation.
    assert draft.facts.methods == V1.facts.methods and draft.facts.states == V1.facts.states


@pytest.mark.parametrize(
    ("requested", "version"), [(None, "0.3"), ("0.3", "0.3"), ("1.0", "1.0"), ("2.0", "1.0")]
)
def test_negotiation_gives_errors_a_shape_even_for_a_version_not_served(
    requested: str | None, version: str
) -> None:
    codec, unsupported = negotiate(requested)
    assert codec.facts.version == version
    assert (unsupported is not None) is (requested == "2.0")
    if unsupported is not None:
        assert unsupported.code is ErrorCode.VERSION_NOT_SUPPORTED


def test_the_versions_served_and_their_methods() -> None:
    assert SUPPORTED == {"1.0": V1, "0.3": V03}
    assert len({V1, V03}) == 2  # a codec is known by identity, and can be a key
    assert len(METHODS) == 21
    assert {"SendMessage", "ListTasks", "message/send", "tasks/resubscribe"} <= METHODS
    assert "tasks/list" not in METHODS
