"""Verified tokens against a local issuer: every way a token fails, ID tokens, scopes,
rotation, a flood of made-up key ids, an issuer that is down, keys over plain http."""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import logging
import time
import uuid
from collections.abc import AsyncIterator, Callable
from typing import Any

import httpx
import pytest
import trio
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa
from jwt.algorithms import RSAAlgorithm

from n8n_a2a.auth.signin import bearer_challenge
from n8n_a2a.auth.verifier import OidcVerifier, signing_keys
from n8n_a2a.core.errors import AuthFailure, AuthReason, KeysUnavailable
from n8n_a2a.core.owners import subject_owner
from n8n_a2a.protocol.card import OAuthFlow
from tests.support.adapter import make_settings
from tests.support.oidc_issuer import AUDIENCE, LocalIssuer, SigningKey, start_issuer


class Clock:
    """The verifier's clock for its once-a-minute refetch limit, moved by the test."""

    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


VerifierFactory = Callable[..., Any]


@pytest.fixture
async def issuer(nursery: trio.Nursery) -> LocalIssuer:
    return await start_issuer(nursery)


@pytest.fixture
async def start_verifier() -> AsyncIterator[VerifierFactory]:
    """A verifier of the issuer whose keys are kept fresh in the background, as in serve;
    the background stops before its client closes, as open_verifier does it."""
    async with httpx.AsyncClient() as client, trio.open_nursery() as background:

        async def start(issuer: str, *, wait: bool = True, **options: Any) -> OidcVerifier:
            # The local issuer is plain http on loopback: the setting for local tests.
            given: dict[str, Any] = {"oidc_allow_http": True, "oidc_audience": AUDIENCE} | {
                name: options.pop(name)
                for name in ("oidc_scopes", "oidc_allow_http", "oidc_audience")
                if name in options
            }
            settings = make_settings(oidc_issuer=issuer, **given)
            options = {"clock": Clock(), "retry_seconds": 0.02, **options}
            verifier = OidcVerifier(settings, client, **options)
            background.start_soon(verifier.keep_fresh)
            if wait:
                await until(lambda: verifier.ready)
            return verifier

        yield start
        background.cancel_scope.cancel()


async def until(condition: Callable[[], bool]) -> None:
    with trio.fail_after(5):
        while not condition():  # noqa: ASYNC110 - the condition is not an event
            await trio.sleep(0.01)


async def refusal(verifier: OidcVerifier, token: str | None) -> AuthReason:
    with pytest.raises(AuthFailure) as raised:
        await verifier.verify(token)
    if token is not None:
        for part in token.split("."):
            assert not part or part not in raised.value.message
            assert not part or part not in bearer_challenge(raised.value, None)
    return raised.value.reason


def b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def unsigned(header: dict[str, Any], payload: dict[str, Any]) -> str:
    return f"{b64(json.dumps(header).encode())}.{b64(json.dumps(payload).encode())}"


def claims(issuer: LocalIssuer, **changes: Any) -> dict[str, Any]:
    now = int(time.time())
    found = {"iss": issuer.issuer, "sub": "mallory", "aud": AUDIENCE, "iat": now, "exp": now + 60}
    return {**found, **changes}


async def test_a_good_token_proves_its_issuer_and_subject(
    issuer: LocalIssuer, start_verifier: VerifierFactory
) -> None:
    verifier = await start_verifier(issuer.issuer)
    owner = await verifier.verify(issuer.mint("alice"))
    assert owner == subject_owner(issuer.issuer, "alice")
    assert "alice" not in owner
    assert await verifier.verify(issuer.mint("bob")) != owner


async def test_a_refreshed_token_keeps_its_owner(
    issuer: LocalIssuer, start_verifier: VerifierFactory
) -> None:
    verifier = await start_verifier(issuer.issuer)
    first = issuer.mint("poller", lifetime=60, jti="one")
    refreshed = issuer.mint("poller", lifetime=600, jti="two", scope="tasks")
    assert first != refreshed
    assert await verifier.verify(first) == await verifier.verify(refreshed)


@pytest.mark.parametrize("audience", ["http://agent.example:8080", "http://agent.example:8080/"])
async def test_an_audience_at_a_hosts_root_takes_tokens_for_either_spelling(
    issuer: LocalIssuer, start_verifier: VerifierFactory, audience: str
) -> None:
    # A client built on the MCP auth library asks its token for `…:8080/`, whatever the
    # card says: one resource, however it is written, on either side.
    verifier = await start_verifier(issuer.issuer, oidc_audience=audience)
    alice = subject_owner(issuer.issuer, "alice")
    for aud in (
        "http://agent.example:8080",
        "http://agent.example:8080/",
        ["x", "http://agent.example:8080/"],
    ):
        assert await verifier.verify(issuer.mint("alice", aud=aud)) == alice, aud
    for aud in (
        "http://agent.example:8080/supply",
        "http://agent.example:8081/",
        "http://agent.example",
    ):
        assert await refusal(verifier, issuer.mint(aud=aud)) is AuthReason.WRONG_AUDIENCE, aud


def hmac_with_the_public_key(issuer: LocalIssuer) -> str:
    """The old alg-confusion attack: HS256 with the issuer's public key as the secret."""
    public = issuer.current.private.public_key().public_bytes(
        serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
    )
    signing_input = unsigned({"alg": "HS256", "kid": issuer.current.kid}, claims(issuer))
    signature = hmac.new(public, signing_input.encode(), hashlib.sha256).digest()
    return f"{signing_input}.{b64(signature)}"


def nested_claims(issuer: LocalIssuer, depth: int) -> str:
    """Claims with one value nested `depth` arrays deep, under a signature that is none."""
    payload = json.dumps(claims(issuer)).encode()[:-1] + b', "n": ' + b"[" * depth + b"]" * depth
    header = json.dumps({"alg": "RS256", "kid": issuer.current.kid}).encode()
    return f"{b64(header)}.{b64(payload + b'}')}.{b64(b'signature')}"


def tampered(issuer: LocalIssuer) -> str:
    header, _, signature = issuer.mint("alice").split(".")
    payload = b64(json.dumps(claims(issuer, sub="admin")).encode())
    return f"{header}.{payload}.{signature}"


def signed_by_a_stranger(issuer: LocalIssuer) -> str:
    """Signed with a key the issuer never published, under the kid of one it did."""
    stranger = SigningKey(issuer.current.kid, "RS256", SigningKey.new().private)
    return issuer.mint("alice", key=stranger)


def rsa_key_named_as_ec(issuer: LocalIssuer) -> str:
    """An ES256 signature claimed for the issuer's RSA key."""
    ec_key = SigningKey.new("ES256")
    return issuer.mint("alice", key=SigningKey(issuer.current.kid, "ES256", ec_key.private))


BAD_TOKENS: list[tuple[str, Callable[[LocalIssuer], str | None], AuthReason]] = [
    ("none", lambda issuer: None, AuthReason.NO_TOKEN),
    ("not a JWT", lambda issuer: "not-a-jwt", AuthReason.MALFORMED),
    ("no alg", lambda issuer: "e30.e30.e30x", AuthReason.MALFORMED),
    ("bad base64", lambda issuer: "e30.e30.!!!", AuthReason.MALFORMED),
    ("expired", lambda issuer: issuer.mint(lifetime=-120), AuthReason.EXPIRED),
    (
        "not yet valid",
        lambda issuer: issuer.mint(nbf=int(time.time()) + 600),
        AuthReason.NOT_YET_VALID,
    ),
    ("wrong audience", lambda issuer: issuer.mint(aud="another-agent"), AuthReason.WRONG_AUDIENCE),
    (
        "wrong issuer",
        lambda issuer: issuer.mint(iss="https://evil.example"),
        AuthReason.WRONG_ISSUER,
    ),
    ("no issuer", lambda issuer: issuer.mint(iss=None), AuthReason.WRONG_ISSUER),
    ("no subject", lambda issuer: issuer.mint(sub=None), AuthReason.MALFORMED),
    ("empty subject", lambda issuer: issuer.mint(""), AuthReason.MALFORMED),
    ("no expiry", lambda issuer: issuer.mint(exp=None), AuthReason.MALFORMED),
    ("no audience", lambda issuer: issuer.mint(aud=None), AuthReason.MALFORMED),
    ("tampered claims", tampered, AuthReason.BAD_SIGNATURE),
    ("signed by a stranger", signed_by_a_stranger, AuthReason.BAD_SIGNATURE),
    (
        "alg none",
        lambda issuer: unsigned({"alg": "none", "kid": issuer.current.kid}, claims(issuer)) + ".",
        AuthReason.BAD_SIGNATURE,
    ),
    ("HMAC with the public key", hmac_with_the_public_key, AuthReason.BAD_SIGNATURE),
    ("an RSA key named for ES256", rsa_key_named_as_ec, AuthReason.BAD_SIGNATURE),
    (
        "unknown kid",
        lambda issuer: issuer.mint(headers={"kid": "made-up"}),
        AuthReason.UNKNOWN_KEY,
    ),
    ("typ JOSE", lambda issuer: issuer.mint(headers={"typ": "JOSE"}), AuthReason.NOT_ACCESS_TOKEN),
    ("typ a number", lambda issuer: issuer.mint(headers={"typ": 7}), AuthReason.NOT_ACCESS_TOKEN),
    (
        "typ a list",
        lambda issuer: issuer.mint(headers={"typ": ["JWT"]}),
        AuthReason.NOT_ACCESS_TOKEN,
    ),
    (
        "typ with a parameter",
        lambda issuer: issuer.mint(headers={"typ": "at+jwt;x=1"}),
        AuthReason.NOT_ACCESS_TOKEN,
    ),
    (
        "alg not a string",
        lambda issuer: unsigned({"alg": ["RS256"]}, claims(issuer)) + ".c2ln",
        AuthReason.MALFORMED,
    ),
    (
        "claims nested 100,000 deep",
        lambda issuer: nested_claims(issuer, 100_000),
        AuthReason.MALFORMED,
    ),
    (
        "claims not an object",
        lambda issuer: ".".join((b64(b'{"alg": "RS256"}'), b64(b"[1]"), "c2ln")),
        AuthReason.MALFORMED,
    ),
    (
        "a signed claim of 1 MB past its audience",
        lambda issuer: issuer.mint(aud="other", blob="x" * 2**20),
        AuthReason.WRONG_AUDIENCE,
    ),
]


@pytest.mark.parametrize(
    ("build", "reason"), [(b, r) for _, b, r in BAD_TOKENS], ids=[n for n, _, _ in BAD_TOKENS]
)
async def test_every_bad_token_is_refused_for_its_reason_without_quoting_it(
    issuer: LocalIssuer,
    start_verifier: VerifierFactory,
    build: Callable[[LocalIssuer], str | None],
    reason: AuthReason,
) -> None:
    verifier = await start_verifier(issuer.issuer)
    assert await refusal(verifier, build(issuer)) is reason


async def test_clock_skew_within_the_leeway_is_forgiven(
    issuer: LocalIssuer, start_verifier: VerifierFactory
) -> None:
    verifier = await start_verifier(issuer.issuer)
    just_expired = issuer.mint("alice", lifetime=-10)
    almost_valid = issuer.mint("alice", nbf=int(time.time()) + 10)
    assert await verifier.verify(just_expired) == await verifier.verify(almost_valid)


async def test_an_ec_key_verifies_its_es256_tokens(
    issuer: LocalIssuer, start_verifier: VerifierFactory
) -> None:
    ec_key = issuer.rotate(algorithm="ES256")
    verifier = await start_verifier(issuer.issuer)
    assert await verifier.verify(issuer.mint("alice", key=ec_key)) == subject_owner(
        issuer.issuer, "alice"
    )


async def test_a_rotated_key_is_fetched_once_and_a_dropped_one_stops_working(
    issuer: LocalIssuer, start_verifier: VerifierFactory
) -> None:
    clock = Clock()
    verifier = await start_verifier(issuer.issuer, clock=clock)
    old_token = issuer.mint("alice")
    owner = await verifier.verify(old_token)
    fetches = issuer.key_fetches
    issuer.rotate(keep_old=False)
    assert await verifier.verify(issuer.mint("alice")) == owner
    assert issuer.key_fetches == fetches + 1
    # The keys fetched no longer hold the old one: a token it signed is refused, and
    # asking again within the minute fetches nothing.
    assert await refusal(verifier, old_token) is AuthReason.UNKNOWN_KEY
    assert issuer.key_fetches == fetches + 1
    clock.now += 61
    assert await refusal(verifier, old_token) is AuthReason.UNKNOWN_KEY
    assert issuer.key_fetches == fetches + 2


async def test_a_flood_of_made_up_key_ids_costs_one_fetch_a_minute(
    issuer: LocalIssuer, start_verifier: VerifierFactory
) -> None:
    clock = Clock()
    verifier = await start_verifier(issuer.issuer, clock=clock)
    fetches = issuer.key_fetches
    reasons: list[AuthReason] = []

    async def made_up() -> None:
        reasons.append(await refusal(verifier, issuer.mint(headers={"kid": uuid.uuid4().hex})))

    async with trio.open_nursery() as flood:
        for _ in range(200):
            flood.start_soon(made_up)
    assert reasons == [AuthReason.UNKNOWN_KEY] * 200
    assert issuer.key_fetches == fetches + 1
    for _ in range(100):
        await made_up()
    assert issuer.key_fetches == fetches + 1
    clock.now += 60
    await made_up()
    assert issuer.key_fetches == fetches + 2
    assert await verifier.verify(issuer.mint("alice"))  # the real keys still work


async def test_an_issuer_down_at_start_means_not_ready_and_one_log_line(
    issuer: LocalIssuer, start_verifier: VerifierFactory, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="n8n_a2a.auth")
    issuer.down = True
    verifier = await start_verifier(issuer.issuer, wait=False)
    await until(lambda: bool(caplog.records))
    await trio.sleep(0.2)  # several retries
    assert not verifier.ready
    assert await refusal(verifier, issuer.mint("alice")) is AuthReason.ISSUER_UNREACHABLE
    [line] = caplog.records
    assert line.levelno == logging.WARNING
    assert "openid-configuration answered HTTP 503" in line.getMessage()
    assert "not ready" in line.getMessage()
    issuer.down = False
    await until(lambda: verifier.ready)
    assert [r.getMessage() for r in caplog.records][1:] == ["loaded 1 OIDC signing key(s)"]
    assert await verifier.verify(issuer.mint("alice"))


async def test_an_issuer_down_later_leaves_the_keys_there_are(
    issuer: LocalIssuer, start_verifier: VerifierFactory
) -> None:
    verifier = await start_verifier(issuer.issuer, refresh_seconds=0.02)
    issuer.down = True
    fetches = issuer.key_fetches
    await trio.sleep(0.2)  # refreshes fail meanwhile
    assert verifier.ready
    assert await verifier.verify(issuer.mint("alice"))
    assert issuer.key_fetches == fetches  # the discovery document failed first


async def test_a_discovery_document_of_another_issuer_is_not_trusted(
    issuer: LocalIssuer, start_verifier: VerifierFactory, caplog: pytest.LogCaptureFixture
) -> None:
    real = issuer.issuer
    issuer.issuer = "https://impostor.example"  # what its discovery document now says
    verifier = await start_verifier(real, wait=False)
    await until(lambda: bool(caplog.records))
    assert not verifier.ready
    assert "does not name ADAPTER_OIDC_ISSUER" in caplog.records[0].getMessage()


@pytest.mark.parametrize(
    ("jwks_uri", "said"),
    [
        ("ftp://keys.example/jwks", "is not an https URL"),
        (None, "has no jwks_uri"),
        ("http://[::1/jwks", "jwks"),
        ("http://127.0.0.1:9/jwks", "127.0.0.1:9/jwks"),
    ],
)
async def test_keys_that_cannot_be_had_leave_the_verifier_not_ready_and_alive(
    issuer: LocalIssuer,
    start_verifier: VerifierFactory,
    caplog: pytest.LogCaptureFixture,
    jwks_uri: str | None,
    said: str,
) -> None:
    issuer.jwks_uri = jwks_uri
    if jwks_uri is None:
        issuer.extra_discovery = {"jwks_uri": None}
    verifier = await start_verifier(issuer.issuer, wait=False)
    await until(lambda: bool(caplog.records))
    assert said in caplog.records[0].getMessage()
    await trio.sleep(0.1)  # retries, each failing the same way, none taking the verifier down
    assert not verifier.ready
    issuer.jwks_uri, issuer.extra_discovery = None, {}
    await until(lambda: verifier.ready)


async def test_keys_over_plain_http_need_the_setting_for_local_tests(
    issuer: LocalIssuer, start_verifier: VerifierFactory, caplog: pytest.LogCaptureFixture
) -> None:
    verifier = await start_verifier(issuer.issuer, wait=False, oidc_allow_http=False)
    await until(lambda: bool(caplog.records))
    message = caplog.records[0].getMessage()
    assert "openid-configuration is not https (ADAPTER_OIDC_ALLOW_HTTP=true allows it)" in message
    assert not verifier.ready and issuer.key_fetches == 0


async def test_an_id_token_is_no_access_token_whatever_else_it_gets_right(
    issuer: LocalIssuer, start_verifier: VerifierFactory
) -> None:
    verifier = await start_verifier(issuer.issuer)
    id_tokens = [
        issuer.mint("alice", nonce="n-0S6_WzA2Mj"),
        issuer.mint("alice", at_hash="77QmUPtjPfzWtF2AnpK9RQ"),
        issuer.mint("alice", headers={"typ": "id_token+jwt"}),
        issuer.mint("alice", aud="a-client-id", nonce="n"),  # its audience is its client
    ]
    for token in id_tokens:
        assert await refusal(verifier, token) is AuthReason.NOT_ACCESS_TOKEN
    # The one refusal says nothing of which mark gave it away.
    failure = AuthFailure(AuthReason.NOT_ACCESS_TOKEN)
    assert "nonce" not in failure.message and "ID" not in failure.message
    access_token = issuer.mint("alice", headers={"typ": "at+jwt"}, client_id="bridge")
    assert await verifier.verify(access_token) == subject_owner(issuer.issuer, "alice")


async def test_a_token_without_a_scope_asked_for_is_refused_with_403(
    issuer: LocalIssuer, start_verifier: VerifierFactory
) -> None:
    verifier = await start_verifier(issuer.issuer, oidc_scopes=("a2a.call", "a2a.read"))
    for granted in [None, "a2a.call", "openid a2a.read", ["a2a.call"]]:
        with pytest.raises(AuthFailure) as raised:
            await verifier.verify(issuer.mint("alice", scope=granted))
        assert raised.value.reason is AuthReason.INSUFFICIENT_SCOPE
    assert raised.value.message.endswith("requires: a2a.read")  # the ones missing
    enoughs: list[dict[str, Any]] = [
        {"scope": "openid a2a.read a2a.call"},
        {"scp": ["a2a.read", "a2a.call"]},
    ]
    for enough in enoughs:
        assert await verifier.verify(issuer.mint("alice", **enough))


async def test_the_issuers_code_flow_is_read_with_its_keys(
    issuer: LocalIssuer, start_verifier: VerifierFactory
) -> None:
    verifier = await start_verifier(issuer.issuer)
    metadata = issuer.issuer + "/.well-known/openid-configuration"
    token = issuer.issuer + "/token"
    assert verifier.oauth_flow == OAuthFlow(metadata, issuer.issuer + "/auth", token, token, True)


def rsa_jwk(bits: int = 2048, **fields: Any) -> dict[str, Any]:
    public = rsa.generate_private_key(public_exponent=65537, key_size=bits).public_key()
    document: dict[str, Any] = RSAAlgorithm.to_jwk(public, as_dict=True)
    return {**document, **fields}


def test_only_asymmetric_signing_keys_on_the_allow_list_are_kept() -> None:
    good = rsa_jwk(kid="good", use="sig", alg="RS256")
    found = signing_keys(
        {
            "keys": [
                {"kty": "oct", "kid": "secret", "k": b64(b"shared secret")},
                rsa_jwk(kid="for-encryption", use="enc"),
                rsa_jwk(kid="hmac-alg", alg="HS256"),
                rsa_jwk(1024, kid="too-short"),
                {"kty": "RSA", "kid": "broken", "n": "!!", "e": "AQAB"},
                "not a key",
                good,
                rsa_jwk(kid="good"),  # the same kid twice: the first one stands
            ]
        },
        "test",
    )
    assert dict(found.keys) == {"good": good}
    assert found.find("good") == good
    assert found.find(None) == good  # the only key serves a token that names none
    assert found.find("other") is None


@pytest.mark.parametrize(
    "document",
    [{}, {"keys": "x"}, [], {"keys": []}, {"keys": [{"kty": "oct", "k": "c2VjcmV0"}]}],
)
def test_a_key_set_without_a_usable_key_is_unavailable(document: Any) -> None:
    with pytest.raises(KeysUnavailable):
        signing_keys(document, "https://issuer/jwks")
