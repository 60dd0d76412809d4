"""The one table of ADAPTER_* variables: load_settings reads it, `n8n-a2a --help` prints it.

Whether a variable is required and its default are not written here: they are those of
the Settings field it sets (a field without a default is a required variable).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import MISSING, dataclass, fields

from ..protocol.push import AllowList
from . import values as read
from .settings import Settings
from .signing import signing_key

_FIELDS = {f.name: f for f in fields(Settings)}


@dataclass(frozen=True, slots=True)
class Variable:
    """One variable: the Settings attribute it sets, a one-line meaning, its reader."""

    name: str
    attribute: str
    summary: str
    parse: Callable[[str], object]
    # For a default computed from other variables, which the field's own only stands for.
    default_text: str | None = None

    @property
    def required(self) -> bool:
        field = _FIELDS[self.attribute]
        return field.default is MISSING and field.default_factory is MISSING

    @property
    def default(self) -> object:
        """The value when the variable is unset (None for a required one)."""
        field = _FIELDS[self.attribute]
        if field.default_factory is not MISSING:
            return field.default_factory()
        return None if field.default is MISSING else field.default

    @property
    def shown_default(self) -> str | None:
        """The default as --help writes it; None where there is none worth a word."""
        if self.default_text is not None:
            return self.default_text
        value = self.default
        if isinstance(value, bool):
            return "true" if value else "false"
        if isinstance(value, float):
            return f"{value:g}"
        if isinstance(value, int | str):
            return str(value)
        return None  # unset: no CA file, no examples, no allowed hosts, no store


_SECONDS = read.quoting(read.seconds)
_BOOLEAN = read.quoting(read.boolean)
_AT_LEAST_ONE = read.quoting(read.at_least(1))

VARIABLES: tuple[Variable, ...] = (
    Variable("ADAPTER_AGENT_NAME", "agent_name", "the Agent Card's name", read.text),
    Variable(
        "ADAPTER_AGENT_DESCRIPTION", "agent_description", "the Agent Card's description", read.text
    ),
    Variable(
        "ADAPTER_SKILL_ID",
        "skill_id",
        "the one skill's id: letters, digits, '_', '.' or '-'",
        read.skill_id,
    ),
    Variable("ADAPTER_SKILL_NAME", "skill_name", "the skill's name", read.text),
    Variable(
        "ADAPTER_SKILL_DESCRIPTION", "skill_description", "the skill's description", read.text
    ),
    Variable("ADAPTER_SKILL_EXAMPLES", "skill_examples", "example prompts, one a line", read.lines),
    Variable(
        "ADAPTER_INPUT_MODES",
        "input_modes",
        "media types taken in, comma-separated",
        read.quoting(read.media_types),
        default_text="text/plain",
    ),
    Variable(
        "ADAPTER_OUTPUT_MODES",
        "output_modes",
        "media types the workflow answers",
        read.quoting(read.output_modes),
        default_text="text/plain",
    ),
    Variable(
        "ADAPTER_WEBHOOK_URL",
        "webhook_url",
        "the workflow's production webhook, http:// or https://",
        read.http_url,
    ),
    Variable(
        "ADAPTER_PUBLIC_URL",
        "public_url",
        "what callers dial, put in the card; its path takes JSON-RPC",
        read.public_url,
    ),
    Variable(
        "ADAPTER_CA_BUNDLE",
        "ca_bundle",
        "a PEM CA file to verify TLS with, instead of the system's",
        read.ca_bundle,
    ),
    Variable("ADAPTER_HOST", "host", "the address to listen on", read.quoting(read.host)),
    Variable("ADAPTER_PORT", "port", "the port to listen on", read.quoting(read.port)),
    Variable(
        "ADAPTER_WEBHOOK_TIMEOUT", "webhook_timeout", "seconds one webhook call may take", _SECONDS
    ),
    Variable(
        "ADAPTER_WEBHOOK_STREAMING",
        "webhook_streaming",
        "true: relay n8n's streamed reply as it comes",
        _BOOLEAN,
    ),
    Variable(
        "ADAPTER_WEBHOOK_FILES",
        "webhook_files",
        "json: files as base64; multipart: as n8n binary",
        read.quoting(read.one_of("json", "multipart")),
    ),
    Variable(
        "ADAPTER_MAX_BODY_BYTES",
        "max_body_bytes",
        "the largest request body taken, at least 1024",
        read.quoting(read.at_least(1024)),
    ),
    Variable(
        "ADAPTER_MAX_REPLY_BYTES",
        "max_reply_bytes",
        "the largest webhook reply read, at least 1024",
        read.quoting(read.at_least(1024)),
    ),
    Variable(
        "ADAPTER_MEMORY_BUDGET",
        "memory_budget",
        "bytes of bodies, replies and tasks held",
        read.quoting(read.at_least(1024)),
    ),
    Variable(
        "ADAPTER_MEMORY_SHARE",
        "memory_share",
        "bytes one caller may hold",
        read.quoting(read.at_least(1024)),
        default_text="half the budget",
    ),
    Variable(
        "ADAPTER_MEMORY_WAIT",
        "memory_wait",
        "seconds to wait for room",
        _SECONDS,
        default_text="10, or half the read time",
    ),
    Variable(
        "ADAPTER_MAX_CONCURRENT_CALLS",
        "max_concurrent_calls",
        "webhook calls under way at once",
        _AT_LEAST_ONE,
    ),
    Variable(
        "ADAPTER_MAX_QUEUED_CALLS",
        "max_queued_calls",
        "sends that may wait for a free call slot",
        read.quoting(read.at_least(0)),
    ),
    Variable(
        "ADAPTER_MAX_TASKS",
        "max_tasks",
        "tasks kept, at least the two call limits added",
        _AT_LEAST_ONE,
    ),
    Variable(
        "ADAPTER_MAX_CONNECTIONS",
        "max_connections",
        "HTTP connections open at once",
        _AT_LEAST_ONE,
        default_text="twice the two call limits",
    ),
    Variable(
        "ADAPTER_MAX_CONNECTIONS_PER_IP",
        "max_connections_per_ip",
        "connections from one IP address",
        _AT_LEAST_ONE,
        default_text="ADAPTER_MAX_CONNECTIONS",
    ),
    Variable(
        "ADAPTER_KEEPALIVE_TIMEOUT",
        "keep_alive_timeout",
        "seconds an idle keep-alive connection is kept",
        _SECONDS,
    ),
    Variable(
        "ADAPTER_REQUEST_READ_TIMEOUT",
        "request_read_timeout",
        "seconds a request may take to arrive",
        _SECONDS,
    ),
    Variable(
        "ADAPTER_SEND_TIMEOUT",
        "send_timeout",
        "seconds each 64 KiB of a response may take to go out",
        _SECONDS,
    ),
    Variable("ADAPTER_TASK_TTL", "task_ttl", "seconds a finished task is kept", _SECONDS),
    Variable(
        "ADAPTER_ALLOW_INPUT_REQUIRED",
        "allow_input_required",
        "true: the workflow may ask the caller a question",
        _BOOLEAN,
    ),
    Variable(
        "ADAPTER_ALLOW_AUTH_REQUIRED",
        "allow_auth_required",
        "true: the workflow may ask the caller to sign in",
        _BOOLEAN,
    ),
    Variable(
        "ADAPTER_WAITING_PATH",
        "waiting_path",
        "n8n's path of a resumeUrl",
        read.waiting_path,
    ),
    Variable(
        "ADAPTER_INPUT_TTL",
        "input_ttl",
        "seconds a question waits for its answer",
        _SECONDS,
    ),
    Variable(
        "ADAPTER_STORE_URL",
        "store_url",
        "postgresql://...: tasks shared in PostgreSQL, else in memory",
        read.store_url,
    ),
    Variable(
        "ADAPTER_LEASE_SECONDS",
        "lease_seconds",
        "seconds a replica may go silent before its tasks fail",
        read.quoting(read.lease),
    ),
    Variable(
        "ADAPTER_SHUTDOWN_GRACE",
        "shutdown_grace",
        "seconds calls under way get to finish after SIGTERM",
        _SECONDS,
    ),
    Variable(
        "ADAPTER_STREAM_KEEPALIVE",
        "stream_keepalive",
        "seconds a stream may stay silent before a keep-alive",
        _SECONDS,
    ),
    Variable(
        "ADAPTER_MAX_STREAMS_PER_CALLER",
        "max_streams_per_caller",
        "event streams one caller may hold open at once",
        _AT_LEAST_ONE,
    ),
    Variable(
        "ADAPTER_LONG_POLL_TIMEOUT",
        "long_poll_timeout",
        "seconds a long-poll (currentGeneration) is held",
        _SECONDS,
    ),
    Variable(
        "ADAPTER_MAX_POLLS_PER_CALLER",
        "max_long_polls_per_caller",
        "long-polls one caller may have held at once",
        _AT_LEAST_ONE,
    ),
    Variable(
        "ADAPTER_REQUIRE_TOKEN",
        "require_token",
        "true: a request needs a Bearer token",
        _BOOLEAN,
    ),
    Variable(
        "ADAPTER_OIDC_ISSUER",
        "oidc_issuer",
        "an OpenID Connect issuer that every Bearer token is verified with",
        read.oidc_issuer,
    ),
    Variable(
        "ADAPTER_OIDC_AUDIENCE",
        "oidc_audience",
        "required with an issuer: the aud a token must carry",
        read.oidc_audience,
    ),
    Variable(
        "ADAPTER_OIDC_SCOPES",
        "oidc_scopes",
        "scopes a token must carry, space-separated (the card lists them)",
        read.quoting(read.scopes),
    ),
    Variable(
        "ADAPTER_OIDC_ALLOW_HTTP",
        "oidc_allow_http",
        "true: the issuer's keys may come over http (tests)",
        _BOOLEAN,
    ),
    Variable(
        "ADAPTER_CARD_SIGNING_KEY",
        "card_signing_key",
        "a PEM private key (EC P-256, RSA, Ed25519) to sign the card with",
        signing_key,
    ),
    Variable(
        "ADAPTER_CARD_SIGNING_KID",
        "card_signing_kid",
        "required with the key: its id, named in the signature",
        read.quoting(read.key_id),
    ),
    Variable(
        "ADAPTER_CARD_SIGNING_JKU",
        "card_signing_jku",
        "an https:// JWKS URL with the public key, named in the signature",
        read.https_url,
    ),
    Variable(
        "ADAPTER_READY_CHECK_WEBHOOK",
        "ready_check_webhook",
        "true: /readyz also connects to the webhook's host",
        _BOOLEAN,
    ),
    Variable(
        "ADAPTER_PUSH_ALLOW_HOSTS",
        "push_allow_hosts",
        "hosts and networks push may reach that the policy refuses",
        read.quoting(AllowList.parse),
    ),
    Variable(
        "ADAPTER_PUSH_MAX_CONFIGS",
        "push_max_configs",
        "push notification configs one task may have",
        _AT_LEAST_ONE,
    ),
    Variable(
        "ADAPTER_PUSH_MAX_ATTEMPTS",
        "push_max_attempts",
        "attempts to deliver one update to one receiver",
        _AT_LEAST_ONE,
    ),
    Variable(
        "ADAPTER_PUSH_MAX_CONCURRENT",
        "push_max_concurrent",
        "push POSTs under way at once",
        _AT_LEAST_ONE,
    ),
    Variable(
        "ADAPTER_PUSH_MAX_PER_ADDRESS",
        "push_max_per_address",
        "push POSTs under way at once to one IP address",
        _AT_LEAST_ONE,
    ),
    Variable(
        "ADAPTER_LOG_LEVEL",
        "log_level",
        "DEBUG, INFO, WARNING or ERROR",
        read.quoting(read.one_of("DEBUG", "INFO", "WARNING", "ERROR")),
    ),
    Variable(
        "ADAPTER_LOG_FORMAT",
        "log_format",
        "json, text, or auto: text on a terminal, else JSON",
        read.quoting(read.one_of("auto", "json", "text")),
    ),
)

#: Variables no longer read, and what to do instead: set, each stops the start (exit 2)
#: with its line, rather than be ignored while the operator believes it still acts.
RETIRED: dict[str, str] = {
    "ADAPTER_MAX_STORED_TEXT": "is retired: a task keeps every message and answer whole "
    "now; remove it (ADAPTER_MEMORY_BUDGET bounds the memory kept tasks hold)",
}
