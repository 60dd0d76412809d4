"""Test doubles for push delivery: a resolver from a table, a resolver that never answers,
tasks moved by hand with their events, and a sender that answers from a script."""

from __future__ import annotations

import socket
import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import trio

from n8n_a2a.core.changes import Change
from n8n_a2a.protocol.addresses import IPAddress
from n8n_a2a.protocol.model import (
    Artifact,
    Message,
    Part,
    Role,
    StatusUpdate,
    Task,
    TaskState,
    TaskStatus,
)
from n8n_a2a.push.attempts import Answer, Attempt
from n8n_a2a.store.fanout import LocalTaskEvents
from n8n_a2a.store.memory import MemoryPushConfigStore, MemoryTaskStore
from tests.support.tasks import MOMENT


class Resolver:
    """A resolver that answers from a table and notes what it was asked: awaited (a
    guard.Resolve), or `lookup` in a thread (a lookups.BlockingLookup)."""

    def __init__(self, table: Mapping[str, Sequence[IPAddress]]) -> None:
        self.table = table
        self.asked: list[tuple[str, int]] = []

    def lookup(self, host: str, port: int) -> Sequence[IPAddress]:
        self.asked.append((host, port))
        if host not in self.table:
            raise OSError(f"[Errno -2] Name or service not known: {host}")
        return self.table[host]

    async def __call__(self, host: str, port: int) -> Sequence[IPAddress]:
        return self.lookup(host, port)


class Blackhole:
    """A blocking lookup whose names under `blackhole.test` get no answer until `end()`
    (then it gives up, as a resolver does); any other name goes to `elsewhere`. Runs in
    threads: as a lookups.BlockingLookup, or in place of socket.getaddrinfo."""

    def __init__(self, elsewhere: Callable[..., Any]) -> None:
        self._elsewhere = elsewhere
        self._ended = threading.Event()

    def __call__(self, host: str | bytes, port: int, *args: Any, **kwargs: Any) -> Any:
        name = host.decode() if isinstance(host, bytes) else host  # trio's are IDNA bytes
        # trio first asks for a numeric address only, in the trio thread: that answers at once.
        numeric = kwargs.get("flags", args[3] if len(args) > 3 else 0) & socket.AI_NUMERICHOST
        if numeric or not name.endswith(".blackhole.test"):
            return self._elsewhere(host, port, *args, **kwargs)
        self._ended.wait()
        raise OSError(f"[Errno -3] Temporary failure in name resolution: {name}")

    def end(self) -> None:
        self._ended.set()


class Board:
    """Tasks in a memory store, moved by hand, their events published as the executor does."""

    def __init__(self) -> None:
        self.store = MemoryTaskStore()
        self.events = LocalTaskEvents()

    async def new(self, task_id: str) -> Task:
        user = Message(f"m-{task_id}", Role.USER, (Part("hi"),), task_id, "c-1")
        task = Task(task_id, "c-1", TaskStatus(TaskState.SUBMITTED, MOMENT), history=(user,))
        await self.store.create(task)
        return task

    async def move(self, task_id: str, state: TaskState, *, answer: str | None = None) -> Task:
        """Move the task; with an answer, its artifact comes first (two events), as at the end."""
        task = await self.store.get(task_id)
        reply = Message(f"r-{task.version}", Role.AGENT, (Part(answer or state.value),), task_id)
        artifacts = (Artifact("a-1", "answer", (Part(answer),)),) if answer else ()
        change = Change(state, MOMENT, message=reply, artifacts=artifacts)
        moved = await self.store.move(task_id, task.version, change)
        assert moved is not None
        for event in moved.events:
            self.events.publish(event)
        return moved.task

    def announce(self, task_id: str, state: TaskState, sequence: int) -> None:
        """Publish a status update the store never made: any state, in any order (the
        deliverer of a v1.0 config reads nothing but the events)."""
        self.events.publish(StatusUpdate(task_id, "c-1", TaskStatus(state, MOMENT), sequence))


@dataclass
class Post:
    url: str
    body: bytes
    headers: dict[str, str]
    at: float


@dataclass
class ScriptedSender:
    """Answers each POST with the next of `answers` (DELIVERED once they run out); a URL in
    `holding` is not answered until `release`."""

    answers: list[Answer] = field(default_factory=list)
    holding: set[str] = field(default_factory=set)
    posts: list[Post] = field(default_factory=list)
    _released: trio.Event = field(default_factory=trio.Event)

    def release(self) -> None:
        self.holding.clear()
        self._released.set()

    async def post(self, url: str, body: bytes, headers: dict[str, str]) -> Attempt:
        self.posts.append(Post(url, body, headers, trio.current_time()))
        if url in self.holding:
            await self._released.wait()
        answer = self.answers.pop(0) if self.answers else Answer.DELIVERED
        return Attempt(answer, f"scripted {answer.value}")

    def to(self, url: str) -> list[Post]:
        return [post for post in self.posts if post.url == url]


class WatchedConfigs(MemoryPushConfigStore):
    """The memory store, noting which tasks it was told have ended."""

    def __init__(self) -> None:
        super().__init__()
        self.ended: list[str] = []

    async def task_ended(self, task_id: str) -> None:
        self.ended.append(task_id)
        await super().task_ended(task_id)
