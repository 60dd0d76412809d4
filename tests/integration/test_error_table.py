"""A2A 1.0.1's error table (§5.4) over real HTTP, on both bindings: each error the adapter
can be made to answer, made so on JSON-RPC (its code, the ErrorInfo reason in `data`) and
on HTTP+JSON (the HTTP status, the google.rpc.Code name, the ErrorInfo reason), against
the spec's row (tests/support/spec_errors.py); every other row said unreachable and why.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

import httpx
import pytest

from tests.support import spec_errors
from tests.support.jsonrpc import V1, call, rpc, send_v1

#: Where a trigger says `{task}`: the id of a task that has completed.
TASK = "{task}"
#: A send that asks for an answer in a media type the agent does not answer in.
SEND_PNG = send_v1("answer:ok", acceptedOutputModes=["image/png"])["params"]


@dataclass(frozen=True, slots=True)
class Trigger:
    """One request that makes the adapter answer an error, said for both bindings: the
    JSON-RPC method and its params, and the HTTP+JSON route (path relative to the
    adapter's URL) and its body; `headers` go with both (A2A-Version: 1.0 otherwise)."""

    method: str
    params: dict[str, Any]
    http_method: str
    path: str
    body: Any = None
    headers: dict[str, str] = field(default_factory=dict)


TRIGGERS = {
    "TaskNotFoundError": Trigger("GetTask", {"id": "unknown"}, "GET", "tasks/unknown"),
    "TaskNotCancelableError": Trigger("CancelTask", {"id": TASK}, "POST", f"tasks/{TASK}:cancel"),
    # §3.3.4: the card does not claim capabilities.extendedAgentCard.
    "UnsupportedOperationError": Trigger("GetExtendedAgentCard", {}, "GET", "extendedAgentCard"),
    "ContentTypeNotSupportedError": Trigger(
        "SendMessage", SEND_PNG, "POST", "message:send", SEND_PNG
    ),
    "VersionNotSupportedError": Trigger(
        "GetTask", {"id": "unknown"}, "GET", "tasks/unknown", headers={"A2A-Version": "9.9"}
    ),
}

#: The rows no request can reach, and why.
UNREACHABLE = {
    "PushNotificationNotSupportedError": "the adapter always serves push notifications, and "
    "its card says so (capabilities.pushNotifications)",
    "InvalidAgentResponseError": "never answered to a call: a workflow reply off the contract "
    "fails its task (outcome OFF_CONTRACT)",
    "ExtendedAgentCardNotConfiguredError": "v1.0 keeps it for a card that claims an extended "
    "card, and ours never does (v0.3's -32007 is tested below)",
    "ExtensionSupportRequiredError": "the card declares no extension, so none is required",
}


def with_task(value: Any, task_id: str) -> Any:
    """`value` with each `{task}` in it the id of a completed task."""
    return json.loads(json.dumps(value).replace(TASK, task_id))


async def http_json(adapter: str, trigger: Trigger, task_id: str) -> httpx.Response:
    async with httpx.AsyncClient(timeout=10) as http:
        return await http.request(
            trigger.http_method,
            adapter + with_task(trigger.path, task_id),
            json=with_task(trigger.body, task_id),
            headers={**V1, **trigger.headers},
        )


def test_every_row_of_the_table_is_reached_or_said_unreachable() -> None:
    assert not TRIGGERS.keys() & UNREACHABLE.keys()
    assert TRIGGERS.keys() | UNREACHABLE.keys() == spec_errors.BY_NAME.keys()


@pytest.mark.parametrize("name", sorted(TRIGGERS))
async def test_each_error_is_the_spec_s_on_both_bindings(adapter: str, name: str) -> None:
    row, trigger = spec_errors.BY_NAME[name], TRIGGERS[name]
    done = await rpc(adapter, send_v1("answer:ok"), V1)
    task_id = done["result"]["task"]["id"]

    request = call(trigger.method, **with_task(trigger.params, task_id))
    error = (await rpc(adapter, request, {**V1, **trigger.headers}))["error"]
    [info] = error["data"]
    assert (error["code"], info["reason"], info["domain"]) == (
        row.code,
        row.reason,
        "a2a-protocol.org",
    )

    reply = await http_json(adapter, trigger, task_id)
    status = reply.json()["error"]
    [info] = status["details"]
    assert info["@type"] == "type.googleapis.com/google.rpc.ErrorInfo"
    assert (reply.status_code, status["code"], status["status"], info["reason"]) == (
        row.http_status,
        row.http_status,
        row.grpc_status,
        row.reason,
    )


async def test_a_body_of_another_media_type_is_content_type_not_supported_on_both_bindings(
    adapter: str,
) -> None:
    row = spec_errors.BY_NAME["ContentTypeNotSupportedError"]
    form = {**V1, "Content-Type": "application/x-www-form-urlencoded"}
    async with httpx.AsyncClient(timeout=10) as http:
        refused = (await http.post(adapter, content=b"a=b", headers=form)).json()["error"]
        reply = await http.post(adapter + "message:send", content=b"a=b", headers=form)
    assert (refused["code"], refused["data"][0]["reason"]) == (row.code, row.reason)
    status = reply.json()["error"]
    assert (reply.status_code, status["status"], status["details"][0]["reason"]) == (
        row.http_status,
        row.grpc_status,
        row.reason,
    )


async def test_v03_s_extended_card_method_is_its_32007_without_error_info(adapter: str) -> None:
    # v0.3 §7.10 and §8.2: the method's one error; v0.3 errors carry no ErrorInfo.
    error = (await rpc(adapter, call("agent/getAuthenticatedExtendedCard")))["error"]
    assert error["code"] == spec_errors.BY_NAME["ExtendedAgentCardNotConfiguredError"].code
    assert "data" not in error
