"""A per-user OAuth client that does what a real chat bridge does with an A2A agent's card
(slack-agents' "Per-user OAuth", as the design notes' clients/OBSERVED.md saw it run).

From the card it takes the first security scheme that is `oauth2` with an
`authorizationCode` flow: its authorization and token URLs, its scopes, and its
`oauth2MetadataUrl`, fetched as the authorization server's metadata; the scopes to ask
for are those the card's security requirements name for that scheme. It registers
itself dynamically (a public client), then signs a user in with the authorization code
flow, PKCE (S256), state and nonce, playing the user in a browser of its own through the
server's HTML forms (oidc-provider's development login, then consent).
"""

from __future__ import annotations

import base64
import hashlib
import secrets
from dataclasses import dataclass
from html.parser import HTMLParser
from typing import Any
from urllib.parse import parse_qs, urljoin, urlsplit

import httpx
import jwt

#: Where the authorization server sends the browser back. Nothing listens there: the
#: client reads the code from the Location of that last redirect.
REDIRECT_URI = "http://127.0.0.1:9/oauth/callback"
#: Redirects and form posts a sign-in may take at most (login, consent, and theirs).
MAX_STEPS = 12


@dataclass(frozen=True)
class OAuthScheme:
    """What the card says of its OAuth 2.0 authorization code flow."""

    name: str
    authorization_url: str
    token_url: str
    refresh_url: str
    metadata_url: str
    scopes: tuple[str, ...]
    required_scopes: tuple[str, ...]


@dataclass(frozen=True)
class Tokens:
    """A token response: access token, and the refresh and ID tokens if it had them."""

    access: str
    refresh: str | None
    id: str | None
    scope: str


def oauth_scheme(card: dict[str, Any]) -> OAuthScheme:
    """The first `oauth2` scheme of a v1.0 card with an `authorizationCode` flow."""
    for name, scheme in card.get("securitySchemes", {}).items():
        oauth2 = scheme.get("oauth2SecurityScheme")
        flow = (oauth2 or {}).get("flows", {}).get("authorizationCode")
        if oauth2 is None or flow is None:
            continue
        required = [
            scope
            for requirement in card.get("securityRequirements", [])
            for scope in requirement.get("schemes", {}).get(name, {}).get("list", [])
        ]
        return OAuthScheme(
            name=name,
            authorization_url=flow["authorizationUrl"],
            token_url=flow["tokenUrl"],
            refresh_url=flow.get("refreshUrl") or flow["tokenUrl"],
            metadata_url=oauth2["oauth2MetadataUrl"],
            scopes=tuple(flow.get("scopes", {})),
            required_scopes=tuple(dict.fromkeys(required)),
        )
    raise LookupError("the card has no oauth2 security scheme with an authorizationCode flow")


class _Form(HTMLParser):
    """The first POST form of a page: where it goes and the values of its inputs."""

    def __init__(self) -> None:
        super().__init__()
        self.action: str | None = None
        self.fields: dict[str, str] = {}
        self._inside = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        found = dict(attrs)
        if tag == "form" and self.action is None and (found.get("method") or "").lower() == "post":
            self.action, self._inside = found.get("action") or "", True
        elif tag == "input" and self._inside and found.get("name"):
            self.fields[found["name"] or ""] = found.get("value") or ""

    def handle_endtag(self, tag: str) -> None:
        if tag == "form":
            self._inside = False


def _code_challenge(verifier: str) -> str:
    digest = hashlib.sha256(verifier.encode()).digest()
    return base64.urlsafe_b64encode(digest).rstrip(b"=").decode()


def _tokens(reply: httpx.Response, previous: Tokens | None = None) -> Tokens:
    if reply.status_code != 200:
        raise RuntimeError(f"the token endpoint answered {reply.status_code}: {reply.text}")
    body = reply.json()
    assert body["token_type"].lower() == "bearer", body
    return Tokens(
        access=body["access_token"],
        # A refresh that rotates nothing keeps the refresh token it used.
        refresh=body.get("refresh_token") or (previous.refresh if previous else None),
        id=body.get("id_token"),
        scope=body.get("scope", ""),
    )


@dataclass(frozen=True)
class OAuthClient:
    """A client registered at the card's authorization server."""

    http: httpx.AsyncClient
    scheme: OAuthScheme
    metadata: dict[str, Any]
    client_id: str

    @classmethod
    async def from_card(cls, http: httpx.AsyncClient, card: dict[str, Any]) -> OAuthClient:
        """Read the card's scheme, fetch the server's metadata, register there."""
        scheme = oauth_scheme(card)
        metadata: dict[str, Any] = (await http.get(scheme.metadata_url)).raise_for_status().json()
        registration = {
            "client_name": "n8n-a2a sign-in test",
            "redirect_uris": [REDIRECT_URI],
            "token_endpoint_auth_method": "none",  # public: a PKCE client holds no secret
            "grant_types": ["authorization_code", "refresh_token"],
            "response_types": ["code"],
        }
        reply = await http.post(metadata["registration_endpoint"], json=registration)
        if reply.status_code != 201:
            raise RuntimeError(f"registration answered {reply.status_code}: {reply.text}")
        return cls(http, scheme, metadata, reply.json()["client_id"])

    @property
    def scope(self) -> str:
        # No offline_access: the server gives a refresh token for the grant alone.
        return " ".join(dict.fromkeys(["openid", *self.scheme.required_scopes]))

    async def sign_in(self, login: str) -> Tokens:
        """Sign `login` in, in a browser of its own (fresh cookies: no one else's session)."""
        state, nonce, verifier = (secrets.token_urlsafe(32) for _ in range(3))
        query = {
            "response_type": "code",
            "client_id": self.client_id,
            "redirect_uri": REDIRECT_URI,
            "scope": self.scope,
            "state": state,
            "nonce": nonce,
            "code_challenge": _code_challenge(verifier),
            "code_challenge_method": "S256",
        }
        async with httpx.AsyncClient(timeout=self.http.timeout) as browser:
            first = await browser.get(self.scheme.authorization_url, params=query)
            back = await self._play_user(browser, first, login)
        answer = {key: values[0] for key, values in parse_qs(urlsplit(back).query).items()}
        if answer.get("state") != state:
            raise RuntimeError(f"the state came back changed: {back}")
        if "error" in answer:
            raise RuntimeError(f"the authorization failed: {answer}")
        # RFC 9207: the server says who answered, so a mix-up shows.
        if "iss" in answer and answer["iss"] != self.metadata["issuer"]:
            raise RuntimeError(f"answered by {answer['iss']}, not {self.metadata['issuer']}")
        reply = await self.http.post(
            self.scheme.token_url,
            data={
                "grant_type": "authorization_code",
                "code": answer["code"],
                "redirect_uri": REDIRECT_URI,
                "client_id": self.client_id,
                "code_verifier": verifier,
            },
        )
        tokens = _tokens(reply)
        if tokens.id is not None:
            # Straight from the token endpoint, the ID token need not be verified again
            # (OIDC Core 3.1.3.7); its nonce still ties it to this sign-in.
            claims = jwt.decode(tokens.id, options={"verify_signature": False})
            if claims.get("nonce") != nonce:
                raise RuntimeError(f"the ID token's nonce is not ours: {claims}")
        return tokens

    async def refresh(self, tokens: Tokens) -> Tokens:
        """New tokens for the refresh token of `tokens`."""
        if tokens.refresh is None:
            raise ValueError("these tokens came without a refresh token")
        reply = await self.http.post(
            self.scheme.refresh_url,
            data={
                "grant_type": "refresh_token",
                "refresh_token": tokens.refresh,
                "client_id": self.client_id,
            },
        )
        return _tokens(reply, tokens)

    async def _play_user(
        self, browser: httpx.AsyncClient, reply: httpx.Response, login: str
    ) -> str:
        """Follow the server's pages as a user would, filling in `login` (any password) and
        consenting; the URL it finally sends the browser to, at REDIRECT_URI."""
        for _ in range(MAX_STEPS):
            here = str(reply.url)
            if reply.is_redirect:
                location = urljoin(here, reply.headers["location"])
                if location.startswith(REDIRECT_URI):
                    return location
                reply = await browser.get(location)
            elif reply.status_code == 200:
                form = _Form()
                form.feed(reply.text)
                if form.action is None:
                    raise RuntimeError(f"no form on {here}:\n{reply.text}")
                fields = form.fields
                if "login" in fields:
                    fields = {**fields, "login": login, "password": "any password"}
                reply = await browser.post(urljoin(here, form.action), data=fields)
            else:
                raise RuntimeError(f"{here} answered {reply.status_code}:\n{reply.text}")
        raise RuntimeError(f"no way back to {REDIRECT_URI} after {MAX_STEPS} steps")
