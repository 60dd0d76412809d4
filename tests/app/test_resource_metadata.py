"""The protected resource metadata route (RFC 9728), on the app alone."""

from __future__ import annotations

from quart_trio import QuartTrio

from n8n_a2a.app.resource_metadata import ProtectedResourceRoute
from n8n_a2a.auth.signin import ProtectedResource

RESOURCE = ProtectedResource(
    "https://agents.example/supply", "https://login.example", ("a2a.call",), "Supply agent"
)


async def test_the_metadata_is_served_where_rfc_9728_puts_it_unauthenticated() -> None:
    app = QuartTrio(__name__)
    ProtectedResourceRoute(RESOURCE).add_to(app)
    client = app.test_client()
    answer = await client.get("/.well-known/oauth-protected-resource/supply")
    assert answer.status_code == 200
    assert answer.headers["Content-Type"] == "application/json"
    assert answer.headers["Cache-Control"] == "public, max-age=3600"
    assert await answer.get_json() == RESOURCE.metadata()
    # A client that derives the location from the resource's URL may add a last slash.
    slashed = await client.get("/.well-known/oauth-protected-resource/supply/")
    assert slashed.status_code == 200 and await slashed.get_json() == RESOURCE.metadata()
    assert (await client.get("/.well-known/oauth-protected-resource")).status_code == 404
    posted = await client.post("/.well-known/oauth-protected-resource/supply")
    assert posted.status_code == 405


async def test_at_the_root_the_metadata_is_at_the_bare_well_known_path() -> None:
    app = QuartTrio(__name__)
    root = ProtectedResource("http://127.0.0.1:8080/", "https://login.example", (), "Agent")
    ProtectedResourceRoute(root).add_to(app)
    answer = await app.test_client().get("/.well-known/oauth-protected-resource")
    assert answer.status_code == 200 and (await answer.get_json())["resource"] == root.resource
