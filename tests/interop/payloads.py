"""Real payloads through the adapter at its defaults, by every path a client reads a task.

A case is one payload (an answer, a reply file or an upload, tests/support/payloads.py)
sent by one path: a blocking send, a non-blocking send polled with GetTask, the same
listed with ListTasks (includeArtifacts), a streaming send, a subscription that joins
while the webhook is still writing its reply (the stub holds it halfway until the
subscription is in place), and a blocking send with an inline push config, whose
receiver here gets the payload too. Every client driver gets the cases as JSON and
reports each as the same document: the task's `state`, its `artifacts` (`{name, parts}`)
and `history` (`{role, parts}`) as it read them, each part as a shape with a digest
(`text`: `{kind, sha256, size, metadata, text}`, the text itself only when short;
`file`: `{kind, name, mediaType, sha256, size}`), and for a stream its `first` event
(`{kind, state, artifacts}`); or the `error` the case ended in.
"""

from __future__ import annotations

import base64
import re
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import trio

from n8n_a2a.protocol.push import AllowList
from tests.interop import matrix
from tests.support import payloads
from tests.support.adapter import AdapterFactory
from tests.support.payloads import Digest, KiB, MiB
from tests.support.push_receiver import PushReceiver
from tests.support.stub_webhook import StubWebhook

Result = dict[str, Any]

#: Every path, in the order a driver runs them.
PATHS = ("blocking", "poll", "list", "stream", "subscribe", "push")
#: The paths a caller's file travels in on: the sends (push's is a blocking send too).
UPLOAD_PATHS = ("blocking", "poll", "stream")
#: v0.3 has no ListTasks.
V03_PATHS = tuple(path for path in PATHS if path != "list")
#: The push config's token, which every delivery carries.
PUSH_TOKEN = "payloads-push-token"
#: A text part's text is reported as is up to this size (a marker is smaller).
SHORT_TEXT = 4096
TERMINAL = ("completed", "failed", "canceled", "rejected")


_NOUNS = {"answer": "answer", "file": "reply file", "upload": "upload"}


@dataclass(frozen=True)
class Payload:
    """What a case sends or asks for: `kind` answer, file (a reply file) or upload."""

    kind: str
    size: int

    @property
    def label(self) -> str:
        size = f"{self.size // MiB} MiB" if self.size >= MiB else f"{self.size // KiB} KiB"
        return f"{_NOUNS[self.kind]} {size}"

    def paths(self, version: str) -> tuple[str, ...]:
        every = PATHS if version == "1.0" else V03_PATHS
        return tuple(p for p in every if p in UPLOAD_PATHS) if self.kind == "upload" else every

    def text(self, path: str) -> str:
        held = path == "subscribe"
        if self.kind == "answer":
            return payloads.answer_verb(self.size, held=held)
        if self.kind == "file":
            return payloads.file_verb(self.size, held=held)
        return payloads.UPLOAD_VERB

    @property
    def upload(self) -> bytes:
        return payloads.file_bytes(self.size, "upload")

    @property
    def upload_name(self) -> str:
        return payloads.file_name(self.size, "upload")

    def artifacts(self) -> list[tuple[Any, ...]]:
        """The artifacts the caller must read, as `_artifacts` shows them."""
        if self.kind == "answer":
            return [("answer", _text(payloads.answer_text(self.size)))]
        if self.kind == "file":
            name = payloads.file_name(self.size)
            file = ("file", name, payloads.MEDIA_TYPE, Digest.of(payloads.file_bytes(self.size)))
            return [(name, file), ("answer", _text(f"Here is {name}."))]
        return [("answer", _text(payloads.upload_answer(self.upload_name, self.upload)))]


#: The sizes the full client matrix runs, and the largest, run once a path, version and binding.
SMALL = (
    Payload("answer", 200 * KiB),
    Payload("answer", 1 * MiB),
    Payload("file", 50 * KiB),
    Payload("file", 5 * MiB),
    Payload("upload", 5 * MiB),
)
LARGE = (Payload("file", 20 * MiB), Payload("upload", 20 * MiB))


@dataclass(frozen=True)
class Case:
    id: str
    path: str
    payload: Payload


def cases(payload_set: tuple[Payload, ...], path: str, version: str) -> list[Case]:
    return [
        Case(f"{path} {payload.label}", path, payload)
        for payload in payload_set
        if path in payload.paths(version)
    ]


def case_documents(cases: list[Case], folder: Path, receiver: PushReceiver | None) -> list[Result]:
    """The cases as a driver reads them; an upload's bytes in a file in `folder`."""
    documents = []
    for index, case in enumerate(cases):
        document: Result = {"id": case.id, "path": case.path, "text": case.payload.text(case.path)}
        if case.payload.kind == "upload":
            file = folder / case.payload.upload_name
            file.write_bytes(case.payload.upload)
            upload = {"file": str(file), "name": case.payload.upload_name}
            document["upload"] = {**upload, "mediaType": payloads.MEDIA_TYPE}
        if case.path == "push":
            assert receiver is not None, "a push case needs a receiver"
            document["push"] = {"url": f"{receiver.url}/{index}", "token": PUSH_TOKEN}
        documents.append(document)
    return documents


async def start_payload_adapter(stub: StubWebhook, start_adapter: AdapterFactory) -> str:
    """The adapter at its size defaults, taking and giving the payloads' files, pushing to
    receivers on 127.0.0.1."""
    modes = ("text/plain", payloads.MEDIA_TYPE)
    url: str = await start_adapter(
        stub.url,
        input_modes=modes,
        output_modes=modes,
        push_allow_hosts=AllowList.parse("127.0.0.1"),
        # Not a size bound: the call's deadline, a loaded machine's (the tests' is 5 s).
        webhook_timeout=60.0,
    )
    return url


#: A client driver: the case documents in, its report of them out.
Driver = Callable[[list[Result]], Awaitable[Result]]


async def check_whole(
    stub: StubWebhook,
    adapter: str,
    receiver: PushReceiver,
    folder: Path,
    path: str,
    payload_set: tuple[Payload, ...],
    client: tuple[str, str, Driver],
) -> None:
    """The cases of `payload_set` by `path` through `client` (its version, its binding as
    the metrics name it, its driver): each read whole, pushed whole, uploaded whole."""
    version, binding, drive = client
    cases_run = cases(payload_set, path, version)
    documents = case_documents(cases_run, folder, receiver)
    async with trio.open_nursery() as nursery:
        if path == "subscribe":
            release = release_once_subscribed
            nursery.start_soon(release, stub, adapter, binding, version, len(cases_run))
        result = await drive(documents)
        nursery.cancel_scope.cancel()
    check_results(cases_run, result, stub)
    await check_pushed(cases_run, receiver, version)


# Holding a reply until its subscriber is in place.


SUBSCRIBE_METHODS = {"1.0": "SubscribeToTask", "0.3": "tasks/resubscribe"}


async def release_once_subscribed(
    stub: StubWebhook, adapter: str, binding: str, version: str, count: int
) -> None:
    """For each of `count` held replies in turn: once the webhook has written half of it
    and the adapter has answered a subscription to it, let the webhook write the rest."""
    method = SUBSCRIBE_METHODS[version]
    for number in range(1, count + 1):
        with trio.fail_after(matrix.DRIVER_DEADLINE):
            await stub.wait_held(number)
            # The adapter counts a subscription once it is in place: read its metrics.
            while (await matrix.methods_called(adapter, binding))[method] < number:  # noqa: ASYNC110
                await trio.sleep(0.02)
        stub.release_payload()


# What a client must have read.


def _text(text: str) -> tuple[Any, ...]:
    return ("text", Digest.of(text.encode()))


def _part(shape: Result) -> tuple[Any, ...]:
    digest = Digest(shape["sha256"], shape["size"])
    if shape["kind"] == "text":
        return ("text", digest)
    return (shape["kind"], shape.get("name"), shape.get("mediaType"), digest)


def _artifacts(artifacts: list[Result]) -> list[tuple[Any, ...]]:
    return [(a["name"], *map(_part, a["parts"])) for a in artifacts]


def check_case(case: Case, result: Result, stub: StubWebhook) -> list[str]:
    """What is wrong with one case's result, each as a line; none when the client read the
    payload whole (and an upload reached the webhook whole, and is kept as its marker)."""
    if "error" in result:
        return [f"{case.id}: {result['error']}"]
    wrong = []
    if result["state"] != "completed":
        wrong.append(f"{case.id}: ended {result['state']}, not completed")
    read, expected = _artifacts(result["artifacts"]), case.payload.artifacts()
    if read != expected:
        wrong.append(f"{case.id}: read the artifacts {_shown(read)}, not {_shown(expected)}")
    if case.path == "subscribe":
        first = result["first"]
        if (first["kind"], first["state"], first["artifacts"]) != ("task", "working", 0):
            wrong.append(f"{case.id}: joined at {first}, not a working task with no artifact")
    if case.payload.kind == "upload":
        wrong += _check_upload(case, result, stub)
    return wrong


def _check_upload(case: Case, result: Result, stub: StubWebhook) -> list[str]:
    """The webhook got the file whole; the task's history keeps it as the marker of
    core/release.py, which the client reads as a text part with its metadata."""
    wrong = []
    sent = (case.payload.upload_name, Digest.of(case.payload.upload))
    got = [
        files
        for received in stub.received
        if (files := payloads.received_files(received.json)) and files[0][0] == sent[0]
    ]
    if got != [[sent]]:
        wrong.append(f"{case.id}: the webhook got {got}, not {[[sent]]}")
    users = [m["parts"] for m in result["history"] if m["role"] == "user"]
    facts = {
        "kind": "file",
        "name": sent[0],
        "mediaType": payloads.MEDIA_TYPE,
        "size": case.payload.size,
        "reason": "upload",
    }
    marker = [p for parts in users for p in parts if p["kind"] != "text" or p.get("metadata")]
    if len(marker) != 1 or marker[0]["kind"] != "text":
        return [*wrong, f"{case.id}: the history keeps the upload as {marker}, not its marker"]
    if (marker[0]["metadata"] or {}).get("released") != facts:
        wrong.append(f"{case.id}: the marker's metadata is {marker[0]['metadata']}, not {facts}")
    if sent[0] not in (marker[0].get("text") or ""):
        wrong.append(f"{case.id}: the marker's text {marker[0].get('text')!r} names no file")
    return wrong


def _shown(value: Any) -> str:
    """Artifacts as (name, part...) with each digest short."""
    if isinstance(value, Digest):
        return value.shown()
    if isinstance(value, (list, tuple)):
        inner = ", ".join(map(_shown, value))
        return f"[{inner}]" if isinstance(value, list) else f"({inner})"
    return str(value)


def check_results(cases: list[Case], result: Result, stub: StubWebhook) -> None:
    results = result["results"]
    assert [case.id for case in cases] == list(results), "a driver ran other cases"
    wrong = [line for case in cases for line in check_case(case, results[case.id], stub)]
    assert not wrong, "\n".join(wrong)


# What a push receiver got.


async def check_pushed(cases: list[Case], receiver: PushReceiver, version: str) -> None:
    """Each push case's receiver (its own path) got the task to its end, the payload whole."""
    wrong = []
    for index, case in enumerate(cases):
        if case.path != "push":
            continue
        path = f"/hook/{index}"
        with trio.fail_after(30):
            while not _pushed_terminal(_bodies(receiver, path), version):
                await receiver.wait_received(len(receiver.received) + 1)
        for delivery in receiver.received:
            if delivery.path == path and delivery.headers["x-a2a-notification-token"] != PUSH_TOKEN:
                wrong.append(f"{case.id}: a delivery without the config's token")
        artifacts = _pushed_artifacts(_bodies(receiver, path), version)
        read, expected = _artifacts(artifacts), case.payload.artifacts()
        if read != expected:
            wrong.append(f"{case.id}: pushed the artifacts {_shown(read)}, not {_shown(expected)}")
    assert not wrong, "\n".join(wrong)


def _bodies(receiver: PushReceiver, path: str) -> list[Any]:
    return [delivery.json for delivery in receiver.received if delivery.path == path]


def _state_of(status: Result) -> str:
    return str(status["state"]).removeprefix("TASK_STATE_").lower().replace("_", "-")


def _pushed_terminal(bodies: list[Any], version: str) -> bool:
    if version == "0.3":
        return any(_state_of(body["status"]) in TERMINAL for body in bodies)
    updates = [body["statusUpdate"] for body in bodies if "statusUpdate" in body]
    return any(_state_of(update["status"]) in TERMINAL for update in updates)


def _pushed_artifacts(bodies: list[Any], version: str) -> list[Result]:
    """The artifacts as a receiver reads them: v0.3 pushes the whole task (the last one
    counts), v1.0 each event (the artifact updates, put together)."""
    if version == "0.3":
        return [_wire_artifact(a) for a in bodies[-1].get("artifacts", [])]
    updates = [body["artifactUpdate"] for body in bodies if "artifactUpdate" in body]
    return [_wire_artifact(a) for a in joined_updates(updates)]


def joined_updates(updates: list[Result]) -> list[Result]:
    """Artifact updates (`{artifact, append}`, the artifact with its `artifactId`) put
    together as a reader does: by artifactId, an `append` one adding its parts to the
    artifact's, any other taking its place."""
    by_id: dict[str, Result] = {}
    for update in updates:
        artifact = update["artifact"]
        earlier = by_id.get(artifact["artifactId"])
        if update.get("append") and earlier is not None:
            artifact = {**earlier, "parts": [*earlier["parts"], *artifact["parts"]]}
        by_id[artifact["artifactId"]] = artifact
    return list(by_id.values())


def _wire_artifact(artifact: Result) -> Result:
    return {"name": artifact.get("name"), "parts": [_wire_part(p) for p in artifact["parts"]]}


def _wire_part(part: Result) -> Result:
    """A part as the wire carries it (v1.0 or v0.3), in the drivers' shape."""
    file = part.get("file") or {}
    content = part.get("raw", file.get("bytes"))
    if content is not None:
        named = {"name": part.get("filename", file.get("name")), "mediaType": _media(part, file)}
        return {"kind": "file", **named, **_digest(base64.b64decode(content))}
    if "text" in part:
        return text_shape(part["text"], part.get("metadata"))
    return {"kind": "other", "sha256": "", "size": 0, "shown": re.sub(r"\s+", " ", str(part))}


def _media(part: Result, file: Result) -> Any:
    return part.get("mediaType", file.get("mimeType"))


def _digest(data: bytes) -> Result:
    digest = Digest.of(data)
    return {"sha256": digest.sha256, "size": digest.size}


def text_shape(text: str, metadata: Any) -> Result:
    """A text part in the drivers' shape (the Python driver uses it too)."""
    short = {"text": text} if len(text) <= SHORT_TEXT else {}
    return {"kind": "text", **_digest(text.encode()), "metadata": metadata, **short}


def file_shape(name: str, media_type: str, data: bytes) -> Result:
    return {"kind": "file", "name": name, "mediaType": media_type, **_digest(data)}
