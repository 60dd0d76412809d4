"""The conformance tooling itself: the table builder and the TCK's workflow stand-in."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import httpx
import pytest
import trio

from conformance import table, tck_workflow
from tests.support.adapter import AdapterFactory
from tests.support.jsonrpc import V1, call, rpc
from tests.support.sse import kinds_v1, open_stream

pytestmark = pytest.mark.not_a_client

JUNIT = """<?xml version="1.0" encoding="utf-8"?>
<testsuites><testsuite name="pytest">
  <testcase classname="tests.interop.test_js" name="test_every_outcome[v1.0]">
    <properties>
      <property name="client" value="@a2a-js/sdk (Node)" />
      <property name="client_version" value="1.3.0" />
      <property name="client_mode" value="v1.0" />
      <property name="client_runtime" value="Node v20.20.2" />
    </properties>
  </testcase>
  <testcase classname="tests.interop.test_js" name="test_cancel[v1.0]">
    <properties>
      <property name="client" value="@a2a-js/sdk (Node)" />
      <property name="client_version" value="1.3.0" />
      <property name="client_mode" value="v1.0" />
    </properties>
    <failure message="expected a task">...</failure>
  </testcase>
  <testcase classname="tests.interop.test_js" name="test_stream_bound[v1.0]">
    <properties>
      <property name="client" value="@a2a-js/sdk (Node)" />
      <property name="client_version" value="1.3.0" />
      <property name="client_mode" value="v1.0 payloads" />
    </properties>
    <skipped type="pytest.xfail" message="SSE-bound" />
  </testcase>
  <testcase classname="tests.interop.test_js" name="test_no_node[v1.0]">
    <properties>
      <property name="client" value="@a2a-js/sdk (Node)" />
      <property name="client_version" value="1.3.0" />
      <property name="client_mode" value="v1.0 payloads" />
    </properties>
    <skipped type="pytest.skip" message="no Node" />
  </testcase>
  <testcase classname="tests.interop.test_js" name="test_helper">
    <properties><property name="not_a_client" value="true" /></properties>
  </testcase>
  <testcase classname="tests.interop.test_other_sdk" name="test_unmarked" />
  <testcase classname="tests.test_config" name="test_not_a_client" />
</testsuite></testsuites>
"""


def test_the_table_has_a_row_per_client_and_mode_and_names_failures(tmp_path: Path) -> None:
    report = tmp_path / "report.xml"
    report.write_text(JUNIT)
    rows, unmarked = table.client_rows([report])
    assert [(r.client, r.version_cell, r.mode) for r in rows] == [
        ("@a2a-js/sdk (Node)", "1.3.0 on Node v20.20.2", "v1.0"),
        ("@a2a-js/sdk (Node)", "1.3.0", "v1.0 payloads"),
    ]
    assert rows[0].result == "**fail** 1 of 2: test_cancel[v1.0]"
    # An expected failure is called what pytest calls it, not a skip.
    assert rows[1].result == "not run (1 skipped, 1 xfailed)"
    rows[1].passed.append("test_bound[v1.0]")
    assert rows[1].result == "pass (1 of 3 tests, 1 skipped, 1 xfailed)"
    # A test marked not_a_client is left out on purpose; an unmarked interop test is noted.
    assert unmarked == ["tests.interop.test_other_sdk::test_unmarked"]


NO_CLIENT = """<?xml version="1.0" encoding="utf-8"?>
<testsuites><testsuite name="pytest">
  <testcase classname="tests.core.test_sanitising" name="test_cut" />
  <testcase classname="tests.interop.test_js" name="test_helper">
    <properties><property name="not_a_client" value="true" /></properties>
  </testcase>
</testsuite></testsuites>
"""
#: What pytest writes when it collected nothing (exit code 5).
NOTHING_RAN = '<testsuites><testsuite name="pytest" tests="0" /></testsuites>'


@pytest.mark.parametrize("junit", [NO_CLIENT, NOTHING_RAN], ids=["other tests", "no test"])
def test_without_a_client_test_if_clients_skips_the_table_quietly(
    junit: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """scripts/test after a run of other tests: no table, nothing said, exit 0."""
    report = tmp_path / "report.xml"
    report.write_text(junit)
    assert table.main([str(report), "--if-clients"]) == 0
    assert capsys.readouterr() == ("", "")
    # Asked for the table by hand (the README's command), such a report is an error.
    assert table.main([str(report)]) == 1
    assert capsys.readouterr() == ("", "no test in these reports carries a client marker\n")


def test_with_a_client_test_if_clients_prints_the_table(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    report = tmp_path / "report.xml"
    report.write_text(JUNIT)
    assert table.main([str(report), "--if-clients"]) == 0
    out, err = capsys.readouterr()
    assert out.splitlines() == [
        "| client or kit | version | mode | result |",
        "|---|---|---|---|",
        "| @a2a-js/sdk (Node) | 1.3.0 on Node v20.20.2 | v1.0 "
        "| **fail** 1 of 2: test_cancel[v1.0] |",
        "| @a2a-js/sdk (Node) | 1.3.0 | v1.0 payloads | not run (1 skipped, 1 xfailed) |",
    ]
    assert "tests.interop.test_other_sdk::test_unmarked has neither" in err


def test_the_tck_row_counts_requirements_by_level(tmp_path: Path) -> None:
    compatibility = tmp_path / "compatibility.json"
    requirements = {
        "A": {"level": "MUST", "status": "PASS", "transports": {"jsonrpc": "PASS"}},
        "B": {"level": "MUST", "status": "FAIL", "transports": {"jsonrpc": "FAIL"}},
        "C": {"level": "MUST", "status": "NOT TESTED", "transports": {}},
        "D": {"level": "SHOULD", "status": "SKIPPED", "transports": {"jsonrpc": "SKIPPED"}},
    }
    compatibility.write_text(json.dumps({"per_requirement": requirements}))
    row = table.tck_row(compatibility, "1.0-dev@abc", "JSON-RPC, v1.0")
    assert row[:3] == ["a2a-tck", "1.0-dev@abc", "JSON-RPC, v1.0"]
    assert row[3] == (
        "**fail**; MUST: 1 passed, 1 failed, 1 without a test in the kit; SHOULD: 1 skipped"
    )
    assert table.render([row]).splitlines()[2].startswith("| a2a-tck | 1.0-dev@abc |")


def test_the_tck_workflow_answers_by_the_longest_matching_prefix() -> None:
    assert tck_workflow.reply_for("tck-artifact-file-url-1a2b") == {
        "answer": "output.txt",
        "escalate": False,
        "files": [
            {
                "name": "output.txt",
                "mediaType": "text/plain",
                "url": "https://example.com/output.txt",
            }
        ],
    }
    assert tck_workflow.reply_for("tck-artifact-file-1a2b")["files"] == [
        {"name": "output.txt", "mediaType": "text/plain", "base64": "dGNr"}  # b"tck"
    ]
    assert tck_workflow.reply_for("tck-input-required-1a2b") == {
        "answer": "Input required: send the next message on this task.",
        "escalate": False,
        "inputRequired": True,
    }
    assert tck_workflow.reply_for("m-1") == {
        "answer": "Unhandled messageId prefix: m-1",
        "escalate": False,
    }


async def test_the_tck_workflow_serves_the_contract(nursery: trio.Nursery) -> None:
    [url] = await nursery.start(tck_workflow.serve_workflow, "127.0.0.1", 0)
    request = {"text": "hi", "taskId": "t", "contextId": "c", "messageId": "tck-complete-task-9"}
    async with httpx.AsyncClient() as client:
        response = await client.post(f"{url}/webhook/tck", json=request)
    assert response.headers["content-type"].startswith("application/json")
    assert response.json() == {"answer": "Hello from TCK", "escalate": False}


async def test_the_tck_workflow_drives_the_kits_input_required_fixtures(
    nursery: trio.Nursery, start_adapter: AdapterFactory
) -> None:
    """What the kit's create_working_task and create_multiturn_task do, and the
    requirements built on them: CORE-CANCEL-001, CORE-MULTI-005, CORE-HIST-002, and the
    subscriptions to a waiting task of STREAM-SUB-001/002 and STREAM-ORDER-002 to -004."""
    [url] = await nursery.start(tck_workflow.serve_workflow, "127.0.0.1", 0)
    adapter = await start_adapter(f"{url}/webhook/tck", allow_input_required=True)

    async def send(message_id: str, task_id: str | None = None) -> dict[str, Any]:
        message = {"role": "ROLE_USER", "parts": [{"text": "TCK"}], "messageId": message_id}
        if task_id is not None:
            message["taskId"] = task_id
        document = call("SendMessage", message=message)
        task: dict[str, Any] = (await rpc(adapter, document, V1))["result"]["task"]
        return task

    working = await send("tck-input-required-1")
    assert working["status"]["state"] == "TASK_STATE_INPUT_REQUIRED"
    canceled = (await rpc(adapter, call("CancelTask", id=working["id"]), V1))["result"]
    assert (canceled["id"], canceled["status"]["state"]) == (working["id"], "TASK_STATE_CANCELED")

    working = await send("tck-input-required-2")
    followed = await send("tck-infer-ctx-2", working["id"])  # taskId only
    assert (followed["contextId"], followed["status"]["state"]) == (
        working["contextId"],
        "TASK_STATE_COMPLETED",
    )

    working = await send("tck-input-required-3")
    done = await send("tck-complete-task-3", working["id"])
    assert done["status"]["state"] == "TASK_STATE_COMPLETED"
    fetched = (await rpc(adapter, call("GetTask", id=done["id"], history_length=1), V1))["result"]
    assert [m["parts"][0]["text"] for m in fetched["history"]] == ["Hello from TCK"]

    working = await send("tck-input-required-4")
    subscribe = call("SubscribeToTask", id=working["id"])
    async with (
        open_stream(adapter, subscribe, V1) as first,
        open_stream(adapter, subscribe, V1) as second,
    ):
        heads = [await first.next(), await second.next()]
        assert heads[0] == heads[1]
        assert kinds_v1(heads) == ["task TASK_STATE_INPUT_REQUIRED"] * 2  # type: ignore[arg-type]
        await send("tck-complete-task-4", working["id"])
        rests = [await first.rest(), await second.rest()]
    assert rests[0] == rests[1]
    assert kinds_v1(rests[0])[-1] == "statusUpdate TASK_STATE_COMPLETED"


#: What the kit's DM-ART-001 scenarios look for in the task's parts (its
#: tests/compatibility/core_operations/test_artifacts.py), by messageId prefix.
KIT_ARTIFACTS: dict[str, dict[str, Any]] = {
    "tck-artifact-text": {"text": "Generated text content"},
    "tck-artifact-file": {"raw": "dGNr", "filename": "output.txt", "mediaType": "text/plain"},
    "tck-artifact-file-url": {
        "url": "https://example.com/output.txt",
        "filename": "output.txt",
        "mediaType": "text/plain",
    },
    "tck-artifact-data": {"data": {"key": "value", "count": 42}},
}


async def test_the_tck_workflow_makes_the_kits_artifacts(
    nursery: trio.Nursery, start_adapter: AdapterFactory
) -> None:
    """Through the adapter with the modes docs/conformance.md runs the kit with: each
    artifact scenario's task completes, its first artifact's first part the one the kit
    looks for (DM-ART-001 reads `artifacts[0]` alone)."""
    [url] = await nursery.start(tck_workflow.serve_workflow, "127.0.0.1", 0)
    modes = ("text/plain", "application/json", "*/*")
    adapter = await start_adapter(f"{url}/webhook/tck", output_modes=modes)
    for prefix, expected in KIT_ARTIFACTS.items():
        message = {"role": "ROLE_USER", "parts": [{"text": "TCK"}], "messageId": f"{prefix}-1"}
        task = (await rpc(adapter, call("SendMessage", message=message), V1))["result"]["task"]
        assert task["status"]["state"] == "TASK_STATE_COMPLETED", (prefix, task)
        first = task["artifacts"][0]["parts"][0]
        assert expected.items() <= first.items(), (prefix, task["artifacts"])


def test_the_table_replaces_the_page_s_block_and_nothing_else() -> None:
    page = "# x\n<!-- conformance table -->\nold\n<!-- end of conformance table -->\ntail\n"
    updated = table.into_page(page, "| new |")
    assert updated == (
        "# x\n<!-- conformance table -->\n| new |\n<!-- end of conformance table -->\ntail\n"
    )
    with pytest.raises(ValueError, match="no"):
        table.into_page("# no markers\n", "| new |")
