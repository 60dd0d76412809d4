"""The table of variables: one per setting, its defaults the settings', the docs' in step."""

from __future__ import annotations

import re
from dataclasses import fields
from pathlib import Path

from n8n_a2a.config import VARIABLES, Settings, load_settings
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


def test_an_unset_variable_loads_as_its_default() -> None:
    required = {v.name for v in VARIABLES if v.required}
    settings = load_settings({k: v for k, v in GOOD.items() if k in required})
    for variable in VARIABLES:
        if not variable.required:
            assert getattr(settings, variable.attribute) == variable.default, variable.name


def test_help_shows_the_defaults_as_a_person_would_write_them() -> None:
    shown = {v.name: v.shown_default for v in VARIABLES}
    assert shown["ADAPTER_AGENT_NAME"] is None
    assert (shown["ADAPTER_HOST"], shown["ADAPTER_PORT"]) == ("0.0.0.0", "8080")
    assert (shown["ADAPTER_WEBHOOK_TIMEOUT"], shown["ADAPTER_INPUT_TTL"]) == ("60", "86400")
    assert (shown["ADAPTER_MAX_BODY_BYTES"], shown["ADAPTER_REQUIRE_TOKEN"]) == ("1048576", "false")
    assert (shown["ADAPTER_LOG_LEVEL"], shown["ADAPTER_LOG_FORMAT"]) == ("INFO", "auto")
    assert shown["ADAPTER_MAX_CONNECTIONS"] == "twice the two call limits"
    unset = ("ADAPTER_SKILL_EXAMPLES", "ADAPTER_CA_BUNDLE", "ADAPTER_PUSH_ALLOW_HOSTS")
    assert [shown[name] for name in unset] == [None, None, None]


def test_the_docs_list_every_variable_and_whether_it_is_required() -> None:
    section = CONFIGURATION.read_text().split("## Every setting", 1)[1].split("\n## ", 1)[0]
    rows = re.findall(r"^\| `(ADAPTER_\w+)` \| ([^|]+) \|", section, re.MULTILINE)
    assert sorted(name for name, _ in rows) == sorted(v.name for v in VARIABLES)
    required = {name for name, column in rows if column.strip() == "yes"}
    assert required == {v.name for v in VARIABLES if v.required}
