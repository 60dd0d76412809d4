"""Environments the configuration's tests, the command's and the server's start from."""

from __future__ import annotations

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

OIDC = {"ADAPTER_OIDC_ISSUER": "https://login.example/realms/a", "ADAPTER_OIDC_AUDIENCE": "supply"}
