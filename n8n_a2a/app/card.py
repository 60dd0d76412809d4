"""The Agent Card route: both card shapes, built once (again when the issuer's code flow
changes), signed with ADAPTER_CARD_SIGNING_KEY, with ETag and Last-Modified."""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, replace
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING
from wsgiref.handlers import format_date_time  # HTTP-date; hypercorn.config imports it too

from .. import __version__
from ..config import Settings
from ..protocol.card import CardFacts, OAuthFlow, agent_card
from ..protocol.model import JSONObject
from .exchange import Answer, Asked
from .negotiation import VERSION_HEADER, Lookup, Negotiation

try:  # hashlib's own blake2b, without hashlib's import of OpenSSL's digests (_hashlib)
    from _blake2 import blake2b
except ImportError:  # an interpreter without the module: hashlib's
    from hashlib import blake2b

if TYPE_CHECKING:
    from ..auth.verifier import OidcVerifier  # the oidc extra; only with ADAPTER_OIDC_ISSUER
    from ..protocol.card_signature import CardSigner  # the settings' signer brings it

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
        scopes=settings.oidc_scopes,
        modes=settings.modes,
    )


def card_paths(settings: Settings) -> list[str]:
    """Where the card is served. Clients look for it under the URL they were given; behind an
    ingress that is the public URL's path, so the card is there too."""
    return sorted({CARD_PATH, settings.rpc_path.rstrip("/") + CARD_PATH})


def card_url(settings: Settings) -> str:
    """Where a client given the public URL finds the card."""
    return settings.public_url.rstrip("/") + CARD_PATH


def served_card(facts: CardFacts, signer: CardSigner | None, *, legacy: bool) -> JSONObject:
    """The card in one shape as served: signed when there is a key to sign it with."""
    card = agent_card(facts, legacy_fields=legacy)
    return card if signer is None else signer.signed(card)


@dataclass(frozen=True, slots=True)
class CachedCard:
    """A card's body as served, and its ETag."""

    body: bytes
    etag: str

    @classmethod
    def of(cls, card: Mapping[str, object]) -> CachedCard:
        body = json.dumps(card, ensure_ascii=False, separators=(",", ":")).encode()
        return cls(body, '"' + blake2b(body, digest_size=16).hexdigest() + '"')


def not_modified(headers: Lookup, etag: str, last_modified: datetime) -> bool:
    """Whether a conditional GET's client has this card already (If-None-Match first)."""
    if_none_match = headers.get("If-None-Match")
    if if_none_match is not None:
        tags = {tag.strip().removeprefix("W/") for tag in if_none_match.split(",")}
        return etag in tags or "*" in tags
    if_modified_since = headers.get("If-Modified-Since")
    if if_modified_since is None:
        return False
    # email.utils (and the email package under it) is imported by the first such GET,
    # not at start: it was the card's one import of its own, 1 % of the start.
    from email.utils import parsedate_to_datetime

    try:
        return parsedate_to_datetime(if_modified_since) >= last_modified
    except (TypeError, ValueError, OverflowError):
        # Not a date, whatever the reason: garbage, a field out of range (ValueError), a
        # number past C's (OverflowError), no zone to compare with (TypeError). RFC 9110
        # §13.1.3: a field that is no valid HTTP-date is ignored.
        return False


@dataclass(frozen=True, slots=True)
class Cards:
    """Both card shapes for one code flow of the issuer, and since when they are served."""

    flow: OAuthFlow | None
    by_legacy: Mapping[bool, CachedCard]
    since: datetime

    @classmethod
    def of(
        cls,
        facts: CardFacts,
        flow: OAuthFlow | None,
        before: Cards | None = None,
        signer: CardSigner | None = None,
    ) -> Cards:
        """The cards for `flow`, signed by `signer` if given; modified after `before`, which
        they replace, even within its second: a client asking If-Modified-Since alone must
        not keep the old one."""
        facts = replace(facts, oauth_flow=flow)
        by_legacy = {
            legacy: CachedCard.of(served_card(facts, signer, legacy=legacy))
            for legacy in (True, False)
        }
        since = datetime.now(UTC).replace(microsecond=0)
        if before is not None:
            since = max(since, before.since + timedelta(seconds=1))
        return cls(flow, by_legacy, since)


class CardRoute:
    """GET of the card: the v1.0 shape for a v1.0 client, the legacy shape for the others.

    With an issuer the card changes when the issuer's discovery document does (its code
    flow is the oauth2 scheme): built anew then, else built once.
    """

    def __init__(self, settings: Settings, verifier: OidcVerifier | None = None) -> None:
        self._facts = card_facts(settings)
        self._verifier = verifier
        self._signer = settings.card_signer
        self._cards = Cards.of(self._facts, None, signer=self._signer)

    async def card(self, asked: Asked) -> Answer:
        cards = self._current()
        # A v1.0 client gets the card the v1.0 schema validates; everyone else also gets
        # the top-level `url` that v0.3 clients need.
        cached = cards.by_legacy[not Negotiation.of(asked.headers, asked.args).plain_card]
        headers = {
            "ETag": cached.etag,
            "Last-Modified": format_date_time(cards.since.timestamp()),
            "Cache-Control": "public, max-age=300",
            "Vary": VERSION_HEADER,
        }
        if self._verifier is not None and not self._verifier.ready:
            # The issuer's code flow is not known yet: the card is about to change.
            headers["Cache-Control"] = "no-cache"
        if not_modified(asked.headers, cached.etag, cards.since):
            return Answer(b"", 304, headers=headers)
        return Answer(cached.body, content_type="application/json", headers=headers)

    def _current(self) -> Cards:
        flow = None if self._verifier is None else self._verifier.oauth_flow
        if flow != self._cards.flow:
            self._cards = Cards.of(self._facts, flow, self._cards, self._signer)
        return self._cards
