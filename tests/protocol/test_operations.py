"""The operations table, row by row: each method's name, what its params are read into,
and whether it streams; every name of every version finds its row."""

from __future__ import annotations

from typing import Any

import pytest

from n8n_a2a.protocol.codec import Codec
from n8n_a2a.protocol.errors import A2AError, ErrorCode
from n8n_a2a.protocol.facts import V0_3, V1_0
from n8n_a2a.protocol.media import TEXT_ONLY
from n8n_a2a.protocol.model import (
    CancelTask,
    GetTask,
    ListTasks,
    SendMessage,
    SubscribeToTask,
)
from n8n_a2a.protocol.operations import (
    DEFAULT_PAGE_SIZE,
    MAX_PAGE_SIZE,
    METHODS,
    Reading,
)
from n8n_a2a.protocol.params import Params
from n8n_a2a.protocol.push import (
    CreatePushConfig,
    DeletePushConfig,
    GetPushConfig,
    ListPushConfigs,
)
from n8n_a2a.protocol.v1 import V1Shapes
from n8n_a2a.protocol.versions import V03, V1
from tests.protocol.samples import v1_send

V1_READING = Reading(V1_0, V1Shapes(), TEXT_ONLY)
A_CONFIG = {"taskId": "t-1", "id": "c-1", "url": "https://bridge.example/a2a"}

#: Each row: its name, whether it streams, params it takes, and what they are read into.
ROWS: list[tuple[str, bool, dict[str, Any], type]] = [
    ("SendMessage", False, v1_send(), SendMessage),
    ("SendStreamingMessage", True, v1_send(), SendMessage),
    ("SubscribeToTask", True, {"id": "t-1"}, SubscribeToTask),
    ("GetTask", False, {"id": "t-1"}, GetTask),
    ("CancelTask", False, {"id": "t-1"}, CancelTask),
    ("ListTasks", False, {}, ListTasks),
    ("CreateTaskPushNotificationConfig", False, A_CONFIG, CreatePushConfig),
    ("GetTaskPushNotificationConfig", False, {"taskId": "t-1", "id": "c-1"}, GetPushConfig),
    ("ListTaskPushNotificationConfigs", False, {"taskId": "t-1"}, ListPushConfigs),
    ("DeleteTaskPushNotificationConfig", False, {"taskId": "t-1", "id": "c-1"}, DeletePushConfig),
]


def test_the_table_holds_every_method_and_nothing_else() -> None:
    assert set(METHODS) == {name for name, *_ in ROWS} | {"GetExtendedAgentCard"}
    assert all(name == method.name for name, method in METHODS.items())


@pytest.mark.parametrize(("name", "streams", "params", "kind"), ROWS, ids=[r[0] for r in ROWS])
def test_each_row_reads_its_params_into_its_operation(
    name: str, streams: bool, params: dict[str, Any], kind: type
) -> None:
    method = METHODS[name]
    operation = method.decode(V1_READING, Params(params))
    assert type(operation) is kind
    assert method.streams is streams


@pytest.mark.parametrize(("name", "streams", "params", "kind"), ROWS, ids=[r[0] for r in ROWS])
def test_a_row_streams_just_when_its_operation_asks_for_events(
    name: str, streams: bool, params: dict[str, Any], kind: type
) -> None:
    """The row's fact and the operation's agree: the app answers the operation it holds."""
    operation = METHODS[name].decode(V1_READING, Params(params))
    asks_for_events = isinstance(operation, SubscribeToTask) or (
        isinstance(operation, SendMessage) and operation.streaming
    )
    assert asks_for_events is streams


@pytest.mark.parametrize(
    ("codec", "method", "code"),
    [
        # v1.0 §3.3.4: a card without capabilities.extendedAgentCard MUST answer
        # UnsupportedOperationError.
        (V1, "GetExtendedAgentCard", ErrorCode.UNSUPPORTED_OPERATION),
        # v0.3 §8.2: the method's one error, AuthenticatedExtendedCardNotConfiguredError.
        (V03, "agent/getAuthenticatedExtendedCard", ErrorCode.EXTENDED_AGENT_CARD_NOT_CONFIGURED),
    ],
)
def test_the_extended_card_the_card_does_not_claim_is_refused_as_each_version_says(
    codec: Codec, method: str, code: ErrorCode
) -> None:
    with pytest.raises(A2AError) as refused:
        codec.decode(method, {})
    assert refused.value.code is code
    assert "does not claim" in refused.value.message
    assert not METHODS["GetExtendedAgentCard"].streams


def test_every_name_of_every_version_is_a_row() -> None:
    for facts in (V1_0, V0_3):
        assert set(facts.methods.values()) <= set(METHODS), facts.version
    assert set(V1_0.methods.values()) == set(METHODS)  # v1.0 has every method
    assert set(METHODS) - set(V0_3.methods.values()) == {"ListTasks"}


@pytest.mark.parametrize(
    ("codec", "name", "row"),
    [
        (V1, "SendMessage", "SendMessage"),
        (V03, "message/send", "SendMessage"),
        (V03, "message/stream", "SendStreamingMessage"),
        (V03, "tasks/resubscribe", "SubscribeToTask"),
        (V03, "tasks/pushNotificationConfig/set", "CreateTaskPushNotificationConfig"),
        (V03, "agent/getAuthenticatedExtendedCard", "GetExtendedAgentCard"),
    ],
)
def test_a_codec_finds_the_row_its_version_names(codec: Codec, name: str, row: str) -> None:
    assert codec.method(name) is METHODS[row]


@pytest.mark.parametrize(
    ("codec", "name"), [(V1, "message/send"), (V03, "SendMessage"), (V03, "ListTasks"), (V1, "")]
)
def test_a_name_the_version_does_not_spell_is_no_row(codec: Codec, name: str) -> None:
    assert codec.method(name) is None


def test_a_list_reads_its_page_within_the_specs_bounds() -> None:
    assert (DEFAULT_PAGE_SIZE, MAX_PAGE_SIZE) == (50, 100)
    list_tasks = METHODS["ListTasks"]
    assert list_tasks.decode(V1_READING, Params({})) == ListTasks(page_size=50)
    assert list_tasks.decode(V1_READING, Params({"pageSize": 100})) == ListTasks(page_size=100)
    with pytest.raises(A2AError, match="from 1 to 100, got 101"):
        list_tasks.decode(V1_READING, Params({"pageSize": 101}))
