"""A task's row and its statements' values, without a database: the task a row holds, the
states a move may leave, the sent message's columns, the events as a move logs them."""

from __future__ import annotations

import json

from n8n_a2a.core.changes import Change, change_events
from n8n_a2a.core.sent import Sent
from n8n_a2a.protocol.model import (
    Artifact,
    Message,
    Part,
    Role,
    Task,
    TaskState,
    TaskStatus,
)
from n8n_a2a.protocol.writing import dump
from n8n_a2a.store.documents import message_doc
from n8n_a2a.store.postgres.task_rows import (
    TASK_COLUMNS,
    leaves_for,
    logged,
    sender,
    sent_parameters,
    task_of,
)
from tests.support.tasks import MOMENT


def test_a_row_holds_the_task_its_columns_say() -> None:
    asked = Message("m-1", Role.USER, (Part("hi"),), "t", "c")
    row = {
        "id": "t",
        "context_id": "c",
        "owner": "o",
        "state": "input-required",
        "status_timestamp": MOMENT,
        "status_message": None,
        "history": [json.loads(dump(message_doc(asked)))],
        "artifacts": [],
        "metadata": {"outcome": "NEEDS_INPUT"},
        "version": 2,
        "relayed": 1,
        "waiting": {"resume": "https://n8n.example/resume/1"},
    }
    assert set(TASK_COLUMNS.split(", ")) == set(row)
    task = task_of(row)
    assert task == Task(
        "t",
        "c",
        TaskStatus(TaskState.INPUT_REQUIRED, MOMENT),
        (asked,),
        metadata={"outcome": "NEEDS_INPUT"},
        version=2,
        owner="o",
        relayed=1,
        resume="https://n8n.example/resume/1",
    )
    assert task.resume == "https://n8n.example/resume/1"
    assert task_of({**row, "waiting": None}).resume is None


def test_a_move_leaves_only_the_states_the_lifecycle_lets_it() -> None:
    assert set(leaves_for(TaskState.WORKING)) >= {"submitted"}
    assert "completed" not in leaves_for(TaskState.WORKING)
    # A next turn: from a question asked, or a sign-in asked for.
    assert set(leaves_for(TaskState.SUBMITTED)) == {"input-required", "auth-required"}


def test_the_sent_message_is_keyed_by_a_sender_no_two_owners_share() -> None:
    assert sender(None) == "" and sender("") == "@" and sender("o") == "@o"
    assert sent_parameters(None) == {"sender": None, "message_id": None, "fingerprint": None}
    sent = Sent("o", "m-1", "f", "t")
    assert sent_parameters(sent) == {"sender": "@o", "message_id": "m-1", "fingerprint": "f"}


def test_a_move_logs_each_artifact_s_update_by_its_place_among_the_artifacts_sent() -> None:
    first, second = Artifact("a-1", "file", (Part("1"),)), Artifact("a-2", "answer", (Part("2"),))
    change = Change(TaskState.COMPLETED, MOMENT, artifacts=(first, second))
    values = logged(change_events("t", "", 1, 0, change))
    assert values["made_at"] == [1, 2, 0]
    documents = [json.loads(dump(value.obj)) for value in values["events"]]
    assert documents[:2] == [{"append": False, "lastChunk": True}] * 2
    assert documents[2]["status"]["state"] == "completed"
