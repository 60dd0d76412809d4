"""What the adapter is configured with. Its field defaults are the variables' defaults:
load_settings passes only the variables that are set, and --help shows these."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

from ..protocol.media import TEXT, Modes
from ..protocol.push import AllowList

if TYPE_CHECKING:  # imported where a card is signed: no start without a key pays for it
    from ..protocol.card_signature import CardSigner, SigningKey

#: The default of ADAPTER_MAX_BODY_BYTES and ADAPTER_MAX_REPLY_BYTES: a 20 MiB file as
#: base64 in JSON (26.7 MiB) with room to spare, each way.
MAX_PAYLOAD_BYTES = 32 * 1024 * 1024


@dataclass(frozen=True, slots=True)
class Settings:
    """Everything the adapter is configured with."""

    agent_name: str
    agent_description: str
    skill_id: str
    skill_name: str
    skill_description: str
    webhook_url: str
    public_url: str
    skill_examples: tuple[str, ...] = ()
    input_modes: tuple[str, ...] = (TEXT,)
    output_modes: tuple[str, ...] = (TEXT,)
    ca_bundle: str | None = None
    host: str = "0.0.0.0"
    port: int = 8080
    webhook_timeout: float = 60.0
    webhook_streaming: bool = False
    webhook_files: str = "json"
    max_body_bytes: int = MAX_PAYLOAD_BYTES
    max_reply_bytes: int = MAX_PAYLOAD_BYTES
    # Payload bytes (docs/operating.md, "Memory": RSS is at most the idle process, a few
    # times this, and what the other bounds hold).
    memory_budget: int = 128 * 1024 * 1024
    memory_wait: float = 10.0
    # One caller's share of the budget, held and kept; unset, load_settings makes it half
    # the budget, or ADAPTER_MAX_BODY_BYTES if more.
    memory_share: int = 64 * 1024 * 1024
    max_concurrent_calls: int = 1024
    max_queued_calls: int = 1024
    max_tasks: int = 10_000
    # Unset, load_settings makes it twice the two call limits added (4096 with theirs).
    max_connections: int = 4096
    # Unset, load_settings makes it ADAPTER_MAX_CONNECTIONS: behind an ingress every
    # connection comes from its few addresses (docs/configuration.md).
    max_connections_per_ip: int = 4096
    keep_alive_timeout: float = 75.0
    request_read_timeout: float = 30.0
    send_timeout: float = 30.0
    task_ttl: float = 3600.0
    shutdown_grace: float = 30.0
    stream_keepalive: float = 15.0
    max_streams_per_caller: int = 32
    long_poll_timeout: float = 30.0
    max_long_polls_per_caller: int = 32
    require_token: bool = False
    oidc_issuer: str | None = None
    oidc_audience: str | None = None
    oidc_scopes: tuple[str, ...] = ()
    oidc_allow_http: bool = False
    # The key is never shown: not in a repr, a log line or an error.
    card_signing_key: SigningKey | None = field(default=None, repr=False)
    card_signing_kid: str | None = None
    card_signing_jku: str | None = None
    ready_check_webhook: bool = False
    allow_input_required: bool = False
    allow_auth_required: bool = False
    waiting_path: str = "/webhook-waiting/"
    input_ttl: float = 86400.0
    log_level: str = "INFO"
    log_format: str = "auto"
    push_max_configs: int = 8
    push_max_attempts: int = 5
    push_max_concurrent: int = 64
    push_max_per_address: int = 4
    push_allow_hosts: AllowList = field(default_factory=AllowList)
    store_url: str | None = field(default=None, repr=False)  # it may hold a password
    lease_seconds: float = 15.0

    @property
    def rpc_path(self) -> str:
        """The JSON-RPC endpoint's path: the public URL's own, so an ingress needs no rewrite."""
        return urlsplit(self.public_url).path or "/"

    @property
    def modes(self) -> Modes:
        """The media types the agent takes in and gives out, as protocol/ reads them."""
        return Modes(self.input_modes, self.output_modes)

    @property
    def card_signer(self) -> CardSigner | None:
        """What signs the Agent Card, with ADAPTER_CARD_SIGNING_KEY (load_settings made sure
        its kid came with it)."""
        if self.card_signing_key is None or self.card_signing_kid is None:
            return None
        from ..protocol.card_signature import CardSigner  # a key is configured: signing

        return CardSigner(self.card_signing_key, self.card_signing_kid, self.card_signing_jku)

    @property
    def oidc_discovery_url(self) -> str | None:
        """Where the issuer describes itself and its keys (OpenID Connect Discovery 1.0 §4)."""
        if self.oidc_issuer is None:
            return None
        return self.oidc_issuer.rstrip("/") + "/.well-known/openid-configuration"
