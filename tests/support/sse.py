"""The adapter's SSE streams over real HTTP: opening one, reading it event by event, and
looking at the events."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import httpx
import trio


class Stream:
    """An SSE response read event by event: each `data:` a JSON-RPC response."""

    def __init__(self, response: httpx.Response) -> None:
        self.response = response
        self.comments = 0
        self._lines = response.aiter_lines()

    async def next(self) -> dict[str, Any] | None:
        """The next event's JSON, None when the server closed the stream."""
        data: list[str] = []
        async for line in self._lines:
            if line.startswith(":"):
                self.comments += 1
            elif line.startswith("data: "):
                data.append(line.removeprefix("data: "))
            elif line == "" and data:
                event: dict[str, Any] = json.loads("\n".join(data))
                return event
        return None

    async def rest(self) -> list[dict[str, Any]]:
        events = []
        with trio.fail_after(10):
            while (event := await self.next()) is not None:
                events.append(event)
        return events


@asynccontextmanager
async def open_stream(
    adapter: str, document: dict[str, Any], headers: dict[str, str] | None = None
) -> AsyncIterator[Stream]:
    """POST `document` to the adapter; its answer must be an event stream."""
    async with (
        httpx.AsyncClient(timeout=10) as client,
        client.stream("POST", adapter, json=document, headers=headers or {}) as response,
    ):
        assert response.status_code == 200
        assert response.headers["content-type"] == "text/event-stream"
        yield Stream(response)


def streaming(document: dict[str, Any]) -> dict[str, Any]:
    """The streaming twin of a send document (v1.0 or v0.3)."""
    method = {"SendMessage": "SendStreamingMessage", "message/send": "message/stream"}
    return {**document, "method": method[document["method"]]}


def results(events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [event["result"] for event in events]


def kinds_v1(events: list[dict[str, Any]]) -> list[str]:
    """Each v1.0 event as its member and state: `statusUpdate TASK_STATE_WORKING`."""
    shown = []
    for result in results(events):
        [(member, body)] = result.items()
        state = body.get("status", {}).get("state", "")
        shown.append(f"{member} {state}".strip())
    return shown
