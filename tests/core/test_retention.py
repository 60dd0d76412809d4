"""What a task keeps of a message: all of it, valid Unicode, an upload as its marker."""

from __future__ import annotations

import json
from dataclasses import replace
from typing import Any

import pytest

from n8n_a2a.core.retention import check_ids, kept_message
from n8n_a2a.protocol.errors import A2AError, ErrorCode
from n8n_a2a.protocol.model import FileContent, Message, Part, Role
from n8n_a2a.protocol.params import MAX_ID_CHARS


def test_a_message_is_kept_as_it_came_however_large() -> None:
    # Past the 8,192 characters a task once kept: text, data and metadata all whole.
    sent = Message(
        "m-1",
        Role.USER,
        (Part("x" * 1_000_000, {"k": "y" * 100_000}), Part.of_data({"blob": "z" * 500_000})),
        metadata={"m": "w" * 100_000},
    )
    assert kept_message(sent, "t-1", "c-1") == (replace(sent, task_id="t-1", context_id="c-1"), {})


def test_lone_surrogates_in_a_message_are_repaired_and_marked() -> None:
    sent = Message(
        "m-1", Role.USER, (Part("flour \ud83d", {"k\udc00": "v"}),), metadata={"m": "\ud800"}
    )
    kept, marks = kept_message(sent, "t-1", "c-1")
    assert kept.parts == (Part("flour \ufffd", {"k\ufffd": "v"}),)
    assert kept.metadata == {"m": "\ufffd"}
    assert marks == {"repaired": ["message"]}
    json.dumps(kept.metadata, ensure_ascii=False).encode()  # strict


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("message_id", "m" * (MAX_ID_CHARS + 1)),
        ("context_id", "c" * (MAX_ID_CHARS + 1)),
        ("task_id", "t" * (MAX_ID_CHARS + 1)),
        ("message_id", "m\ud83d"),
        ("context_id", "\udc00"),
    ],
)
def test_an_id_too_long_or_not_unicode_is_invalid_params(field: str, value: str) -> None:
    ids: dict[str, Any] = {"message_id": "m-1", field: value}
    with pytest.raises(A2AError) as raised:
        check_ids(Message(role=Role.USER, parts=(Part("hi"),), **ids))
    assert raised.value.code is ErrorCode.INVALID_PARAMS
    assert "at most 1024 characters" in raised.value.message


def test_an_upload_is_kept_as_its_marker_and_a_linked_file_whole() -> None:
    png = FileContent.of_bytes("scan\ud83d.png", "image/png", b"\x89PNG" * 1000)
    linked = FileContent("r.csv", "text/csv", url="http://x/r.csv")
    sent = Message(
        "m-1",
        Role.USER,
        (Part("see"), Part.of_file(png, {"k": 1}), Part.of_file(linked), Part.of_data([1])),
    )
    kept, marks = kept_message(sent, "t-1", "c-1")
    see, marker, link, data = kept.parts
    assert (see, link, data) == (Part("see"), Part.of_file(linked), Part.of_data([1]))
    # Never a file with empty bytes: a text part saying what it was, its facts beside.
    assert marker.file is None
    assert marker.metadata == {
        "k": 1,
        "released": {
            "kind": "file",
            "name": "scan\ufffd.png",
            "mediaType": "image/png",
            "size": 4000,
            "reason": "upload",
        },
    }
    assert "scan\ufffd.png (image/png, 4,000 bytes)" in marker.text
    assert marks == {"repaired": ["message"]}
