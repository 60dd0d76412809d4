from __future__ import annotations

import gc
import subprocess
import sys
from typing import Any

import httpx
import pytest
import trio

from n8n_a2a.app import front
from n8n_a2a.app.edge import Edge
from n8n_a2a.app.front import OperatorApp
from n8n_a2a.observability.metrics import Metrics
from tests.support.adapter import AdapterFactory, free_port, make_settings
from tests.support.jsonrpc import V1, rpc, send_v1
from tests.support.stub_webhook import StubWebhook


async def test_a_path_of_the_a2a_routes_refuses_another_method_saying_which_it_takes(
    adapter: str,
) -> None:
    async with httpx.AsyncClient() as http:
        card = await http.post(adapter + ".well-known/agent-card.json")
        binding = await http.put(adapter + "tasks/t-1")
    assert (card.status_code, card.headers["allow"]) == (405, "GET")
    assert (binding.status_code, binding.headers["allow"]) == (405, "DELETE, GET, POST")
    assert binding.json()["error"]["code"] == 405


async def test_the_operators_paths_are_the_operators_app_and_the_a2a_routes_are_not(
    adapter: str,
) -> None:
    async with httpx.AsyncClient() as http:
        health = await http.get(adapter + "healthz")
        metrics = await http.get(adapter + "metrics")
        task = (await rpc(adapter, send_v1("hi"), V1))["result"]["task"]
        found = await http.get(adapter + f"tasks/{task['id']}", headers={"A2A-Version": "1.0"})
    assert health.json() == {"status": "ok"}
    assert "n8n_a2a" in metrics.text
    assert found.json()["status"]["state"] == "TASK_STATE_COMPLETED"


async def test_a_path_with_doubled_slashes_is_the_a2a_route_of_its_merged_path(
    adapter: str, start_adapter: AdapterFactory, stub: StubWebhook
) -> None:
    # A client that joins a public URL ending in "/" with "/message:send" asks for
    # "//message:send" (the A2A TCK does); quart's routing merged the slashes, and so
    # does the front. Under a public URL with a path too.
    task = (await rpc(adapter + "/", send_v1("hi"), V1))["result"]["task"]
    port = free_port()
    under = await start_adapter(stub.url, port=port, public_url=f"http://127.0.0.1:{port}/a2a/")
    async with httpx.AsyncClient(headers=V1) as http:
        card = await http.get(adapter + "/.well-known/agent-card.json")
        found = await http.get(adapter + f"/tasks/{task['id']}")
        sent = await http.post(under + "/message:send", json=send_v1("hi")["params"])
    assert card.json()["name"] == make_settings().agent_name
    assert found.json()["status"]["state"] == "TASK_STATE_COMPLETED"
    assert sent.json()["task"]["status"]["state"] == "TASK_STATE_COMPLETED"


@pytest.mark.slow  # a Python process of its own
def test_a_start_that_serves_only_the_a2a_routes_imports_no_quart() -> None:
    # In a process of its own: this one has imported quart for other tests.
    script = (
        "import sys, n8n_a2a.server, n8n_a2a.app;"
        "print(sorted(m for m in sys.modules if m.split('.')[0] in ('quart', 'flask', 'werkzeug')))"
    )
    found = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True)
    assert found.returncode == 0, found.stderr
    assert found.stdout.strip() == "[]"


async def test_the_operators_app_is_built_once_for_requests_that_come_together(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    built: list[Edge] = []
    served: list[str] = []

    def factory() -> Any:
        def make(edge: Edge) -> Any:
            built.append(edge)

            async def app(scope: Any, receive: Any, send: Any) -> None:
                served.append(scope["path"])

            return app

        return make

    monkeypatch.setattr(front, "_operator_factory", factory)
    edge = Edge(make_settings(), None, Metrics(), None, None, lambda: None)  # type: ignore[arg-type]
    operator = OperatorApp(edge)
    async with trio.open_nursery() as nursery:
        for path in ("/healthz", "/readyz", "/metrics"):
            nursery.start_soon(operator, {"type": "http", "path": path}, None, None)  # type: ignore[arg-type]
    assert built == [edge]
    assert sorted(served) == ["/healthz", "/metrics", "/readyz"]


async def test_a_failed_build_fails_each_request_that_waited_for_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    def factory() -> Any:
        raise ImportError("quart is not installed")

    monkeypatch.setattr(front, "_operator_factory", factory)
    edge = Edge(make_settings(), None, Metrics(), None, None, lambda: None)  # type: ignore[arg-type]
    operator = OperatorApp(edge)
    with pytest.raises(ImportError):
        await operator({"type": "http", "path": "/healthz"}, None, None)  # type: ignore[arg-type]
    with pytest.raises(RuntimeError, match="could not be built"):
        await operator({"type": "http", "path": "/healthz"}, None, None)  # type: ignore[arg-type]


async def test_what_the_operators_app_made_is_frozen_once_it_is_built(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Its import's modules live as long as the process: no pass of the collector scans
    them, as none scans what the start made."""
    made: list[object] = []

    def factory() -> Any:
        made.extend([object()] for _ in range(100))  # what an import leaves behind

        def make(edge: Edge) -> Any:
            async def app(scope: Any, receive: Any, send: Any) -> None:
                pass

            return app

        return make

    monkeypatch.setattr(front, "_operator_factory", factory)
    edge = Edge(make_settings(), None, Metrics(), None, None, lambda: None)  # type: ignore[arg-type]
    gc.unfreeze()  # this process's, frozen before: only the build's counted
    try:
        await OperatorApp(edge)({"type": "http", "path": "/healthz"}, None, None)  # type: ignore[arg-type]
        assert gc.get_freeze_count() >= len(made)
        young = {id(each) for each in gc.get_objects(generation=0)}
        assert not any(id(each) in young for each in made)
    finally:
        gc.unfreeze()
