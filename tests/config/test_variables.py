"""The table of variables: one per setting, its defaults as written here, the docs' in step."""

from __future__ import annotations

import re
from dataclasses import fields
from pathlib import Path

from n8n_a2a.config import VARIABLES, Settings, load_settings
from n8n_a2a.protocol.push import AllowList
from tests.support.environments import GOOD

CONFIGURATION = Path(__file__).parents[2] / "docs" / "configuration.md"


def test_every_setting_has_one_variable_and_every_variable_one_setting() -> None:
    assert sorted(v.attribute for v in VARIABLES) == sorted(f.name for f in fields(Settings))
    names = [v.name for v in VARIABLES]
    assert len(set(names)) == len(names)
    assert all(re.fullmatch(r"ADAPTER_[A-Z_]+", name) for name in names)


def test_the_required_variables_are_the_seven_the_card_and_the_webhook_need() -> None:
    assert [v.name for v in VARIABLES if v.required] == [
        "ADAPTER_AGENT_NAME",
        "ADAPTER_AGENT_DESCRIPTION",
        "ADAPTER_SKILL_ID",
        "ADAPTER_SKILL_NAME",
        "ADAPTER_SKILL_DESCRIPTION",
        "ADAPTER_WEBHOOK_URL",
        "ADAPTER_PUBLIC_URL",
    ]


#: Every optional setting's value when its variable is unset, written out here rather than
#: read off Settings, so that a default changed by mistake fails this test.
DEFAULTS: dict[str, object] = {
    "skill_examples": (),
    "input_modes": ("text/plain",),
    "output_modes": ("text/plain",),
    "ca_bundle": None,
    "host": "0.0.0.0",
    "port": 8080,
    "webhook_timeout": 60.0,
    "webhook_streaming": False,
    "webhook_files": "json",
    "max_body_bytes": 33554432,  # 32 MiB: a 20 MiB file as base64 in JSON, and room
    "max_reply_bytes": 33554432,
    "memory_budget": 128 * 1024 * 1024,
    "memory_share": 64 * 1024 * 1024,
    "memory_wait": 10.0,
    "max_concurrent_calls": 1024,
    "max_queued_calls": 1024,
    "max_tasks": 10000,
    "max_connections": 4096,  # twice the two call limits added
    "max_connections_per_ip": 4096,  # ADAPTER_MAX_CONNECTIONS: an ingress is one address
    "keep_alive_timeout": 75.0,
    "request_read_timeout": 30.0,
    "send_timeout": 30.0,
    "task_ttl": 3600.0,
    "shutdown_grace": 30.0,
    "stream_keepalive": 15.0,
    "max_streams_per_caller": 32,
    "long_poll_timeout": 30.0,
    "allow_auth_required": False,
    "waiting_path": "/webhook-waiting/",
    "max_long_polls_per_caller": 32,
    "require_token": False,
    "oidc_issuer": None,
    "oidc_audience": None,
    "oidc_scopes": (),
    "oidc_allow_http": False,
    "card_signing_key": None,
    "card_signing_kid": None,
    "card_signing_jku": None,
    "ready_check_webhook": False,
    "allow_input_required": False,
    "input_ttl": 86400.0,
    "log_level": "INFO",
    "log_format": "auto",
    "push_max_configs": 8,
    "push_max_attempts": 5,
    "push_max_concurrent": 64,
    "push_max_per_address": 4,
    "push_allow_hosts": AllowList(),
    "store_url": None,
    "lease_seconds": 15.0,
}


def test_an_unset_variable_loads_as_its_default() -> None:
    required = {v.name for v in VARIABLES if v.required}
    settings = load_settings({k: v for k, v in GOOD.items() if k in required})
    optional = [v.attribute for v in VARIABLES if not v.required]
    assert sorted(optional) == sorted(DEFAULTS)
    loaded = {attribute: getattr(settings, attribute) for attribute in optional}
    assert loaded == DEFAULTS


def test_help_shows_the_defaults_as_a_person_would_write_them() -> None:
    shown = {v.name: v.shown_default for v in VARIABLES}
    assert shown["ADAPTER_AGENT_NAME"] is None
    assert (shown["ADAPTER_HOST"], shown["ADAPTER_PORT"]) == ("0.0.0.0", "8080")
    assert (shown["ADAPTER_WEBHOOK_TIMEOUT"], shown["ADAPTER_INPUT_TTL"]) == ("60", "86400")
    assert (shown["ADAPTER_MAX_BODY_BYTES"], shown["ADAPTER_REQUIRE_TOKEN"]) == (
        "33554432",
        "false",
    )
    assert shown["ADAPTER_MAX_REPLY_BYTES"] == "33554432"
    assert (shown["ADAPTER_LOG_LEVEL"], shown["ADAPTER_LOG_FORMAT"]) == ("INFO", "auto")
    assert shown["ADAPTER_WEBHOOK_FILES"] == "json"
    assert shown["ADAPTER_MAX_CONNECTIONS"] == "twice the two call limits"
    unset = ("ADAPTER_SKILL_EXAMPLES", "ADAPTER_CA_BUNDLE", "ADAPTER_PUSH_ALLOW_HOSTS")
    assert [shown[name] for name in unset] == [None, None, None]


def test_the_docs_list_every_variable_and_whether_it_is_required() -> None:
    section = CONFIGURATION.read_text().split("## Every setting", 1)[1].split("\n## ", 1)[0]
    rows = re.findall(r"^\| `(ADAPTER_\w+)` \| ([^|]+) \|", section, re.MULTILINE)
    assert sorted(name for name, _ in rows) == sorted(v.name for v in VARIABLES)
    required = {name for name, column in rows if column.strip() == "yes"}
    assert required == {v.name for v in VARIABLES if v.required}
