from __future__ import annotations

import subprocess
import sys
from typing import Any

import pytest

from n8n_a2a.config import ConfigError, load_settings

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
    assert (settings.keep_alive_timeout, settings.request_read_timeout) == (75.0, 30.0)
    assert settings.send_timeout == 30.0
    assert settings.max_connections == 2 * (1024 + 1024)


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
        ("ADAPTER_LOG_LEVEL", "LOUD", "one of DEBUG"),
        ("ADAPTER_LOG_FORMAT", "xml", "one of auto"),
    ],
)
def test_a_bad_value_names_its_variable(variable: str, value: str | None, problem: str) -> None:
    environ: dict[str, Any] = dict(GOOD)
    if value is None:
        del environ[variable]
    else:
        environ[variable] = value
    with pytest.raises(ConfigError) as raised:
        load_settings(environ)
    assert raised.value.variable == variable
    assert problem in str(raised.value)


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
