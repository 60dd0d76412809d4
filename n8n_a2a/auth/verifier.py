"""Verified tokens (ADAPTER_OIDC_ISSUER): the issuer's public keys, and the check of a token.

The adapter still holds no credential: verifying a signature needs only the keys the
issuer publishes. They are fetched at start (OpenID Connect Discovery, then the JWKS),
kept, refetched every hour so that a key the issuer drops stops working, and refetched
when a token names a key not among them (a rotation), at most once a minute: a flood of
made-up key ids costs one fetch a minute, never one per request; only over https, unless
ADAPTER_OIDC_ALLOW_HTTP says a local test may. The discovery document also gives the
card the issuer's code flow. A token is an access token (no ID token) with the scopes
ADAPTER_OIDC_SCOPES asks for. PyJWT does the JOSE. This module needs the oidc extra
(PyJWT with cryptography); nothing imports it without an issuer set.
"""

from __future__ import annotations

import json
import logging
import ssl
from collections.abc import AsyncIterator, Callable, Mapping
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any

import httpx
import jwt
import trio
from cryptography.hazmat.primitives.asymmetric.rsa import RSAPublicKey

from ..config import Settings
from ..core.errors import AuthFailure, AuthReason, KeysUnavailable
from ..core.owners import subject_owner
from ..protocol.card import OAuthFlow
from ..protocol.urls import resource_spellings
from .caller import granted_scopes, is_access_token
from .signin import authorization_code_flow

# The package's name, which its log lines have always carried (operators filter on it).
logger = logging.getLogger(__package__)

#: Asymmetric signatures only: never `none`, never an HMAC (whose "secret" would be the
#: issuer's public key, for anyone to sign with).
ALGORITHMS = frozenset(
    {"RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "ES256", "ES384", "ES512", "EdDSA"}
)
_KEY_TYPES = frozenset({"RSA", "EC", "OKP"})
_MIN_RSA_BITS = 2048
#: Clock skew allowed on exp, nbf and iat.
LEEWAY_SECONDS = 30
_FETCH_SECONDS = 10.0
_MAX_DOCUMENT_BYTES = 512 * 1024


@dataclass(frozen=True, slots=True)
class KeySet:
    """The issuer's signing keys (JWKs) by key id."""

    keys: Mapping[str | None, Mapping[str, Any]]

    def find(self, kid: str | None) -> Mapping[str, Any] | None:
        """The key a token names; a token that names none may use the only key there is."""
        if kid is None and len(self.keys) == 1:
            return next(iter(self.keys.values()))
        return self.keys.get(kid)


def signing_keys(document: object, source: str) -> KeySet:
    """The usable signing keys of a JWKS document: asymmetric, for signatures, of a
    kind and an algorithm on the allow-list, RSA of at least 2048 bits."""
    if not isinstance(document, dict) or not isinstance(document.get("keys"), list):
        raise KeysUnavailable(f"{source} is not a JWK set (no keys list)")
    keys: dict[str | None, Mapping[str, Any]] = {}
    for jwk in document["keys"]:
        if not isinstance(jwk, dict) or jwk.get("kty") not in _KEY_TYPES:
            continue
        if jwk.get("use", "sig") != "sig" or jwk.get("alg", "RS256") not in ALGORITHMS:
            continue
        kid = jwk.get("kid")
        if not (kid is None or isinstance(kid, str)) or kid in keys:
            continue  # a kid twice is ambiguous: the first one stands
        try:
            parsed = jwt.PyJWK(jwk).key
        except Exception:  # whatever a malformed key makes PyJWT raise: skip that key
            continue
        if isinstance(parsed, RSAPublicKey) and parsed.key_size < _MIN_RSA_BITS:
            continue
        keys[kid] = jwk
    if not keys:
        raise KeysUnavailable(f"{source} has no signing key this agent accepts")
    return KeySet(keys)


class OidcVerifier:
    """Checks bearer tokens against one issuer's keys and audience; owns the key cache.

    `refetch_seconds` is the least time between two fetches that unknown key ids ask
    for; `refresh_seconds` how often the keys are fetched anyway; `retry_seconds` how
    soon after a failed fetch the next one is tried.
    """

    def __init__(
        self,
        settings: Settings,
        http: httpx.AsyncClient,
        *,
        clock: Callable[[], float] = trio.current_time,
        refetch_seconds: float = 60.0,
        refresh_seconds: float = 3600.0,
        retry_seconds: float = 5.0,
    ) -> None:
        issuer, audience = settings.oidc_issuer, settings.oidc_audience
        discovery_url = settings.oidc_discovery_url
        if issuer is None or audience is None or discovery_url is None:
            raise ValueError("a verifier needs ADAPTER_OIDC_ISSUER and ADAPTER_OIDC_AUDIENCE")
        self.issuer = issuer
        # A token for `http://host:8080` is one for `http://host:8080/`: the same resource.
        self._audiences = list(resource_spellings(audience))
        self.discovery_url = discovery_url
        self.scopes = settings.oidc_scopes
        self._allow_http = settings.oidc_allow_http
        #: The issuer's authorization code flow, from its last discovery document (None
        #: before one is loaded, or for an issuer without one).
        self.oauth_flow: OAuthFlow | None = None
        self._http = http
        self._clock = clock
        self._refetch_seconds = refetch_seconds
        self._refresh_seconds = refresh_seconds
        self._retry_seconds = retry_seconds
        self._keys: KeySet | None = None
        # PyJWK objects by (kid, algorithm), made on first use: parsing a key costs more
        # than checking a signature with it.
        self._prepared: dict[tuple[str | None, str], jwt.PyJWK] = {}
        self._fetching = trio.Lock()
        self._last_refetch = float("-inf")
        self._failing = False

    @property
    def ready(self) -> bool:
        """The keys are loaded: tokens can be verified."""
        return self._keys is not None

    async def verify(self, token: str | None) -> str:
        """The owner the token proves (its issuer and subject); AuthFailure otherwise."""
        if token is None:
            raise AuthFailure(AuthReason.NO_TOKEN)
        try:
            # One unverified read for the header and the issuer (PyJWT's base64 check is
            # most of a verification's cost: a token is read twice, not three times).
            unverified = jwt.decode_complete(token, options={"verify_signature": False})
        except jwt.PyJWTError:
            raise AuthFailure(AuthReason.MALFORMED) from None
        header, claimed = unverified["header"], unverified["payload"]
        algorithm = header.get("alg")
        if not isinstance(algorithm, str):
            raise AuthFailure(AuthReason.MALFORMED)
        if algorithm not in ALGORITHMS:
            raise AuthFailure(AuthReason.BAD_SIGNATURE)
        if claimed.get("iss") != self.issuer:
            # Before any key look-up: another issuer's token costs no fetch.
            raise AuthFailure(AuthReason.WRONG_ISSUER)
        if not is_access_token(header, claimed):
            # Before the audience too, which an ID token may happen to fit: that it is one
            # is what the metric should say.
            raise AuthFailure(AuthReason.NOT_ACCESS_TOKEN)
        key = await self._key(header.get("kid"), algorithm)
        try:
            claims = jwt.decode(
                token,
                key,
                algorithms=[algorithm],
                audience=self._audiences,
                issuer=self.issuer,
                leeway=LEEWAY_SECONDS,
                options={"require": ["exp", "iss", "aud", "sub"]},
            )
        except jwt.PyJWTError as error:
            raise AuthFailure(_reason(error)) from None
        subject = claims["sub"]
        if not isinstance(subject, str) or not subject:
            raise AuthFailure(AuthReason.MALFORMED)
        granted = granted_scopes(claims)
        missing = [scope for scope in self.scopes if scope not in granted]
        if missing:
            raise AuthFailure(
                AuthReason.INSUFFICIENT_SCOPE,
                f"The bearer token lacks the scope this agent requires: {' '.join(missing)}",
            )
        return subject_owner(self.issuer, subject)

    async def keep_fresh(self) -> None:
        """Load the keys, then refresh them every `refresh_seconds` (every `retry_seconds`
        while a fetch fails), until cancelled."""
        while True:
            async with self._fetching:
                loaded = await self._load()
            await trio.sleep(self._refresh_seconds if loaded else self._retry_seconds)

    async def _key(self, kid: str | None, algorithm: str) -> jwt.PyJWK:
        """The published key the token names, bound to the token's algorithm."""
        if self._keys is None:
            raise AuthFailure(AuthReason.ISSUER_UNREACHABLE)
        jwk = self._keys.find(kid)
        if jwk is None:
            await self._refetch()
            jwk = self._keys.find(kid)
        if jwk is None:
            raise AuthFailure(AuthReason.UNKNOWN_KEY)
        if jwk.get("alg", algorithm) != algorithm:
            raise AuthFailure(AuthReason.BAD_SIGNATURE)  # the key is for another algorithm
        prepared = self._prepared.get((kid, algorithm))
        if prepared is None:
            try:
                # Bound to the token's algorithm: PyJWT then refuses a key of another kind.
                prepared = jwt.PyJWK(dict(jwk), algorithm)
            except jwt.PyJWTError:
                raise AuthFailure(AuthReason.BAD_SIGNATURE) from None
            self._prepared[(kid, algorithm)] = prepared
        return prepared

    async def _refetch(self) -> None:
        """Fetch the keys again for a key id not among them, unless that was done less
        than `refetch_seconds` ago. Callers that arrive during a fetch wait for it."""
        async with self._fetching:
            if self._clock() - self._last_refetch >= self._refetch_seconds:
                self._last_refetch = self._clock()
                await self._load()

    async def _load(self) -> bool:
        """Fetch the discovery document and the keys; on failure keep the keys there are."""
        try:
            keys, flow = await self._fetch_keys()
        except KeysUnavailable as error:
            if not self._failing:
                # One line per run of failures, not one per retry.
                state = "keeps the keys it has" if self.ready else "is not ready until then"
                logger.warning(
                    "cannot load the OIDC issuer's keys: %s; the adapter %s, retrying every %g s",
                    error,
                    state,
                    self._retry_seconds,
                    extra={"fields": {"event": "oidc_keys", "loaded": False}},
                )
            self._failing = True
            return False
        if self._failing or self._keys is None:
            logger.info(
                "loaded %d OIDC signing key(s)",
                len(keys.keys),
                extra={"fields": {"event": "oidc_keys", "loaded": True}},
            )
        self._failing = False
        self._keys = keys
        self._prepared = {}
        self.oauth_flow = flow
        return True

    async def _fetch_keys(self) -> tuple[KeySet, OAuthFlow | None]:
        """The keys, and the code flow the card shows, from the discovery document."""
        discovery = await self._get_json(self.discovery_url)
        if not isinstance(discovery, dict) or discovery.get("issuer") != self.issuer:
            raise KeysUnavailable(
                f"{self.discovery_url} does not name ADAPTER_OIDC_ISSUER as its issuer"
            )
        jwks_uri = discovery.get("jwks_uri")
        if not isinstance(jwks_uri, str):
            raise KeysUnavailable(f"{self.discovery_url} has no jwks_uri")
        keys = signing_keys(await self._get_json(jwks_uri), jwks_uri)
        flow = authorization_code_flow(discovery, self.discovery_url, allow_http=self._allow_http)
        return keys, flow

    async def _get_json(self, url: str) -> object:
        scheme = url.partition(":")[0].lower()
        if scheme == "http" and not self._allow_http:
            # Whoever can change the keys on the way could sign in as anyone.
            raise KeysUnavailable(f"{url} is not https (ADAPTER_OIDC_ALLOW_HTTP=true allows it)")
        if scheme not in ("http", "https"):
            raise KeysUnavailable(f"{url} is not an https URL")
        with trio.move_on_after(_FETCH_SECONDS):
            try:
                async with self._http.stream(
                    "GET", url, headers={"Accept": "application/json"}
                ) as reply:
                    if reply.status_code != 200:
                        raise KeysUnavailable(f"{url} answered HTTP {reply.status_code}")
                    body = bytearray()
                    async for chunk in reply.aiter_bytes():
                        body += chunk
                        if len(body) > _MAX_DOCUMENT_BYTES:
                            raise KeysUnavailable(f"{url} sent more than {_MAX_DOCUMENT_BYTES} B")
            except (httpx.HTTPError, httpx.InvalidURL) as error:
                raise KeysUnavailable(f"{url}: {error or type(error).__name__}") from None
            try:
                return json.loads(body)
            except ValueError:
                raise KeysUnavailable(f"{url} did not send JSON") from None
        raise KeysUnavailable(f"{url} did not answer within {_FETCH_SECONDS:g} s")


def _reason(error: jwt.PyJWTError) -> AuthReason:
    """Why PyJWT refused a token whose issuer and key were known."""
    match error:
        case jwt.ExpiredSignatureError():
            return AuthReason.EXPIRED
        case jwt.ImmatureSignatureError():
            return AuthReason.NOT_YET_VALID
        case jwt.InvalidAudienceError():
            return AuthReason.WRONG_AUDIENCE
        case jwt.InvalidIssuerError():
            return AuthReason.WRONG_ISSUER
        case jwt.InvalidSignatureError() | jwt.InvalidAlgorithmError() | jwt.InvalidKeyError():
            return AuthReason.BAD_SIGNATURE
        case _:
            return AuthReason.MALFORMED


@asynccontextmanager
async def open_verifier(settings: Settings) -> AsyncIterator[OidcVerifier]:
    """A verifier for ADAPTER_OIDC_ISSUER whose keys load and stay fresh in the background;
    /readyz says not ready until they are loaded. The keys come over the same verified TLS
    as the webhook's (ADAPTER_CA_BUNDLE)."""
    http = httpx.AsyncClient(
        verify=ssl.create_default_context(cafile=settings.ca_bundle),
        follow_redirects=False,
        timeout=_FETCH_SECONDS,
        trust_env=False,
    )
    async with http, trio.open_nursery() as nursery:
        verifier = OidcVerifier(settings, http)
        nursery.start_soon(verifier.keep_fresh, name="OIDC key refresh")
        yield verifier
        nursery.cancel_scope.cancel()
