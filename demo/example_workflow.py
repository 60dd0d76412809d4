"""A small example workflow that keeps the n8n contract, for the demo (no n8n needed).

It answers the `check_availability` skill from a small stock table the way an n8n
workflow with a Webhook node and a Respond to Webhook node would, and it fails the
ways n8n fails: without an X-Subject-Token its "token exchange" refuses and the
Respond node never runs (HTTP 200, empty body).
"""

from __future__ import annotations

import json
import re
from typing import Any

import trio
from hypercorn.config import Config
from hypercorn.trio import serve
from quart import Response, request
from quart_trio import QuartTrio

STOCK = {"flour": 12, "sugar": 0, "yeast": 40}
APPROVAL_ABOVE = 10
_ASKED = re.compile(r"(\d+)\s+(?:pallets?|boxes|crates)?\s*(?:of\s+)?([a-z]+)", re.IGNORECASE)


def check_availability(text: str, context_id: str) -> dict[str, Any] | None:
    """The workflow's logic: the contract reply, or None where n8n would stay silent."""
    if "report" in text.lower():
        return {"result": {"items": len(STOCK)}}  # a node that drifted from the contract
    asked = _ASKED.search(text)
    if asked is None:
        items = ", ".join(f"{name}: {count}" for name, count in STOCK.items())
        return {"answer": f"In stock ({items}).", "escalate": False}
    quantity, item = int(asked.group(1)), asked.group(2).lower()
    if item not in STOCK:
        return {"answer": f"We do not stock {item}.", "escalate": False}
    if quantity > APPROVAL_ABOVE:
        return {
            "answer": f"{quantity} pallets of {item} is over {APPROVAL_ABOVE}: "
            "a person must approve.",
            "escalate": True,
        }
    verdict = "Yes" if STOCK[item] >= quantity else "No"
    return {
        "answer": f"{verdict}: {STOCK[item]} pallets of {item} in stock "
        f"(conversation {context_id[:8]}).",
        "escalate": False,
    }


app = QuartTrio(__name__)


@app.post("/webhook/check-availability")
async def webhook() -> Response:
    # As in n8n: the Respond to Webhook node answers, or nothing does (200, empty body).
    request_body = await request.get_json()
    reply = None
    if request.headers.get("X-Subject-Token"):  # the workflow's token exchange
        reply = check_availability(request_body["text"], request_body["contextId"])
    content = "" if reply is None else json.dumps(reply)
    return Response(content, content_type="application/json")


async def serve_workflow(port: int, *, task_status: Any = trio.TASK_STATUS_IGNORED) -> None:
    config = Config()
    config.bind = [f"127.0.0.1:{port}"]
    config.accesslog = None
    config.errorlog = None
    await serve(app, config, task_status=task_status)
