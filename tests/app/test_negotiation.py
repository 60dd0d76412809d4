from __future__ import annotations

from typing import cast

import pytest

from n8n_a2a.app.negotiation import Negotiation
from n8n_a2a.auth.caller import Caller
from n8n_a2a.auth.verifier import OidcVerifier
from n8n_a2a.core.errors import AuthFailure, AuthReason
from n8n_a2a.core.owners import Owner, token_owner
from n8n_a2a.protocol.errors import ErrorCode
from n8n_a2a.protocol.versions import V03, V1

TRACEPARENT = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"
TOKEN = {"Authorization": "Bearer tok.en"}
MALFORMED = {"Authorization": "Bearer not a token"}


def negotiation(
    headers: dict[str, str] | None = None, args: dict[str, str] | None = None
) -> Negotiation:
    return Negotiation.of(headers or {}, args or {})


def test_no_version_is_v03() -> None:
    asked = negotiation()
    assert (asked.codec, asked.unsupported, asked.plain_card) == (V03, None, False)


@pytest.mark.parametrize("version", ["1.0", "1", "1.0.0"])
def test_v1_is_asked_for_in_the_header(version: str) -> None:
    asked = negotiation({"A2A-Version": version})
    assert (asked.codec, asked.unsupported, asked.plain_card) == (V1, None, True)


def test_a_browser_asks_in_the_query_and_the_header_wins() -> None:
    assert negotiation(args={"A2A-Version": "1.0"}).codec is V1
    assert negotiation({"A2A-Version": "0.3"}, {"A2A-Version": "1.0"}).codec is V03


def test_a_version_not_served_is_answered_later_in_v1_shapes() -> None:
    asked = negotiation({"A2A-Version": "9.9"})
    assert asked.codec is V1 and not asked.plain_card
    assert asked.unsupported is not None
    assert asked.unsupported.code is ErrorCode.VERSION_NOT_SUPPORTED
    assert asked.refused_later is asked.unsupported


def test_the_token_and_the_trace_context_make_the_caller() -> None:
    asked = negotiation(
        {"Authorization": "Bearer tok.en", "traceparent": TRACEPARENT, "tracestate": "a=1"}
    )
    assert asked.token == "tok.en" and asked.refused_later is None
    caller = asked.caller("token:x")
    assert caller == Caller(
        "tok.en", (("traceparent", TRACEPARENT), ("tracestate", "a=1")), "token:x"
    )
    assert caller.owner == "token:x"


def test_a_malformed_token_is_kept_for_later_and_passes_on_nothing() -> None:
    asked = negotiation(MALFORMED)
    assert asked.token is None
    assert asked.malformed_token is not None
    assert asked.refused_later is asked.malformed_token


async def test_without_a_verifier_the_owner_is_the_tokens_digest() -> None:
    assert await negotiation().owner(None, require_token=False) is None
    owned = negotiation(TOKEN)
    assert await owned.owner(None, require_token=False) == token_owner("tok.en")


async def test_a_required_token_refuses_its_absence_and_a_malformed_one() -> None:
    with pytest.raises(AuthFailure) as missing:
        await negotiation().owner(None, require_token=True)
    assert missing.value.reason is AuthReason.NO_TOKEN
    with pytest.raises(AuthFailure) as malformed:
        await negotiation(MALFORMED).owner(None, require_token=True)
    assert malformed.value.reason is AuthReason.MALFORMED
    assert malformed.value.message == "The Authorization header's Bearer token is malformed"


async def test_unrequired_a_malformed_token_is_anonymous_until_the_envelope_is_read() -> None:
    assert await negotiation(MALFORMED).owner(None, False) is None


class Verifier:
    def __init__(self) -> None:
        self.verified: list[str | None] = []

    async def verify(self, token: str | None) -> Owner:
        self.verified.append(token)
        return "oidc:subject"


async def test_a_verifier_says_who_owns_and_refuses_malformed_tokens_itself() -> None:
    verifier = Verifier()
    as_verifier = cast(OidcVerifier, verifier)
    assert await negotiation(TOKEN).owner(as_verifier, False) == "oidc:subject"
    with pytest.raises(AuthFailure) as malformed:
        await negotiation(MALFORMED).owner(as_verifier, False)
    assert malformed.value.reason is AuthReason.MALFORMED
    assert verifier.verified == ["tok.en"]
