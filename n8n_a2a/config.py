"""Settings from the environment: the only place that reads os.environ's variables."""

from __future__ import annotations

import importlib.util
import math
import re
import ssl
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from functools import partial
from typing import TypeVar
from urllib.parse import urlsplit

from .protocol.push import AllowList

T = TypeVar("T")

_SKILL_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,127}$")
LOG_LEVELS = ("DEBUG", "INFO", "WARNING", "ERROR")
LOG_FORMATS = ("auto", "json", "text")


class ConfigError(Exception):
    """A variable is missing or malformed; the message names it and says what is wrong."""

    def __init__(self, variable: str, problem: str) -> None:
        super().__init__(f"{variable}: {problem}")
        self.variable = variable
        self.problem = problem


@dataclass(frozen=True, slots=True)
class Settings:
    """Everything the adapter is configured with."""

    agent_name: str
    agent_description: str
    skill_id: str
    skill_name: str
    skill_description: str
    skill_examples: tuple[str, ...]
    webhook_url: str
    public_url: str
    ca_bundle: str | None = None
    host: str = "0.0.0.0"
    port: int = 8080
    webhook_timeout: float = 60.0
    max_body_bytes: int = 1024 * 1024
    max_concurrent_calls: int = 1024
    max_queued_calls: int = 1024
    max_tasks: int = 10_000
    max_stored_text: int = 8192
    max_connections: int = 4096
    keep_alive_timeout: float = 75.0
    request_read_timeout: float = 30.0
    send_timeout: float = 30.0
    task_ttl: float = 3600.0
    shutdown_grace: float = 30.0
    stream_keepalive: float = 15.0
    max_streams_per_caller: int = 32
    require_token: bool = False
    oidc_issuer: str | None = None
    oidc_audience: str | None = None
    ready_check_webhook: bool = False
    allow_input_required: bool = False
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
    def oidc_discovery_url(self) -> str | None:
        """Where the issuer describes itself and its keys (OpenID Connect Discovery 1.0 §4)."""
        if self.oidc_issuer is None:
            return None
        return self.oidc_issuer.rstrip("/") + "/.well-known/openid-configuration"


def load_settings(environ: Mapping[str, str]) -> Settings:
    """Read and check every ADAPTER_* variable; raise ConfigError naming the first bad one."""
    settings = Settings(
        agent_name=_required(environ, "ADAPTER_AGENT_NAME"),
        agent_description=_required(environ, "ADAPTER_AGENT_DESCRIPTION"),
        skill_id=_skill_id(environ),
        skill_name=_required(environ, "ADAPTER_SKILL_NAME"),
        skill_description=_required(environ, "ADAPTER_SKILL_DESCRIPTION"),
        skill_examples=tuple(
            line.strip()
            for line in environ.get("ADAPTER_SKILL_EXAMPLES", "").splitlines()
            if line.strip()
        ),
        webhook_url=_http_url(environ, "ADAPTER_WEBHOOK_URL"),
        public_url=_http_url(environ, "ADAPTER_PUBLIC_URL"),
        ca_bundle=_ca_bundle(environ),
        host=_optional(environ, "ADAPTER_HOST", "0.0.0.0", _host),
        port=_optional(environ, "ADAPTER_PORT", 8080, _port),
        webhook_timeout=_optional(environ, "ADAPTER_WEBHOOK_TIMEOUT", 60.0, _seconds),
        max_body_bytes=_optional(environ, "ADAPTER_MAX_BODY_BYTES", 1024 * 1024, _at_least(1024)),
        max_concurrent_calls=_optional(environ, "ADAPTER_MAX_CONCURRENT_CALLS", 1024, _at_least(1)),
        max_queued_calls=_optional(environ, "ADAPTER_MAX_QUEUED_CALLS", 1024, _at_least(0)),
        max_tasks=_optional(environ, "ADAPTER_MAX_TASKS", 10_000, _at_least(1)),
        max_stored_text=_optional(environ, "ADAPTER_MAX_STORED_TEXT", 8192, _at_least(256)),
        keep_alive_timeout=_optional(environ, "ADAPTER_KEEPALIVE_TIMEOUT", 75.0, _seconds),
        request_read_timeout=_optional(environ, "ADAPTER_REQUEST_READ_TIMEOUT", 30.0, _seconds),
        send_timeout=_optional(environ, "ADAPTER_SEND_TIMEOUT", 30.0, _seconds),
        task_ttl=_optional(environ, "ADAPTER_TASK_TTL", 3600.0, _seconds),
        shutdown_grace=_optional(environ, "ADAPTER_SHUTDOWN_GRACE", 30.0, _seconds),
        stream_keepalive=_optional(environ, "ADAPTER_STREAM_KEEPALIVE", 15.0, _seconds),
        max_streams_per_caller=_optional(
            environ, "ADAPTER_MAX_STREAMS_PER_CALLER", 32, _at_least(1)
        ),
        require_token=_optional(environ, "ADAPTER_REQUIRE_TOKEN", False, _boolean),
        oidc_issuer=_oidc_issuer(environ),
        oidc_audience=_oidc_audience(environ),
        ready_check_webhook=_optional(environ, "ADAPTER_READY_CHECK_WEBHOOK", False, _boolean),
        allow_input_required=_optional(environ, "ADAPTER_ALLOW_INPUT_REQUIRED", False, _boolean),
        input_ttl=_optional(environ, "ADAPTER_INPUT_TTL", 86400.0, _seconds),
        log_level=_optional(environ, "ADAPTER_LOG_LEVEL", "INFO", _one_of(*LOG_LEVELS)),
        log_format=_optional(environ, "ADAPTER_LOG_FORMAT", "auto", _one_of(*LOG_FORMATS)),
        push_max_configs=_optional(environ, "ADAPTER_PUSH_MAX_CONFIGS", 8, _at_least(1)),
        push_max_attempts=_optional(environ, "ADAPTER_PUSH_MAX_ATTEMPTS", 5, _at_least(1)),
        push_max_concurrent=_optional(environ, "ADAPTER_PUSH_MAX_CONCURRENT", 64, _at_least(1)),
        push_max_per_address=_optional(environ, "ADAPTER_PUSH_MAX_PER_ADDRESS", 4, _at_least(1)),
        push_allow_hosts=_optional(
            environ, "ADAPTER_PUSH_ALLOW_HOSTS", AllowList(), AllowList.parse
        ),
        store_url=_store_url(environ),
        lease_seconds=_optional(environ, "ADAPTER_LEASE_SECONDS", 15.0, _lease),
    )
    # Every running or waiting task must fit in the table, or a send could find no
    # room that evicting finished tasks can make.
    if settings.max_tasks < settings.max_concurrent_calls + settings.max_queued_calls:
        raise ConfigError(
            "ADAPTER_MAX_TASKS",
            f"must be at least ADAPTER_MAX_CONCURRENT_CALLS + ADAPTER_MAX_QUEUED_CALLS "
            f"({settings.max_concurrent_calls + settings.max_queued_calls}), "
            f"got {settings.max_tasks}",
        )
    # A blocking send holds its connection while it runs or waits: every send admitted
    # must find one. The default leaves as many again for polls, cards, probes and
    # clients' idle keep-alive connections.
    admitted = settings.max_concurrent_calls + settings.max_queued_calls
    max_connections = _optional(environ, "ADAPTER_MAX_CONNECTIONS", 2 * admitted, _at_least(1))
    if max_connections < admitted:
        raise ConfigError(
            "ADAPTER_MAX_CONNECTIONS",
            f"must be at least ADAPTER_MAX_CONCURRENT_CALLS + ADAPTER_MAX_QUEUED_CALLS "
            f"({admitted}), got {max_connections}",
        )
    return replace(settings, max_connections=max_connections)


def _required(environ: Mapping[str, str], name: str) -> str:
    value = environ.get(name, "").strip()
    if not value:
        raise ConfigError(name, "is required and must not be empty")
    return value


def _optional(environ: Mapping[str, str], name: str, default: T, parse: Callable[[str], T]) -> T:
    raw = environ.get(name, "").strip()
    if not raw:
        return default
    try:
        return parse(raw)
    except ValueError as error:
        raise ConfigError(name, f"{error} (got {raw!r})") from None


def _skill_id(environ: Mapping[str, str]) -> str:
    value = _required(environ, "ADAPTER_SKILL_ID")
    if not _SKILL_ID.match(value):
        raise ConfigError(
            "ADAPTER_SKILL_ID", f"must be letters, digits, '_', '.' or '-' (got {value!r})"
        )
    return value


def _http_url(environ: Mapping[str, str], name: str) -> str:
    value = _required(environ, name)
    try:
        parts = urlsplit(value)
        parts.port  # noqa: B018 - raises ValueError for a port that is not a number
    except ValueError as error:
        raise ConfigError(name, f"is not a valid URL: {error}") from None
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ConfigError(name, f"must be an http:// or https:// URL with a host (got {value!r})")
    if parts.username is not None or parts.password is not None:
        # The adapter holds no credentials; one in a URL would also land in logs.
        raise ConfigError(name, "must not carry credentials (user:password@)")
    return value


def _ca_bundle(environ: Mapping[str, str]) -> str | None:
    path = environ.get("ADAPTER_CA_BUNDLE", "").strip()
    if not path:
        return None
    try:
        ssl.create_default_context(cafile=path)
    except FileNotFoundError:
        raise ConfigError("ADAPTER_CA_BUNDLE", f"no such file: {path}") from None
    except (ssl.SSLError, OSError, ValueError) as error:
        raise ConfigError(
            "ADAPTER_CA_BUNDLE", f"is not a readable PEM CA file: {path} ({error})"
        ) from None
    return path


def _oidc_issuer(environ: Mapping[str, str]) -> str | None:
    if not environ.get("ADAPTER_OIDC_ISSUER", "").strip():
        return None
    issuer = _http_url(environ, "ADAPTER_OIDC_ISSUER")
    try:
        # The optional extra: PyJWT, with cryptography for the asymmetric algorithms.
        from jwt.algorithms import has_crypto
    except ImportError:
        has_crypto = False
    if not has_crypto:
        raise ConfigError(
            "ADAPTER_OIDC_ISSUER",
            "verifying tokens needs the oidc extra: pip install 'n8n-a2a[oidc]'",
        )
    return issuer


def _oidc_audience(environ: Mapping[str, str]) -> str | None:
    audience = environ.get("ADAPTER_OIDC_AUDIENCE", "").strip()
    issuer = environ.get("ADAPTER_OIDC_ISSUER", "").strip()
    if issuer and not audience:
        raise ConfigError(
            "ADAPTER_OIDC_AUDIENCE",
            "is required with ADAPTER_OIDC_ISSUER: the aud a token must carry to be for this agent",
        )
    if audience and not issuer:
        raise ConfigError("ADAPTER_OIDC_AUDIENCE", "is only used with ADAPTER_OIDC_ISSUER")
    return audience or None


def _store_url(environ: Mapping[str, str]) -> str | None:
    """A PostgreSQL URL, or None for the in-memory store. Never quoted back: it may hold
    a password."""
    value = environ.get("ADAPTER_STORE_URL", "").strip()
    if not value:
        return None
    scheme = value.partition("://")[0].lower() if "://" in value else ""
    if scheme not in ("postgresql", "postgres"):
        raise ConfigError(
            "ADAPTER_STORE_URL", "must be a postgresql:// URL (postgresql://user@host/database)"
        )
    if importlib.util.find_spec("psycopg") is None:
        raise ConfigError(
            "ADAPTER_STORE_URL",
            "needs the PostgreSQL driver: pip install 'n8n-a2a[postgres]'",
        )
    # The postgres extra: imported only when a store URL is set.
    import psycopg
    from psycopg.conninfo import conninfo_to_dict

    malformed = ConfigError(
        "ADAPTER_STORE_URL",
        "is not a valid postgresql:// URL (in the user name and password, write '@' as %40,"
        " '/' as %2F and '%' as %25)",
    )
    try:
        conninfo_to_dict(value)
    except psycopg.Error:
        raise malformed from None  # libpq's message quotes the URL
    # libpq takes the user and password up to the first '@', unless a '/' comes first: a
    # further '@' (one in the password) would make a host of what follows it.
    userinfo, at, rest = value.partition("://")[2].partition("@")
    if "@" in rest or (at and "/" in userinfo):
        raise malformed
    return value


def _lease(raw: str) -> float:
    value = _seconds(raw)
    if value < 1:
        raise ValueError("must be a number of seconds, at least 1")
    return value


def _host(raw: str) -> str:
    if any(c.isspace() for c in raw) or "/" in raw:
        raise ValueError("must be a host name or IP address")
    return raw


def _port(raw: str) -> int:
    if not raw.isdigit() or not 0 <= int(raw) <= 65535:
        raise ValueError("must be a whole number from 0 to 65535")
    return int(raw)


def _seconds(raw: str) -> float:
    try:
        value = float(raw)
    except ValueError:
        raise ValueError("must be a number of seconds") from None
    if not math.isfinite(value) or value <= 0:
        raise ValueError("must be a number of seconds greater than 0")
    return value


def _boolean(raw: str) -> bool:
    if raw.lower() in ("true", "1", "yes"):
        return True
    if raw.lower() in ("false", "0", "no"):
        return False
    raise ValueError("must be true or false")


def _one_of(*choices: str) -> Callable[[str], str]:
    def parse(raw: str) -> str:
        for choice in choices:
            if raw.lower() == choice.lower():
                return choice
        raise ValueError(f"must be one of {', '.join(choices)}")

    return parse


def _at_least(minimum: int) -> Callable[[str], int]:
    return partial(_whole_number, minimum=minimum)


def _whole_number(raw: str, minimum: int) -> int:
    if not raw.isdigit() or int(raw) < minimum:
        raise ValueError(f"must be a whole number, at least {minimum}")
    return int(raw)
