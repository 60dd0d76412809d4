"""From an environment to Settings: defaults, every problem at once, checks across variables
and the doubts worth a warning."""

from __future__ import annotations

import pytest

from n8n_a2a.app.edge import protected_resource
from n8n_a2a.config import VARIABLES, ConfigError, Problem, doubts, load_settings
from n8n_a2a.protocol.media import Modes
from n8n_a2a.protocol.push import AllowList
from tests.support.environments import GOOD, OIDC

REQUIRED = "is required and must not be empty"


def test_a_good_environment_loads_with_defaults() -> None:
    settings = load_settings(GOOD)
    assert settings.skill_examples == ("Are there 4 pallets of flour?", "And sugar?")
    assert (settings.host, settings.port, settings.webhook_timeout) == ("0.0.0.0", 8080, 60.0)
    assert settings.ca_bundle is None
    assert settings.rpc_path == "/a2a"
    assert (settings.max_body_bytes, settings.max_reply_bytes) == (32 * 2**20, 32 * 2**20)
    assert load_settings({**GOOD, "ADAPTER_MAX_REPLY_BYTES": "4096"}).max_reply_bytes == 4096
    # The contract stays strict unless a deployment opts in; a question waits a day.
    assert (settings.allow_input_required, settings.input_ttl) == (False, 86400.0)
    assert (settings.push_max_configs, settings.push_max_attempts) == (8, 5)
    assert (settings.push_max_concurrent, settings.push_max_per_address) == (64, 4)
    assert settings.push_allow_hosts == AllowList()
    assert (settings.keep_alive_timeout, settings.request_read_timeout) == (75.0, 30.0)
    assert settings.send_timeout == 30.0
    assert settings.max_connections == 2 * (1024 + 1024)


def test_text_in_text_out_unless_the_modes_are_set() -> None:
    assert load_settings(GOOD).modes == Modes(("text/plain",), ("text/plain",))
    environ = {
        **GOOD,
        "ADAPTER_INPUT_MODES": " text/plain, Application/JSON ,image/png,image/png",
        "ADAPTER_OUTPUT_MODES": "*/*",
    }
    modes = load_settings(environ).modes
    assert modes == Modes(("text/plain", "application/json", "image/png"), ("*/*",))
    at_most = ",".join(f"a/b{n}" for n in range(32))
    assert len(load_settings({**GOOD, "ADAPTER_INPUT_MODES": at_most}).input_modes) == 32


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


def test_the_per_address_limit_is_the_connection_limit_unless_set_lower() -> None:
    calls = {"ADAPTER_MAX_CONCURRENT_CALLS": "10", "ADAPTER_MAX_QUEUED_CALLS": "5"}
    assert load_settings({**GOOD, **calls}).max_connections_per_ip == 30
    limits = {**calls, "ADAPTER_MAX_CONNECTIONS": "40"}
    assert load_settings({**GOOD, **limits}).max_connections_per_ip == 40
    per_peer = {**limits, "ADAPTER_MAX_CONNECTIONS_PER_IP": "10"}
    assert load_settings({**GOOD, **per_peer}).max_connections_per_ip == 10
    with pytest.raises(ConfigError) as refused:
        load_settings({**GOOD, **limits, "ADAPTER_MAX_CONNECTIONS_PER_IP": "41"})
    assert refused.value.problems == (
        Problem(
            "ADAPTER_MAX_CONNECTIONS_PER_IP",
            "must be at most ADAPTER_MAX_CONNECTIONS (40), got 41",
        ),
    )


def test_connection_timeouts_are_read() -> None:
    timeouts = {
        "ADAPTER_KEEPALIVE_TIMEOUT": "5",
        "ADAPTER_REQUEST_READ_TIMEOUT": "2.5",
        "ADAPTER_SEND_TIMEOUT": "90",
    }
    settings = load_settings({**GOOD, **timeouts})
    assert (settings.keep_alive_timeout, settings.request_read_timeout) == (5.0, 2.5)
    assert settings.send_timeout == 90.0


def test_verified_tokens_are_off_by_default_and_on_with_an_issuer_and_audience() -> None:
    assert (load_settings(GOOD).oidc_issuer, load_settings(GOOD).oidc_discovery_url) == (None, None)
    settings = load_settings({**GOOD, **OIDC})
    assert (settings.oidc_issuer, settings.oidc_audience) == (OIDC["ADAPTER_OIDC_ISSUER"], "supply")
    assert settings.oidc_discovery_url == (
        "https://login.example/realms/a/.well-known/openid-configuration"
    )


@pytest.mark.parametrize(
    "root", ["http://supply.agents.svc:8080", "http://supply.agents.svc:8080/"]
)
def test_a_public_url_at_a_hosts_root_is_one_resource_however_written(root: str) -> None:
    settings = load_settings(
        {**GOOD, **OIDC, "ADAPTER_PUBLIC_URL": root, "ADAPTER_OIDC_AUDIENCE": root}
    )
    canonical = "http://supply.agents.svc:8080/"
    assert (settings.public_url, settings.oidc_audience, settings.rpc_path) == (
        canonical,
        canonical,
        "/",
    )
    resource = protected_resource(settings)
    assert resource is not None and resource.metadata()["resource"] == canonical
    assert (
        resource.metadata_url
        == "http://supply.agents.svc:8080/.well-known/oauth-protected-resource"
    )


def test_a_path_and_a_client_id_are_kept_as_written() -> None:
    for path in ("https://agents.example/supply", "https://agents.example/supply/"):
        settings = load_settings(
            {**GOOD, **OIDC, "ADAPTER_PUBLIC_URL": path, "ADAPTER_OIDC_AUDIENCE": path}
        )
        assert settings.public_url == settings.oidc_audience == path
    assert load_settings({**GOOD, **OIDC}).oidc_audience == "supply"


def test_an_audience_without_an_issuer_is_refused() -> None:
    with pytest.raises(ConfigError, match="ADAPTER_OIDC_AUDIENCE: is only used with"):
        load_settings({**GOOD, "ADAPTER_OIDC_AUDIENCE": "supply"})


def test_nothing_set_names_every_required_variable_at_once() -> None:
    with pytest.raises(ConfigError) as raised:
        load_settings({})
    assert raised.value.problems == (
        Problem("ADAPTER_AGENT_NAME", REQUIRED),
        Problem("ADAPTER_AGENT_DESCRIPTION", REQUIRED),
        Problem("ADAPTER_SKILL_ID", REQUIRED),
        Problem("ADAPTER_SKILL_NAME", REQUIRED),
        Problem("ADAPTER_SKILL_DESCRIPTION", REQUIRED),
        Problem("ADAPTER_WEBHOOK_URL", REQUIRED),
        Problem("ADAPTER_PUBLIC_URL", REQUIRED),
    )
    assert str(raised.value).startswith(f"ADAPTER_AGENT_NAME: {REQUIRED}; ADAPTER_AGENT_DESC")


def test_every_bad_variable_is_named_at_once_in_the_tables_order() -> None:
    environ = {
        **{k: v for k, v in GOOD.items() if k != "ADAPTER_SKILL_NAME"},
        "ADAPTER_LOG_LEVEL": "LOUD",
        "ADAPTER_PORT": "http",
        "ADAPTER_OIDC_ISSUER": "login.example",
    }
    with pytest.raises(ConfigError) as raised:
        load_settings(environ)
    assert raised.value.problems == (
        Problem("ADAPTER_SKILL_NAME", REQUIRED),
        Problem("ADAPTER_PORT", "must be a whole number from 0 to 65535 (got 'http')"),
        Problem(
            "ADAPTER_OIDC_ISSUER",
            "must be an http:// or https:// URL with a host (got 'login.example')",
        ),
        Problem(
            "ADAPTER_OIDC_AUDIENCE",
            "is required with ADAPTER_OIDC_ISSUER: the aud a token must carry to be for this agent",
        ),
        Problem("ADAPTER_LOG_LEVEL", "must be one of DEBUG, INFO, WARNING, ERROR (got 'LOUD')"),
    )
    assert [p.variable for p in raised.value.problems] == [
        v.name for v in VARIABLES if v.name in {p.variable for p in raised.value.problems}
    ]


@pytest.mark.parametrize(
    ("environ", "problem"),
    [
        # A call limit that is no number leaves nothing to hold the others against.
        (
            {"ADAPTER_MAX_CONCURRENT_CALLS": "many", "ADAPTER_MAX_TASKS": "10"},
            Problem(
                "ADAPTER_MAX_CONCURRENT_CALLS", "must be a whole number, at least 1 (got 'many')"
            ),
        ),
        # A limit's own problem is the one it shows, not the one across variables.
        (
            {"ADAPTER_MAX_CONCURRENT_CALLS": "20000", "ADAPTER_MAX_TASKS": "lots"},
            Problem("ADAPTER_MAX_TASKS", "must be a whole number, at least 1 (got 'lots')"),
        ),
        (
            {"ADAPTER_MAX_CONNECTIONS": "none"},
            Problem("ADAPTER_MAX_CONNECTIONS", "must be a whole number, at least 1 (got 'none')"),
        ),
    ],
)
def test_a_bad_variable_is_blamed_once_and_alone(environ: dict[str, str], problem: Problem) -> None:
    with pytest.raises(ConfigError) as raised:
        load_settings({**GOOD, **environ})
    assert raised.value.problems == (problem,)


@pytest.mark.parametrize(
    ("public_url", "port", "named"),
    [
        ("http://127.0.0.1:9090/", "8080", 9090),
        ("http://127.4.5.6/a2a", "8080", 80),
        ("https://[::1]/", "8443", 443),
        ("http://LocalHost.:8081/", None, 8081),
    ],
)
def test_a_card_naming_this_machine_on_another_port_is_doubted(
    public_url: str, port: str | None, named: int
) -> None:
    environ = {**GOOD, "ADAPTER_PUBLIC_URL": public_url}
    if port is not None:
        environ["ADAPTER_PORT"] = port
    [doubt] = doubts(load_settings(environ), environ)
    listening = port or "8080"
    assert str(doubt) == (
        f"ADAPTER_PUBLIC_URL: names port {named} on this machine, but the adapter listens on "
        f"ADAPTER_PORT {listening}: a client that reads the card will dial a port nothing "
        "serves (unless a port-forward leads there)"
    )


@pytest.mark.parametrize(
    ("public_url", "port"),
    [
        ("http://127.0.0.1:8080/", "8080"),
        ("http://localhost/", "80"),
        ("https://[::1]/", "443"),
        ("http://127.0.0.1:9090/", "0"),  # the port is chosen at bind
        ("http://supply.agents.svc:80/a2a", "8080"),  # a Service's port maps to the pod's
        ("http://10.0.0.7:80/", "8080"),
    ],
)
def test_a_card_naming_the_port_served_or_another_machine_is_not_doubted(
    public_url: str, port: str
) -> None:
    environ = {**GOOD, "ADAPTER_PUBLIC_URL": public_url, "ADAPTER_PORT": port}
    assert doubts(load_settings(environ), environ) == ()


@pytest.mark.parametrize(
    "url",
    ["http://127.0.0.1:5678/webhook-test/supply", "https://n8n.example/sub/webhook-test/a/b"],
)
def test_n8ns_test_url_is_doubted_naming_the_production_one(url: str) -> None:
    environ = {**GOOD, "ADAPTER_WEBHOOK_URL": url}
    assert [str(doubt) for doubt in doubts(load_settings(environ), environ)] == [
        "ADAPTER_WEBHOOK_URL: is n8n's test URL (/webhook-test/), which answers one run, and "
        "only while the editor waits for it ('Execute workflow'): publish the workflow and "
        "use its Production URL (/webhook/...)"
    ]
    production = {**GOOD, "ADAPTER_WEBHOOK_URL": "http://127.0.0.1:5678/webhook/webhook-test"}
    assert doubts(load_settings(production), production) == ()


def test_an_unknown_adapter_variable_is_doubted_with_the_one_meant() -> None:
    environ = {
        **GOOD,
        "ADAPTER_WEBHOK_TIMEOUT": "5",
        "ADAPTER_FLAVOUR": "x",
        "OTHER_WEBHOK_TIMEOUT": "5",  # not ours: not a word
    }
    assert [str(doubt) for doubt in doubts(load_settings(environ), environ)] == [
        "ADAPTER_FLAVOUR: is no variable of the adapter's, and is ignored; `n8n-a2a --help` "
        "lists them",
        "ADAPTER_WEBHOK_TIMEOUT: is no variable of the adapter's, and is ignored (did you mean "
        "ADAPTER_WEBHOOK_TIMEOUT?); `n8n-a2a --help` lists them",
    ]
    # Every variable the adapter reads is known, a retired one too (that one is refused).
    every = {variable.name: "1" for variable in VARIABLES}
    assert not [d for d in doubts(load_settings(GOOD), every) if "no variable" in d.what]


def test_the_memory_budget_and_its_wait_are_read_and_fit_the_other_bounds() -> None:
    settings = load_settings(
        {**GOOD, "ADAPTER_MEMORY_BUDGET": "67108864", "ADAPTER_MEMORY_WAIT": "3"}
    )
    assert (settings.memory_budget, settings.memory_wait) == (64 * 1024 * 1024, 3.0)
    # Unset, the wait is the default or half the read timeout, whichever is less.
    assert load_settings(GOOD).memory_wait == 10.0
    short = load_settings({**GOOD, "ADAPTER_REQUEST_READ_TIMEOUT": "5"})
    assert short.memory_wait == 2.5
    with pytest.raises(ConfigError) as refused:
        load_settings(
            {
                **GOOD,
                "ADAPTER_MEMORY_BUDGET": "1048576",
                "ADAPTER_MAX_BODY_BYTES": "2097152",
                "ADAPTER_MEMORY_WAIT": "30",
            }
        )
    said = str(refused.value)
    assert "ADAPTER_MEMORY_BUDGET: must be at least ADAPTER_MAX_BODY_BYTES (2097152)" in said
    assert "ADAPTER_MEMORY_WAIT: must be less than ADAPTER_REQUEST_READ_TIMEOUT (30)" in said
