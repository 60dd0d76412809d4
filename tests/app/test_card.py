from __future__ import annotations

import json
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from email.utils import format_datetime
from typing import Any

import pytest
from a2a.client.card_resolver import parse_agent_card

from n8n_a2a import __version__
from n8n_a2a.app.card import (
    CachedCard,
    CardRoute,
    card_facts,
    card_paths,
    card_url,
    not_modified,
)
from n8n_a2a.app.exchange import Answer
from n8n_a2a.protocol.card import OAuthFlow, agent_card
from n8n_a2a.protocol.media import Modes
from tests.support.adapter import make_settings
from tests.support.asgi import asked
from tests.support.card_keys import ALGORITHMS, KID, sdk_verifier, signer

ISSUER = "https://login.example/realms/agents"
STARTED = datetime(2026, 11, 29, 18, 34, 32, tzinfo=UTC)
ETAG = '"0123456789abcdef0123456789abcdef"'


class Client:
    """GETs of the card route, answered without a server."""

    def __init__(self, route: CardRoute) -> None:
        self._route = route

    async def get(self, path: str, headers: dict[str, str] | None = None) -> Answer:
        return await self._route.card(asked("GET", path, headers))


def document(answer: Answer) -> Any:
    assert isinstance(answer.body, bytes)
    return json.loads(answer.body)


def test_the_facts_come_from_the_settings() -> None:
    settings = make_settings(oidc_issuer=ISSUER + "/", oidc_audience="supply-agent")
    facts = card_facts(settings)
    assert facts.oidc_discovery_url == ISSUER + "/.well-known/openid-configuration"
    assert facts.oidc_audience == "supply-agent"
    assert facts.version == __version__
    assert (facts.agent_name, facts.public_url) == (settings.agent_name, settings.public_url)
    assert facts.skill_examples == settings.skill_examples
    assert not facts.require_token and facts.scopes == ()
    assert card_facts(replace(settings, oidc_scopes=("a2a.call",))).scopes == ("a2a.call",)
    assert card_facts(make_settings(require_token=True)).require_token
    modes = card_facts(make_settings(input_modes=("application/json",))).modes
    assert modes == Modes(("application/json",), ("text/plain",))


@pytest.mark.parametrize(
    ("public_url", "paths", "url"),
    [
        (
            "http://127.0.0.1:1/",
            ["/.well-known/agent-card.json"],
            "http://127.0.0.1:1/.well-known/agent-card.json",
        ),
        (
            "https://agent.example/a2a/",
            ["/.well-known/agent-card.json", "/a2a/.well-known/agent-card.json"],
            "https://agent.example/a2a/.well-known/agent-card.json",
        ),
    ],
)
def test_the_card_is_also_under_the_public_urls_path(
    public_url: str, paths: list[str], url: str
) -> None:
    settings = make_settings(public_url=public_url)
    assert card_paths(settings) == paths
    assert card_url(settings) == url


def test_a_cached_card_is_compact_json_with_a_strong_etag_of_its_body() -> None:
    cached = CachedCard.of({"name": "Agent é", "skills": []})
    assert cached.body == '{"name":"Agent é","skills":[]}'.encode()
    assert json.loads(cached.body) == {"name": "Agent é", "skills": []}
    assert len(cached.etag) == 34 and cached.etag.startswith('"') and cached.etag.endswith('"')
    assert CachedCard.of({"name": "Agent é", "skills": []}).etag == cached.etag
    assert CachedCard.of({"name": "Agent", "skills": []}).etag != cached.etag


@pytest.mark.parametrize(
    ("headers", "expected"),
    [
        ({}, False),
        ({"If-None-Match": ETAG}, True),
        ({"If-None-Match": f'"other", W/{ETAG}'}, True),
        ({"If-None-Match": "*"}, True),
        ({"If-None-Match": '"other"'}, False),
        ({"If-Modified-Since": format_datetime(STARTED, usegmt=True)}, True),
        ({"If-Modified-Since": format_datetime(STARTED + timedelta(days=1), usegmt=True)}, True),
        (
            {"If-Modified-Since": format_datetime(STARTED - timedelta(seconds=1), usegmt=True)},
            False,
        ),
        ({"If-Modified-Since": "yesterday"}, False),
        # If-None-Match decides when both are sent (RFC 9110 §13.1.3).
        (
            {
                "If-None-Match": '"other"',
                "If-Modified-Since": format_datetime(STARTED, usegmt=True),
            },
            False,
        ),
    ],
)
def test_a_conditional_get_is_answered_304_when_the_client_has_the_card(
    headers: dict[str, str], expected: bool
) -> None:
    assert not_modified(headers, ETAG, STARTED) is expected


@pytest.mark.parametrize(
    "date",
    [
        "Mon, 01 Jan 99999999999 00:00:00 GMT",  # a year past C's long
        "Mon, 01 Jan 10000 00:00:00 GMT",  # past datetime's last year
        "Mon, 01 Jan 0000 00:00:00 GMT",
        "Sun, 00 Jan 2026 00:00:00 GMT",
        "Mon, 31 Feb 2026 00:00:00 GMT",
        "Mon, 01 Jan 2026 25:61:61 GMT",
        "Mon, 01 Jan 2026 00:00:" + "9" * 30 + " GMT",
        "Mon, 01 Jan 2026 00:00:00 +99999999999999",  # a zone past C's int
        "Mon, 01 Jan 2026 00:00:00 +9999",  # past a day's offset
        "Mon, 01 Jan 2026 00:00:00 -0000",  # no zone to compare with
        "",
        "Mon,",
        "lundi, 1er janvier 2100 à midi",
        "\x00\x01",
        "Mon, 01 Jan " + "x" * 10_000,
        "9" * 10_000,
    ],
)
def test_an_unreadable_date_is_no_date_and_the_card_is_served(date: str) -> None:
    # STARTED - 1 s would be False anyway: what matters is that nothing is raised.
    assert not_modified({"If-Modified-Since": date}, ETAG, STARTED) is False


async def test_the_card_route_serves_the_card_for_a_date_past_any_calendar() -> None:
    client = Client(CardRoute(make_settings()))
    path = "/.well-known/agent-card.json"
    plain = await client.get(path)
    odd = await client.get(
        path, headers={"If-Modified-Since": "Mon, 01 Jan 99999999999 00:00:00 GMT"}
    )
    assert (odd.status, odd.body) == (200, plain.body)


class Verifier:
    """What the card route reads of the OIDC verifier: whether the keys are loaded, and the
    issuer's code flow from its discovery document."""

    def __init__(self) -> None:
        self.ready = False
        self.oauth_flow: OAuthFlow | None = None


async def test_the_card_follows_the_issuers_code_flow_and_is_not_cached_before() -> None:
    verifier = Verifier()
    settings = make_settings(oidc_issuer=ISSUER, oidc_audience="supply-agent")
    client = Client(CardRoute(settings, verifier))  # type: ignore[arg-type]
    path = "/.well-known/agent-card.json"
    early = await client.get(path, headers={"A2A-Version": "1.0"})
    assert early.headers["Cache-Control"] == "no-cache"  # about to change
    assert list((document(early))["securitySchemes"]) == ["oidc"]
    metadata = ISSUER + "/.well-known/openid-configuration"
    verifier.ready, verifier.oauth_flow = True, OAuthFlow(metadata, ISSUER + "/a", ISSUER + "/t")
    # A client that revalidates by date alone, within the same second, still gets it.
    since = {"If-Modified-Since": early.headers["Last-Modified"]}
    loaded = await client.get(path, headers={"A2A-Version": "1.0", **since})
    assert loaded.status == 200
    assert loaded.headers["Last-Modified"] != early.headers["Last-Modified"]
    assert loaded.headers["Cache-Control"] == "public, max-age=300"
    assert loaded.headers["ETag"] != early.headers["ETag"]
    assert list((document(loaded))["securitySchemes"]) == ["oidc", "oauth2"]
    same = await client.get(path, headers={"A2A-Version": "1.0"})
    assert same.headers["ETag"] == loaded.headers["ETag"]  # built once per flow
    verifier.oauth_flow = None  # the issuer dropped its code flow
    dropped = await client.get(path, headers={"A2A-Version": "1.0"})
    assert list((document(dropped))["securitySchemes"]) == ["oidc"]


def sdk_card(body: str | bytes) -> Any:
    """The card as a2a-sdk parses what it fetched."""
    return parse_agent_card(json.loads(body))


@pytest.mark.parametrize("algorithm", ALGORITHMS)
async def test_with_a_key_every_card_served_is_signed_and_its_etag_covers_the_signature(
    algorithm: str,
) -> None:
    settings = make_settings(card_signing_key=signer(algorithm).key, card_signing_kid=KID)
    client = Client(CardRoute(settings))
    unsigned = CachedCard.of(agent_card(card_facts(settings), legacy_fields=False))
    for headers in ({"A2A-Version": "1.0"}, {}):
        served = await client.get("/.well-known/agent-card.json", headers=headers)
        body = served.body
        assert isinstance(body, bytes)
        assert len(json.loads(body)["signatures"]) == 1
        sdk_verifier(algorithm)(sdk_card(body))
        assert served.headers["ETag"] == CachedCard.of(json.loads(body)).etag
    assert served.headers["ETag"] != unsigned.etag


async def test_the_card_built_anew_for_a_changed_code_flow_is_signed_too() -> None:
    verifier = Verifier()
    settings = make_settings(
        oidc_issuer=ISSUER,
        oidc_audience="supply-agent",
        card_signing_key=signer("ES256").key,
        card_signing_kid=KID,
    )
    client = Client(CardRoute(settings, verifier))  # type: ignore[arg-type]
    path = "/.well-known/agent-card.json"
    metadata = ISSUER + "/.well-known/openid-configuration"
    verifier.ready, verifier.oauth_flow = True, OAuthFlow(metadata, ISSUER + "/a", ISSUER + "/t")
    for headers in ({"A2A-Version": "1.0"}, {}):
        rebuilt = (await client.get(path, headers=headers)).body
        assert isinstance(rebuilt, bytes)
        assert "oauth2" in json.loads(rebuilt)["securitySchemes"]
        sdk_verifier("ES256")(sdk_card(rebuilt))
