"""The comparison target: the same job done with the official a2a-sdk 1.3.0 server.

Starlette on uvicorn, the SDK's JSON-RPC and HTTP+JSON routes, its DefaultRequestHandler
(its v2) with InMemoryTaskStore, and an AgentExecutor that POSTs each message to the
webhook with httpx (one shared client, configured like n8n-a2a's: no connection limit,
64 kept alive, 60 s timeout) and completes the task with the answer as artifact
`answer`; a message's files go to the webhook as the contract's `files` (base64), and
the files the webhook answers come back as an artifact each, as n8n-a2a does. What a
developer would write following the SDK's own samples; used only by bench.py.
"""

from __future__ import annotations

import argparse
import base64
import json

import httpx

# uvicorn and starlette are in the bench venv (a2a-sdk[http-server]), not in the project's
# dev venv that type-checks this file: hence the ignores, which go unused in the former.
import uvicorn  # type: ignore[import-not-found, unused-ignore]
from a2a.helpers.proto_helpers import new_task_from_user_message, new_text_message
from a2a.server.agent_execution import AgentExecutor, RequestContext
from a2a.server.events import EventQueue
from a2a.server.request_handlers import DefaultRequestHandler
from a2a.server.routes import (
    create_agent_card_routes,
    create_jsonrpc_routes,
    create_rest_routes,
)
from a2a.server.tasks import InMemoryTaskStore, TaskUpdater
from a2a.types import AgentCapabilities, AgentCard, AgentInterface, AgentSkill, Part
from starlette.applications import (  # type: ignore[import-not-found, unused-ignore]
    Starlette,
)


class WebhookExecutor(AgentExecutor):
    """One webhook POST per message (its files beside the text); the reply's files become
    artifacts, and its `answer` completes the task."""

    def __init__(self, webhook_url: str, client: httpx.AsyncClient) -> None:
        self._url = webhook_url
        self._client = client

    async def execute(self, context: RequestContext, event_queue: EventQueue) -> None:
        message = context.message
        assert message is not None, "a send always carries a message"
        task = context.current_task or new_task_from_user_message(message)
        await event_queue.enqueue_event(task)
        updater = TaskUpdater(event_queue, task.id, task.context_id)
        document: dict[str, object] = {
            "text": context.get_user_input(),
            "taskId": task.id,
            "contextId": task.context_id,
            "messageId": message.message_id,
            "skillId": "bench",
        }
        files = [
            {
                "name": part.filename,
                "mediaType": part.media_type,
                "base64": base64.b64encode(part.raw).decode(),
            }
            for part in message.parts
            if part.HasField("raw")
        ]
        if files:
            document["files"] = files
        reply = await self._client.post(self._url, json=document)
        reply.raise_for_status()
        answered = json.loads(reply.content)
        for file in answered.get("files", []):
            raw = base64.b64decode(file["base64"])
            part = Part(raw=raw, media_type=file["mediaType"], filename=file["name"])
            await updater.add_artifact([part], name=file["name"])
        answer = str(answered["answer"])
        await updater.add_artifact([Part(text=answer)], name="answer")
        await updater.complete(
            new_text_message(answer, context_id=task.context_id, task_id=task.id)
        )

    async def cancel(self, context: RequestContext, event_queue: EventQueue) -> None:
        updater = TaskUpdater(event_queue, context.task_id or "", context.context_id or "")
        await updater.cancel()


def agent_card(url: str) -> AgentCard:
    """A card like n8n-a2a's: one skill, JSON-RPC then HTTP+JSON, streaming."""
    return AgentCard(
        name="Bench agent",
        description="The a2a-sdk server in front of the bench webhook.",
        version="1.0.0",
        supported_interfaces=[
            AgentInterface(url=url, protocol_binding="JSONRPC", protocol_version="1.0"),
            AgentInterface(url=url, protocol_binding="HTTP+JSON", protocol_version="1.0"),
        ],
        capabilities=AgentCapabilities(streaming=True, push_notifications=False),
        default_input_modes=["text/plain", "application/octet-stream"],
        default_output_modes=["text/plain", "application/octet-stream"],
        skills=[
            AgentSkill(
                id="bench", name="Bench", description="Answers ok.", tags=["bench"], examples=[]
            )
        ],
    )


def create_app(webhook_url: str, public_url: str) -> Starlette:
    """The Starlette app: the card route, the JSON-RPC route at `/`, the HTTP+JSON routes."""
    client = httpx.AsyncClient(
        timeout=httpx.Timeout(60.0),
        limits=httpx.Limits(max_connections=None, max_keepalive_connections=64),
        trust_env=False,
    )
    card = agent_card(public_url)
    handler = DefaultRequestHandler(
        agent_executor=WebhookExecutor(webhook_url, client),
        task_store=InMemoryTaskStore(),
        agent_card=card,
    )
    routes = [
        *create_agent_card_routes(card),
        *create_jsonrpc_routes(handler, rpc_url="/"),
        # Last: they end in a catch-all mount of `/{tenant}/...`.
        *create_rest_routes(handler),
    ]
    return Starlette(routes=routes)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--webhook-url", required=True)
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, required=True)
    arguments = parser.parse_args()
    public_url = f"http://{arguments.host}:{arguments.port}/"
    uvicorn.run(
        create_app(arguments.webhook_url, public_url),
        host=arguments.host,
        port=arguments.port,
        log_level="warning",
        access_log=False,  # n8n-a2a logs one line per task; the SDK server logs none
    )


if __name__ == "__main__":
    main()
