"""What a task keeps of a message: bounded, valid Unicode, marked when changed."""

from __future__ import annotations

import json
from typing import Any

import pytest

from n8n_a2a.core.retention import check_ids, kept_message, kept_parts, kept_reply
from n8n_a2a.protocol.errors import A2AError, ErrorCode
from n8n_a2a.protocol.model import FileContent, Message, Part, Role
from n8n_a2a.protocol.params import MAX_ID_CHARS


def test_a_message_within_the_limit_is_kept_as_it_came() -> None:
    sent = Message("m-1", Role.USER, (Part("a", {"k": 1}), Part("b")), metadata={"m": "x"})
    assert kept_message(sent, 100) == (sent, {})


def test_a_long_message_is_kept_cut_with_a_marker() -> None:
    sent = Message("m-1", Role.USER, (Part("x" * 1_000_000), Part("y")))
    kept, marks = kept_message(sent, 100)
    assert kept.parts == (Part("x" * 100 + "[... cut at 100 characters]"),)
    assert marks == {"cut": ["message"]}


@pytest.mark.parametrize(
    "sent",
    [
        Message("m-1", Role.USER, (Part("short"),), metadata={"blob": "z" * 200}),
        Message("m-1", Role.USER, (Part("short", {"blob": "z" * 200}),)),
        Message("m-1", Role.USER, tuple(Part("") for _ in range(50))),
    ],
)
def test_metadata_or_parts_past_the_limit_are_not_kept(sent: Message) -> None:
    kept, marks = kept_message(sent, 100)
    assert kept.metadata is None
    assert kept.parts == (Part(sent.text),)  # the text as the workflow got it, not cut
    assert marks == {"cut": ["message"]}


def test_lone_surrogates_in_a_message_are_repaired_and_marked() -> None:
    sent = Message(
        "m-1", Role.USER, (Part("flour \ud83d", {"k\udc00": "v"}),), metadata={"m": "\ud800"}
    )
    kept, marks = kept_message(sent, 8192)
    assert kept.parts == (Part("flour \ufffd", {"k\ufffd": "v"}),)
    assert kept.metadata == {"m": "\ufffd"}
    assert marks == {"repaired": ["message"]}
    json.dumps(kept.metadata, ensure_ascii=False).encode()  # strict


def test_a_reply_is_cut_and_marked_beside_the_message_s_marks() -> None:
    text, marks = kept_reply("y" * 500, True, 100, {"cut": ["message"]})
    assert text == "y" * 100 + "[... cut at 100 characters]"
    assert marks == {"cut": ["message", "reply"], "repaired": ["reply"]}
    assert kept_reply("short", False, 100, {}) == ("short", {})


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


def test_a_file_is_kept_without_its_bytes_and_data_as_it_came() -> None:
    png = FileContent.of_bytes("scan\ud83d.png", "image/png", b"\x89PNG" * 1000)
    linked = FileContent("r.csv", "text/csv", url="http://x/r.csv")
    sent = Message(
        "m-1",
        Role.USER,
        (Part("see"), Part.of_file(png, {"k": 1}), Part.of_file(linked), Part.of_data([1])),
    )
    kept, marks = kept_message(sent, 200)
    assert kept.parts == (
        Part("see"),
        Part.of_file(FileContent("scan\ufffd.png", "image/png", size=4000), {"k": 1}),
        Part.of_file(linked),
        Part.of_data([1]),
    )
    assert marks == {"repaired": ["message"]}


def test_data_past_the_limit_leaves_the_message_as_its_text_cut() -> None:
    sent = Message("m-1", Role.USER, (Part("see"), Part.of_data({"blob": "z" * 200})))
    kept, marks = kept_message(sent, 100)
    assert kept.parts == (Part("see"),)
    assert marks == {"cut": ["message"]}


def test_a_replys_data_and_files_are_kept_while_they_fit() -> None:
    small = Part.of_file(FileContent.of_bytes("a", "text/csv", b"abc"))  # "YWJj"
    big = Part.of_file(FileContent.of_bytes("b", "image/png", bytes(300)))
    linked = Part.of_file(FileContent("c", "image/png", url="http://x/" + "y" * 300))
    data = Part.of_data({"n": 1})
    kept, cuts = kept_parts((data, small, big, linked), 256)
    assert kept == (
        data,
        small,
        Part.of_file(FileContent("b", "image/png", size=300)),
        Part.of_file(FileContent("c", "image/png")),
    )
    assert cuts == ["files"]


def test_a_replys_data_past_the_limit_is_kept_as_its_json_cut() -> None:
    kept, cuts = kept_parts((Part.of_data(["x" * 300]),), 256)
    assert kept == (Part('["' + "x" * 254 + "[... cut at 256 characters]"),)
    assert cuts == ["data"]
    assert kept_parts((), 256) == ((), [])
