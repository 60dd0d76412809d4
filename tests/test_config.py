from __future__ import annotations

import subprocess
import sys
from typing import Any

import pytest

from n8n_a2a.config import ConfigError, load_settings
from n8n_a2a.protocol.push import AllowList

GOOD = {
    "ADAPTER_AGENT_NAME": "Supply agent",
    "ADAPTER_AGENT_DESCRIPTION": "Checks supplies.",
    "ADAPTER_SKILL_ID": "check_availability",
    "ADAPTER_SKILL_NAME": "Check availability",
    "ADAPTER_SKILL_DESCRIPTION": "Whether an item is in stock.",
    "ADAPTER_SKILL_EXAMPLES": "Are there 4 pallets of flour?\n\n  And sugar?  \n",
    "ADAPTER_WEBHOOK_URL": "https://n8n.internal/webhook/check",
    "ADAPTER_PUBLIC_URL": "http://supply.agents.svc:8080/a2a",
}


def test_a_good_environment_loads_with_defaults() -> None:
    settings = load_settings(GOOD)
    assert settings.skill_examples == ("Are there 4 pallets of flour?", "And sugar?")
    assert (settings.host, settings.port, settings.webhook_timeout) == ("0.0.0.0", 8080, 60.0)
    assert settings.ca_bundle is None
    assert settings.rpc_path == "/a2a"
    assert settings.max_stored_text == 8192
    assert load_settings({**GOOD, "ADAPTER_MAX_STORED_TEXT": "300"}).max_stored_text == 300
    # The contract stays strict unless a deployment opts in; a question waits a day.
    assert (settings.allow_input_required, settings.input_ttl) == (False, 86400.0)
    assert (settings.push_max_configs, settings.push_max_attempts) == (8, 5)
    assert (settings.push_max_concurrent, settings.push_max_per_address) == (64, 4)
    assert settings.push_allow_hosts == AllowList()
    assert (settings.keep_alive_timeout, settings.request_read_timeout) == (75.0, 30.0)
    assert settings.send_timeout == 30.0
    assert settings.max_connections == 2 * (1024 + 1024)


def test_a_deployment_opts_in_to_questions() -> None:
    environ = {**GOOD, "ADAPTER_ALLOW_INPUT_REQUIRED": "true", "ADAPTER_INPUT_TTL": "900"}
    settings = load_settings(environ)
    assert (settings.allow_input_required, settings.input_ttl) == (True, 900.0)


def test_the_push_allow_list_takes_names_addresses_and_networks() -> None:
    settings = load_settings(
        {**GOOD, "ADAPTER_PUSH_ALLOW_HOSTS": " Receiver.Internal., 127.0.0.1 ,, fd00::/8,[::1]"}
    )
    allow = settings.push_allow_hosts
    assert allow.names == {"receiver.internal"}
    assert [str(n) for n in allow.networks] == ["127.0.0.1/32", "fd00::/8", "::1/128"]


def test_the_connection_limit_follows_the_call_limits_unless_set() -> None:
    calls = {"ADAPTER_MAX_CONCURRENT_CALLS": "10", "ADAPTER_MAX_QUEUED_CALLS": "5"}
    assert load_settings({**GOOD, **calls}).max_connections == 30
    settings = load_settings({**GOOD, **calls, "ADAPTER_MAX_CONNECTIONS": "15"})
    assert settings.max_connections == 15


def test_connection_timeouts_are_read() -> None:
    timeouts = {
        "ADAPTER_KEEPALIVE_TIMEOUT": "5",
        "ADAPTER_REQUEST_READ_TIMEOUT": "2.5",
        "ADAPTER_SEND_TIMEOUT": "90",
    }
    settings = load_settings({**GOOD, **timeouts})
    assert (settings.keep_alive_timeout, settings.request_read_timeout) == (5.0, 2.5)
    assert settings.send_timeout == 90.0


@pytest.mark.parametrize(
    ("variable", "value", "problem"),
    [
        ("ADAPTER_AGENT_NAME", None, "is required"),
        ("ADAPTER_WEBHOOK_URL", "   ", "is required"),
        ("ADAPTER_WEBHOOK_URL", "ftp://x/y", "http:// or https://"),
        ("ADAPTER_WEBHOOK_URL", "http://user:pw@host/x", "credentials"),
        ("ADAPTER_PUBLIC_URL", "supply:8080", "http:// or https://"),
        ("ADAPTER_PUBLIC_URL", "http://host:99999999/", "not a valid URL"),
        ("ADAPTER_SKILL_ID", "check availability", "letters, digits"),
        ("ADAPTER_PORT", "http", "whole number"),
        ("ADAPTER_PORT", "70000", "whole number"),
        ("ADAPTER_WEBHOOK_TIMEOUT", "0", "greater than 0"),
        ("ADAPTER_WEBHOOK_TIMEOUT", "nan", "greater than 0"),
        ("ADAPTER_WEBHOOK_TIMEOUT", "soon", "number of seconds"),
        ("ADAPTER_CA_BUNDLE", "/no/such/file.pem", "no such file"),
        ("ADAPTER_MAX_BODY_BYTES", "12", "at least 1024"),
        ("ADAPTER_MAX_CONCURRENT_CALLS", "0", "at least 1"),
        ("ADAPTER_MAX_QUEUED_CALLS", "-1", "whole number"),
        ("ADAPTER_MAX_TASKS", "100", "at least ADAPTER_MAX_CONCURRENT_CALLS"),
        ("ADAPTER_MAX_STORED_TEXT", "100", "at least 256"),
        ("ADAPTER_MAX_CONNECTIONS", "0", "at least 1"),
        ("ADAPTER_MAX_CONNECTIONS", "2047", "at least ADAPTER_MAX_CONCURRENT_CALLS"),
        ("ADAPTER_KEEPALIVE_TIMEOUT", "0", "greater than 0"),
        ("ADAPTER_KEEPALIVE_TIMEOUT", "long", "number of seconds"),
        ("ADAPTER_REQUEST_READ_TIMEOUT", "-1", "greater than 0"),
        ("ADAPTER_REQUEST_READ_TIMEOUT", "inf", "greater than 0"),
        ("ADAPTER_SEND_TIMEOUT", "0", "greater than 0"),
        ("ADAPTER_TASK_TTL", "-5", "greater than 0"),
        ("ADAPTER_SHUTDOWN_GRACE", "x", "number of seconds"),
        ("ADAPTER_REQUIRE_TOKEN", "maybe", "true or false"),
        ("ADAPTER_READY_CHECK_WEBHOOK", "2", "true or false"),
        ("ADAPTER_ALLOW_INPUT_REQUIRED", "sometimes", "true or false"),
        ("ADAPTER_INPUT_TTL", "0", "greater than 0"),
        ("ADAPTER_INPUT_TTL", "a day", "number of seconds"),
        ("ADAPTER_LOG_LEVEL", "LOUD", "one of DEBUG"),
        ("ADAPTER_LOG_FORMAT", "xml", "one of auto"),
        ("ADAPTER_STORE_URL", "mysql://db/tasks", "postgresql:// URL"),
        ("ADAPTER_STORE_URL", "db.internal:5432", "postgresql:// URL"),
        ("ADAPTER_LEASE_SECONDS", "0.5", "at least 1"),
        ("ADAPTER_LEASE_SECONDS", "soon", "number of seconds"),
        ("ADAPTER_PUSH_MAX_CONFIGS", "0", "at least 1"),
        ("ADAPTER_PUSH_MAX_ATTEMPTS", "many", "whole number"),
        ("ADAPTER_PUSH_MAX_CONCURRENT", "0", "at least 1"),
        ("ADAPTER_PUSH_MAX_PER_ADDRESS", "four", "whole number"),
        ("ADAPTER_PUSH_ALLOW_HOSTS", "10.0.0.1/8", "no bits set past the prefix"),
        ("ADAPTER_PUSH_ALLOW_HOSTS", "localhost, http://x/", "'http://x/' is neither"),
        ("ADAPTER_OIDC_ISSUER", "login.example", "http:// or https://"),
        ("ADAPTER_OIDC_AUDIENCE", None, "is required with ADAPTER_OIDC_ISSUER"),
    ],
)
def test_a_bad_value_names_its_variable(variable: str, value: str | None, problem: str) -> None:
    environ: dict[str, Any] = {**GOOD, **OIDC}
    if value is None:
        del environ[variable]
    else:
        environ[variable] = value
    with pytest.raises(ConfigError) as raised:
        load_settings(environ)
    assert raised.value.variable == variable
    assert problem in str(raised.value)


def test_the_shared_store_is_opt_in_and_its_url_never_quoted() -> None:
    assert load_settings(GOOD).store_url is None  # in memory
    url = "postgresql://adapter:s3cret@db.internal:5432/tasks"
    settings = load_settings({**GOOD, "ADAPTER_STORE_URL": url, "ADAPTER_LEASE_SECONDS": "4"})
    assert (settings.store_url, settings.lease_seconds) == (url, 4.0)
    with pytest.raises(ConfigError) as raised:
        load_settings({**GOOD, "ADAPTER_STORE_URL": "mysql://adapter:s3cret@db/tasks"})
    assert "s3cret" not in str(raised.value)


@pytest.mark.parametrize(
    ("url", "pieces"),
    [
        # libpq refuses the '%'; it would quote the password in saying so.
        ("postgresql://bob:S3cr%zzEt@db.internal/tasks", ("bob", "S3cr", "zzEt", "db.internal")),
        # libpq takes these, and would look for a host "part@db.internal", or host "bob".
        ("postgresql://bob:secret@part@db.internal/tasks", ("bob", "secret", "part", "db.")),
        ("postgresql://bob:sec/ret@db.internal/tasks", ("bob", "sec", "ret@", "db.", "tasks")),
        ("postgresql://bob:sec ret@db.internal/tasks", ("bob", "sec", "ret", "db.", "tasks")),
    ],
)
def test_a_store_url_libpq_would_misread_is_refused_unquoted(url: str, pieces: list[str]) -> None:
    with pytest.raises(ConfigError) as raised:
        load_settings({**GOOD, "ADAPTER_STORE_URL": url})
    assert raised.value.variable == "ADAPTER_STORE_URL"
    assert "'@' as %40" in str(raised.value)
    assert not [piece for piece in pieces if piece in str(raised.value)]
    encoded = "postgresql://bob:p%40ss%2Fw%25rd@db.internal/tasks"
    assert load_settings({**GOOD, "ADAPTER_STORE_URL": encoded}).store_url == encoded


OIDC = {"ADAPTER_OIDC_ISSUER": "https://login.example/realms/a", "ADAPTER_OIDC_AUDIENCE": "supply"}


def test_verified_tokens_are_off_by_default_and_on_with_an_issuer_and_audience() -> None:
    assert (load_settings(GOOD).oidc_issuer, load_settings(GOOD).oidc_discovery_url) == (None, None)
    settings = load_settings({**GOOD, **OIDC})
    assert (settings.oidc_issuer, settings.oidc_audience) == (OIDC["ADAPTER_OIDC_ISSUER"], "supply")
    assert settings.oidc_discovery_url == (
        "https://login.example/realms/a/.well-known/openid-configuration"
    )


def test_an_audience_without_an_issuer_is_refused() -> None:
    with pytest.raises(ConfigError, match="ADAPTER_OIDC_AUDIENCE: is only used with"):
        load_settings({**GOOD, "ADAPTER_OIDC_AUDIENCE": "supply"})


def test_an_issuer_without_the_oidc_extra_is_one_clear_line(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setitem(sys.modules, "jwt.algorithms", None)
    with pytest.raises(ConfigError) as raised:
        load_settings({**GOOD, **OIDC})
    assert str(raised.value) == (
        "ADAPTER_OIDC_ISSUER: verifying tokens needs the oidc extra: pip install 'n8n-a2a[oidc]'"
    )
    assert load_settings(GOOD).oidc_issuer is None  # the base install needs no extra


WITHOUT_JWT = "import sys; sys.modules['jwt'] = None; from n8n_a2a.__main__ import main; main()"


def test_the_base_install_serves_without_the_extra_and_says_when_it_is_needed() -> None:
    checked = subprocess.run(
        [sys.executable, "-c", WITHOUT_JWT, "--check"],
        env={"PATH": "/usr/bin:/bin", **GOOD},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert checked.returncode == 0, checked.stderr
    refused = subprocess.run(
        [sys.executable, "-c", WITHOUT_JWT],
        env={"PATH": "/usr/bin:/bin", **GOOD, **OIDC},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert refused.returncode == 2
    assert refused.stderr.strip().splitlines() == [
        "n8n-a2a: configuration error: ADAPTER_OIDC_ISSUER: verifying tokens needs the oidc "
        "extra: pip install 'n8n-a2a[oidc]'"
    ]


def test_a_file_that_is_not_a_ca_is_refused(tmp_path: Any) -> None:
    bogus = tmp_path / "ca.pem"
    bogus.write_text("not a certificate")
    with pytest.raises(ConfigError, match="ADAPTER_CA_BUNDLE"):
        load_settings({**GOOD, "ADAPTER_CA_BUNDLE": str(bogus)})


def _run(*args: str, environ: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "n8n_a2a", *args],
        env={"PATH": "/usr/bin:/bin", **environ},
        capture_output=True,
        text=True,
        timeout=60,
    )


def test_the_command_exits_2_with_one_line_naming_the_variable() -> None:
    environ = {k: v for k, v in GOOD.items() if k != "ADAPTER_WEBHOOK_URL"}
    done = _run(environ=environ)
    assert done.returncode == 2
    assert done.stderr.strip().splitlines() == [
        "n8n-a2a: configuration error: ADAPTER_WEBHOOK_URL: is required and must not be empty"
    ]
    assert "Traceback" not in done.stderr


def test_check_prints_the_card_and_exits() -> None:
    done = _run("--check", environ=GOOD)
    assert done.returncode == 0, done.stderr
    assert '"name": "Supply agent"' in done.stdout
    assert '"url": "http://supply.agents.svc:8080/a2a"' in done.stdout
