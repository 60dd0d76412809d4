"""The Agent Card route: both card shapes, built once, with ETag and Last-Modified."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from email.utils import format_datetime, parsedate_to_datetime

from quart import Response, request
from quart_trio import QuartTrio

from .. import __version__
from ..config import Settings
from ..protocol.card import CardFacts, agent_card
from .negotiation import VERSION_HEADER, Lookup, current

CARD_PATH = "/.well-known/agent-card.json"


def card_facts(settings: Settings) -> CardFacts:
    """What the card says, from the settings."""
    return CardFacts(
        agent_name=settings.agent_name,
        agent_description=settings.agent_description,
        version=__version__,
        public_url=settings.public_url,
        skill_id=settings.skill_id,
        skill_name=settings.skill_name,
        skill_description=settings.skill_description,
        skill_examples=settings.skill_examples,
        require_token=settings.require_token,
        oidc_discovery_url=settings.oidc_discovery_url,
        oidc_audience=settings.oidc_audience,
        modes=settings.modes,
    )


def card_paths(settings: Settings) -> list[str]:
    """Where the card is served. Clients look for it under the URL they were given; behind an
    ingress that is the public URL's path, so the card is there too."""
    return sorted({CARD_PATH, settings.rpc_path.rstrip("/") + CARD_PATH})


def card_url(settings: Settings) -> str:
    """Where a client given the public URL finds the card."""
    return settings.public_url.rstrip("/") + CARD_PATH


@dataclass(frozen=True, slots=True)
class CachedCard:
    """A card's body as served, and its ETag."""

    body: bytes
    etag: str

    @classmethod
    def of(cls, card: Mapping[str, object]) -> CachedCard:
        body = json.dumps(card, ensure_ascii=False, separators=(",", ":")).encode()
        return cls(body, '"' + hashlib.sha256(body).hexdigest()[:32] + '"')


def not_modified(headers: Lookup, etag: str, last_modified: datetime) -> bool:
    """Whether a conditional GET's client has this card already (If-None-Match first)."""
    if_none_match = headers.get("If-None-Match")
    if if_none_match is not None:
        tags = {tag.strip().removeprefix("W/") for tag in if_none_match.split(",")}
        return etag in tags or "*" in tags
    if_modified_since = headers.get("If-Modified-Since")
    if if_modified_since is None:
        return False
    try:
        return parsedate_to_datetime(if_modified_since) >= last_modified
    except (TypeError, ValueError):
        return False


class CardRoute:
    """GET of the card: the v1.0 shape for a v1.0 client, the legacy shape for the others."""

    def __init__(self, settings: Settings) -> None:
        facts = card_facts(settings)
        self._cards = {
            legacy: CachedCard.of(agent_card(facts, legacy_fields=legacy))
            for legacy in (True, False)
        }
        self._paths = card_paths(settings)
        # The card only changes with a restart: its Last-Modified is the start time.
        self._started = datetime.now(UTC).replace(microsecond=0)

    def add_to(self, app: QuartTrio) -> None:
        for path in self._paths:
            app.add_url_rule(path, endpoint=f"card {path}", view_func=self.card, methods=["GET"])

    async def card(self) -> Response:
        # A v1.0 client gets the card the v1.0 schema validates; everyone else also gets
        # the top-level `url` that v0.3 clients need.
        cached = self._cards[not current().plain_card]
        headers = {
            "ETag": cached.etag,
            "Last-Modified": format_datetime(self._started, usegmt=True),
            "Cache-Control": "public, max-age=300",
            "Vary": VERSION_HEADER,
        }
        if not_modified(request.headers, cached.etag, self._started):
            return Response(b"", status=304, headers=headers)
        return Response(cached.body, content_type="application/json", headers=headers)
