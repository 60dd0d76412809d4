"""Each variable's reader, through load_settings: what a bad value gets told."""

from __future__ import annotations

import sys
from typing import Any

import pytest

from n8n_a2a.config import ConfigError, load_settings
from n8n_a2a.config import values as read
from tests.support.environments import GOOD, OIDC


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
        ("ADAPTER_MAX_REPLY_BYTES", "1000", "at least 1024"),
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
        ("ADAPTER_WEBHOOK_FILES", "base64", "must be one of json, multipart (got 'base64')"),
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
        ("ADAPTER_INPUT_MODES", "text", "media types such as text/plain"),
        ("ADAPTER_INPUT_MODES", "text/plain,,image/png", "not ''"),
        ("ADAPTER_INPUT_MODES", "image/*", "not 'image/*'"),
        ("ADAPTER_INPUT_MODES", "text/csv; charset=utf-8", "media types such as"),
        ("ADAPTER_INPUT_MODES", ",".join(f"a/b{n}" for n in range(33)), "at most 32"),
        ("ADAPTER_OUTPUT_MODES", "application/json", "must include text/plain"),
        ("ADAPTER_OUTPUT_MODES", "text/plain,x", "media types such as"),
        ("ADAPTER_OIDC_ISSUER", "login.example", "http:// or https://"),
        ("ADAPTER_OIDC_AUDIENCE", None, "is required with ADAPTER_OIDC_ISSUER"),
        ("ADAPTER_OIDC_ISSUER", "http://login.example", "ADAPTER_OIDC_ALLOW_HTTP=true allows"),
        ("ADAPTER_PUBLIC_URL", 'https://agents.example/su"p', "no spaces, quotes or percent"),
        ("ADAPTER_PUBLIC_URL", "https://agents.example/a%20b", "no spaces, quotes or percent"),
        ("ADAPTER_PUBLIC_URL", "https://agents.example/a2a?x=1", "must not have a query"),
        ("ADAPTER_PUBLIC_URL", "https://agents.example/a2a#top", "must not have a query"),
        ("ADAPTER_OIDC_SCOPES", 'a2a.call "all"', "without quotes or backslashes"),
        ("ADAPTER_OIDC_SCOPES", "a" * 129, "at most 128 characters"),
        ("ADAPTER_OIDC_SCOPES", " ".join(f"s{n}" for n in range(17)), "at most 16 scopes"),
        ("ADAPTER_OIDC_SCOPES", "a\\b", "not 'a\\\\b'"),
        ("ADAPTER_OIDC_ALLOW_HTTP", "sometimes", "true or false"),
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
    assert [problem.variable for problem in raised.value.problems] == [variable]
    assert problem in str(raised.value)


def test_scopes_are_read_once_each_and_only_with_an_issuer() -> None:
    environ = {**GOOD, **OIDC, "ADAPTER_OIDC_SCOPES": " a2a.call  openid a2a.call "}
    assert load_settings(environ).oidc_scopes == ("a2a.call", "openid")
    assert load_settings({**GOOD, **OIDC}).oidc_scopes == ()
    local = {**OIDC, "ADAPTER_OIDC_ISSUER": "http://127.0.0.1:8081/realms/a"}
    settings = load_settings({**GOOD, **local, "ADAPTER_OIDC_ALLOW_HTTP": "true"})
    assert (settings.oidc_issuer, settings.oidc_allow_http) == (local["ADAPTER_OIDC_ISSUER"], True)
    for name in ("ADAPTER_OIDC_SCOPES", "ADAPTER_OIDC_ALLOW_HTTP"):
        with pytest.raises(ConfigError) as raised:
            load_settings({**GOOD, name: "true"})
        assert str(raised.value) == f"{name}: is only used with ADAPTER_OIDC_ISSUER"


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
    assert [problem.variable for problem in raised.value.problems] == ["ADAPTER_STORE_URL"]
    assert "'@' as %40" in str(raised.value)
    assert not [piece for piece in pieces if piece in str(raised.value)]
    encoded = "postgresql://bob:p%40ss%2Fw%25rd@db.internal/tasks"
    assert load_settings({**GOOD, "ADAPTER_STORE_URL": encoded}).store_url == encoded


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


def test_a_file_that_is_not_a_ca_is_refused(tmp_path: Any) -> None:
    bogus = tmp_path / "ca.pem"
    bogus.write_text("not a certificate")
    with pytest.raises(ConfigError, match="ADAPTER_CA_BUNDLE"):
        load_settings({**GOOD, "ADAPTER_CA_BUNDLE": str(bogus)})


@pytest.mark.parametrize(("value", "way"), [("multipart", "multipart"), ("JSON", "json")])
def test_the_webhook_files_way_is_read_in_any_case(value: str, way: str) -> None:
    assert load_settings({**GOOD, "ADAPTER_WEBHOOK_FILES": value}).webhook_files == way


@pytest.mark.parametrize("raw", ["/webhook-waiting/", "/n8n/wait-here/", "/"])
def test_n8ns_waiting_path_is_a_path_from_slash_to_slash(raw: str) -> None:
    assert read.waiting_path(raw) == raw


@pytest.mark.parametrize(
    "raw", ["webhook-waiting/", "/webhook-waiting", "/a b/", "/../rest/", "/x/./", ""]
)
def test_any_other_waiting_path_is_refused(raw: str) -> None:
    with pytest.raises(ValueError, match="must"):
        read.waiting_path(raw)
