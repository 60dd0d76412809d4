from __future__ import annotations

from n8n_a2a.app.edge import Edge
from n8n_a2a.app.operator import operator_app
from n8n_a2a.auth.signin import ProtectedResource
from n8n_a2a.observability.metrics import Metrics
from tests.support.adapter import make_settings


def _edge(resource: ProtectedResource | None = None) -> Edge:
    settings = make_settings()
    return Edge(settings, None, Metrics(), None, None, lambda: None, resource)  # type: ignore[arg-type]


async def test_the_operators_app_serves_health_and_answers_a_path_nobody_serves_in_json() -> None:
    client = operator_app(_edge()).test_client()
    assert await (await client.get("/healthz")).get_json() == {"status": "ok"}
    nowhere = await client.get("/nowhere")
    assert nowhere.status_code == 404
    assert (await nowhere.get_json())["error"]["code"] == 404
    posted = await client.post("/healthz")
    assert posted.status_code == 405
    assert (await posted.get_json())["error"]["message"] == (
        "The method is not allowed for the requested URL."
    )


async def test_with_an_issuer_the_metadata_is_the_operators_too() -> None:
    resource = ProtectedResource(
        "https://agents.example/supply", "https://login.example", ("a2a.call",), "Supply agent"
    )
    client = operator_app(_edge(resource)).test_client()
    served = await client.get("/.well-known/oauth-protected-resource/supply")
    assert (await served.get_json()) == resource.metadata()
