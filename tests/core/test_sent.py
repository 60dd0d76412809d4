"""A message's fingerprint: the same message gives the same one, any other part, file,
task or context another; a message sent again is its first task, another refused."""

from __future__ import annotations

from dataclasses import replace

import pytest

from n8n_a2a.core.sent import Sent, fingerprint, retried, sent
from n8n_a2a.protocol.errors import A2AError, ErrorCode
from n8n_a2a.protocol.model import FileContent, Message, Part, Role

PNG = FileContent.of_bytes("scan.png", "image/png", b"\x89PNG" * 100)
OTHER_BYTES = FileContent.of_bytes("scan.png", "image/png", b"x")
MESSAGE = Message(
    "m-1",
    Role.USER,
    (Part("order 30 pallets", {"k": 1}), Part.of_data({"b": 2, "a": [1, 2]}), Part.of_file(PNG)),
)


def test_the_same_message_has_the_same_fingerprint() -> None:
    again = Message(
        "m-1",
        Role.USER,
        (
            Part("order 30 pallets", {"k": 1}),
            Part.of_data({"a": [1, 2], "b": 2}),  # keys in another order: the same JSON
            Part.of_file(FileContent.of_bytes("scan.png", "image/png", b"\x89PNG" * 100)),
        ),
        metadata={"attempt": 2},  # a client's stamp on each attempt: not the message
    )
    assert fingerprint(again) == fingerprint(MESSAGE)
    assert len(fingerprint(MESSAGE)) == 32


@pytest.mark.parametrize(
    "other",
    [
        replace(MESSAGE, parts=MESSAGE.parts[:2]),
        replace(MESSAGE, parts=(Part("order 31 pallets", {"k": 1}), *MESSAGE.parts[1:])),
        replace(MESSAGE, parts=(Part("order 30 pallets", {"k": 2}), *MESSAGE.parts[1:])),
        replace(MESSAGE, parts=(*MESSAGE.parts[:2], Part.of_file(OTHER_BYTES))),
        replace(MESSAGE, parts=(*MESSAGE.parts[:2], Part.of_file(replace(PNG, name="b.png")))),
        replace(MESSAGE, task_id="t-1"),
        replace(MESSAGE, context_id="c-1"),
        replace(MESSAGE, role=Role.AGENT),
        # The same texts cut otherwise, or moved between a part and a file's bytes.
        replace(MESSAGE, parts=(Part("order 30"), Part(" pallets"))),
    ],
    ids=[
        "a part less",
        "text",
        "part metadata",
        "file bytes",
        "file name",
        "task",
        "context",
        "role",
        "cut otherwise",
    ],
)
def test_another_message_has_another_fingerprint(other: Message) -> None:
    assert fingerprint(other) != fingerprint(MESSAGE)


@pytest.mark.parametrize(
    "other",
    [
        Message("m-1", Role.USER, (Part("order 30"), Part(" pallets"))),
        Message("m-1", Role.USER, (Part("order 30 pallets"),), context_id="c-1"),
        Message("m-1", Role.USER, (Part("order 30 pallets", {"k": 1}),)),
        Message("m-1", Role.USER, (Part.of_data("order 30 pallets"),)),
    ],
    ids=["cut otherwise", "context", "part metadata", "as data"],
)
def test_a_text_message_is_told_from_any_other(other: Message) -> None:
    """Text alone takes a shorter way to its fingerprint (core/sent.py): as exact."""
    text = Message("m-1", Role.USER, (Part("order 30 pallets"),))
    assert fingerprint(text) == fingerprint(Message("m-2", Role.USER, (Part("order 30 pallets"),)))
    assert fingerprint(other) != fingerprint(text)


def test_what_is_remembered_is_the_owners_message() -> None:
    remembered = sent(MESSAGE, "o-1")
    assert remembered == Sent("o-1", "m-1", fingerprint(MESSAGE))


def test_a_message_sent_again_is_its_first_task() -> None:
    first = Sent(None, "m-1", fingerprint(MESSAGE), "t-9")
    assert retried(first, sent(MESSAGE, None)) == "t-9"


def test_another_message_under_the_same_id_is_refused_naming_the_task() -> None:
    first = Sent(None, "m-1", fingerprint(MESSAGE), "t-9")
    other = sent(replace(MESSAGE, parts=(Part("order 31 pallets"),)), None)
    with pytest.raises(A2AError) as refused:
        retried(first, other)
    assert refused.value.code is ErrorCode.INVALID_PARAMS
    assert refused.value.message == (
        "messageId m-1 was sent before with another message (task t-9); a new message "
        "needs a new messageId, and a retry sends the same message again"
    )
