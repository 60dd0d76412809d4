"""A wire codec: a JSON-RPC method and its params into a version-neutral Operation, and a
Task, a task event or an A2AError back into one version's JSON.

A codec is one version's facts (facts.py: its spellings, what serving it means) and its
shapes (shapes.py, as v1.py and v03.py lay them out: parts, push configs,
discriminators); a method's params are read by its row of the operations table
(operations.py), and the rules both versions share for writing are here. The executor
and the task table never see either.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import assert_never

from .errors import A2AError, ErrorCode, quoted
from .facts import VersionFacts
from .media import TEXT_ONLY, Modes
from .model import (
    Artifact,
    ArtifactUpdate,
    JSONObject,
    Message,
    Operation,
    StatusUpdate,
    Task,
    TaskEvent,
    TaskPage,
    TaskStatus,
)
from .operations import METHODS, Method, Reading
from .params import Params
from .push import PushConfig, PushConfigPage
from .shapes import Shapes


# eq=False: a codec is one of two, known by identity (and hashable, which facts are not).
@dataclass(frozen=True, slots=True, eq=False)
class Codec:
    """One protocol version's wire: its facts and its shapes, with the rules both share."""

    facts: VersionFacts
    shapes: Shapes

    def decode(self, method: str, params: JSONObject, modes: Modes = TEXT_ONLY) -> Operation:
        """The operation a request asks for; A2AError for anything this agent cannot do.
        `modes`: the media types the agent accepts and answers (the card's)."""
        found = self.method(method)
        if found is None:
            raise A2AError(
                ErrorCode.METHOD_NOT_FOUND,
                f"Method not found: {quoted(method)} is not an A2A {self.facts.version} method"
                f"{self.facts.other_version_hint}",
            )
        return found.decode(Reading(self.facts, self.shapes, modes), Params(params))

    def method(self, name: str) -> Method | None:
        """The method this version calls `name` (its row of the operations table); None for
        no method of this version's."""
        found = self.facts.methods.get(name)
        return None if found is None else METHODS[found]

    def refuses_as_event(self, method: str) -> bool:
        """Whether a request of `method` refused before its stream opens (for its params)
        is answered with the stream's one error event, not a plain JSON-RPC error: for the
        stream methods of a version whose clients read a code only from an event (v0.3)."""
        found = self.method(method)
        stream = found is not None and found.streams
        return stream and not self.facts.refuses_streams_plainly

    def encode_send_result(self, task: Task) -> JSONObject:
        return self.shapes.union_member("task", self.encode_task(task))

    def encode_stream_event(self, item: Task | TaskEvent) -> JSONObject:
        """The `result` of one stream response (an SSE event): the Task, or one of its events.
        A v1.0 push receiver gets the same."""
        match item:
            case Task():
                return self.shapes.union_member("task", self.encode_task(item))
            case StatusUpdate():
                return self.shapes.union_member("statusUpdate", self._encode_status_update(item))
            case ArtifactUpdate():
                update = self._encode_artifact_update(item)
                return self.shapes.union_member("artifactUpdate", update)
            case _:
                assert_never(item)

    def encode_task(self, task: Task) -> JSONObject:
        document: JSONObject = {
            "id": task.id,
            "contextId": task.context_id,
            "status": self._encode_status(task.status),
        }
        if task.artifacts:
            document["artifacts"] = [self._encode_artifact(a) for a in task.artifacts]
        if task.history:
            # Empty only when historyLength 0 asked for none: A2A 1.0.1 §3.2.4, "the history
            # field SHOULD be omitted" (ProtoJSON omits an empty list anyway). v0.3's Task
            # has it optional too, and no v0.3 client needs it there (a2a-sdk 0.3.26's model
            # defaults it to None, @a2a-js/sdk 1.3.0's legacy transport reads none as []).
            document["history"] = [self._encode_message(m) for m in task.history]
        if task.metadata:
            document["metadata"] = task.metadata
        if self.facts.generation:
            document["generation"] = _int64(task.generation)
        return self.shapes.with_kind(document, "task")

    def encode_page(self, page: TaskPage) -> JSONObject:
        return {
            "tasks": [self.encode_task(task) for task in page.tasks],
            "nextPageToken": page.next_page_token,
            "pageSize": page.page_size,
            "totalSize": page.total_size,
        }

    def encode_push_config(self, config: PushConfig) -> JSONObject:
        return self.shapes.encode_push_config(config)

    def encode_push_page(self, page: PushConfigPage) -> object:
        return self.shapes.encode_push_page(page)

    def encode_push_deleted(self) -> object:
        return self.shapes.encode_push_deleted()

    def encode_error(self, error: A2AError) -> JSONObject:
        document: JSONObject = {"code": int(error.code), "message": error.message}
        if self.facts.error_info and error.code.is_a2a:
            info: JSONObject = {
                "@type": "type.googleapis.com/google.rpc.ErrorInfo",
                "reason": error.code.name,
                "domain": "a2a-protocol.org",
            }
            if error.metadata:
                info["metadata"] = error.metadata
            document["data"] = [info]
        return document

    def _encode_status(self, status: TaskStatus) -> JSONObject:
        document: JSONObject = {
            "state": self.facts.states[status.state],
            "timestamp": _timestamp(status.timestamp),
        }
        if status.message is not None:
            document["message"] = self._encode_message(status.message)
        return document

    def _encode_status_update(self, update: StatusUpdate) -> JSONObject:
        document: JSONObject = {
            "taskId": update.task_id,
            "contextId": update.context_id,
            "status": self._encode_status(update.status),
        }
        if update.metadata:
            # Clients that build the task from the stream (a2a-sdk 0.3) merge this into
            # the task's metadata: so the streamed task carries its outcome too.
            document["metadata"] = update.metadata
        if self.facts.status_final:
            # The SDKs' v0.3 models refuse an update without it: true on the last event,
            # after which the stream closes.
            document["final"] = update.final
        if self.facts.generation:
            document["generation"] = _int64(update.generation)
        return self.shapes.with_kind(document, "status-update")

    def _encode_artifact_update(self, update: ArtifactUpdate) -> JSONObject:
        document: JSONObject = {
            "taskId": update.task_id,
            "contextId": update.context_id,
            "artifact": self._encode_artifact(update.artifact),
            "append": update.append,
            "lastChunk": update.last_chunk,
        }
        if self.facts.generation:
            document["generation"] = _int64(update.generation)
        return self.shapes.with_kind(document, "artifact-update")

    def _encode_message(self, message: Message) -> JSONObject:
        document: JSONObject = {
            "messageId": message.message_id,
            "role": self.facts.roles[message.role],
            "parts": [self.shapes.encode_part(p) for p in message.parts],
        }
        if message.task_id is not None:
            document["taskId"] = message.task_id
        if message.context_id is not None:
            document["contextId"] = message.context_id
        if message.metadata:
            document["metadata"] = message.metadata
        return self.shapes.with_kind(document, "message")

    def _encode_artifact(self, artifact: Artifact) -> JSONObject:
        return {
            "artifactId": artifact.artifact_id,
            "name": artifact.name,
            "parts": [self.shapes.encode_part(p) for p in artifact.parts],
        }


def _int64(value: int) -> str:
    """An int64 as ProtoJSON writes it (the spec's JSON, ADR-001): a decimal string."""
    return str(value)


def _timestamp(moment: datetime) -> str:
    """ISO 8601 in UTC with milliseconds and a Z, as the SDKs write it. By %-format, not
    strftime: every answer writes one, and strftime costs twice (glibc's, and its tzset)."""
    return "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ" % (  # noqa: UP031 - the cheapest here
        moment.year,
        moment.month,
        moment.day,
        moment.hour,
        moment.minute,
        moment.second,
        moment.microsecond // 1000,
    )
