"""`n8n-a2a --probe`: whether n8n has the workflow's webhook registered, without running it.

n8n answers a CORS preflight (OPTIONS, with `Origin` and `Access-Control-Request-Method:
POST`) on a production webhook path itself, from its table of registered webhooks: once
a published workflow's POST webhook is registered there, the answer allows POST
(`Access-Control-Allow-Methods`); on a path no published workflow has, n8n 2.41.1 answers
500 (its lookup of the path throws; an HTML "Internal Server Error"), never POST. No
workflow runs for a preflight, so this is a probe that cannot place an order twice (n8n/run
waits for each webhook this way). It knows n8n only: another server may answer
preflights otherwise, and it says so. What it cannot see is whether the workflow answers
the contract: only a message does (the task's outcome says).
"""

from __future__ import annotations

import ssl
from dataclasses import dataclass

import httpx

#: The Origin the preflight names: any will do, n8n allows every origin by default.
ORIGIN = "http://127.0.0.1"
#: What n8n answers a preflight on a path without a webhook (2.41.1: 500; a 404 as well).
_NOT_REGISTERED = frozenset({404, 500})


@dataclass(frozen=True, slots=True)
class Probed:
    """What the probe found: whether a POST webhook is registered, and the words."""

    registered: bool
    finding: str


def judge(status: int, allowed_methods: str) -> Probed:
    """What a preflight's answer says of the webhook (pure: the table of n8n's answers)."""
    if "POST" in allowed_methods.upper().replace(" ", "").split(","):
        return Probed(
            True,
            f"n8n has a POST webhook registered there (a CORS preflight answered {status}, "
            "POST allowed): its workflow is published. No workflow ran.",
        )
    if status in _NOT_REGISTERED:
        return Probed(
            False,
            f"n8n has no POST webhook registered there (a CORS preflight answered {status}, "
            "as n8n does on a path it has no webhook for): publish the workflow, and use its "
            "Production URL (/webhook/...), path and all.",
        )
    return Probed(
        False,
        f"a CORS preflight answered HTTP {status} without allowing POST: n8n answers one on a "
        "registered webhook with POST allowed, so this is not one (or not n8n: another "
        "server may not answer preflights even where it takes a POST).",
    )


async def probe(url: str, *, ca_bundle: str | None, patience: float) -> Probed:
    """Send the preflight to the webhook (redirects not followed) and judge its answer."""
    headers = {"Origin": ORIGIN, "Access-Control-Request-Method": "POST"}
    # The CA file the calls trust (ADAPTER_CA_BUNDLE), as webhook/client.py's TLS does.
    verify = ssl.create_default_context(cafile=ca_bundle)
    try:
        async with httpx.AsyncClient(verify=verify, timeout=patience, trust_env=False) as client:
            answer = await client.options(url, headers=headers)
    except httpx.HTTPError as failed:
        return Probed(False, f"could not reach it: {type(failed).__name__}: {failed}")
    return judge(answer.status_code, answer.headers.get("access-control-allow-methods", ""))
