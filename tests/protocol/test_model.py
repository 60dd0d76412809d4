"""The version-neutral objects: what a task shows of its history, when its stream ends,
what a message's text is, a file's bytes in base64."""

from __future__ import annotations

import pytest

from n8n_a2a.protocol.model import (
    INTERRUPTED_STATES,
    TERMINAL_STATES,
    FileContent,
    Message,
    Part,
    Role,
    TaskState,
)
from tests.protocol.samples import ENDS_A_STREAM, a_task, status_update


def test_history_length_keeps_the_newest() -> None:
    task = a_task()
    assert [m.message_id for m in task.with_history_length(1).history] == ["m-2"]
    assert task.with_history_length(0).history == ()
    assert task.with_history_length(None) is task
    assert task.with_history_length(10) is task


@pytest.mark.parametrize(("state", "final"), ENDS_A_STREAM)
def test_final_is_a_terminal_or_an_interrupted_state(state: TaskState, final: bool) -> None:
    interrupted = state in {TaskState.INPUT_REQUIRED, TaskState.AUTH_REQUIRED}
    assert (state in INTERRUPTED_STATES) is interrupted
    assert (state in TERMINAL_STATES) is (final and not interrupted)
    assert status_update(state).final is final


def test_a_messages_text_is_its_text_parts_one_a_line() -> None:
    parts = (Part("hi"), Part.of_data({"a": 1}), Part("there"))
    assert Message("m-1", Role.USER, parts).text == "hi\nthere"


def test_a_file_of_bytes_knows_its_size_and_base64() -> None:
    file = FileContent.of_bytes("p.png", "image/png", b"\x89PNG")
    assert file.encoded is not None
    assert (file.size, file.encoded.text()) == (4, "iVBORw==")
