"""What a streamed answer's chunks have relayed so far, per task: so that a subscriber who
joins mid-answer begins with it (the task as the store holds it, plus this), then hears
the chunks that follow. Kept from the first chunk of a turn until the task's next move,
which ends the turn and brings the whole answer. Pure: no I/O.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

from ..protocol.model import Artifact, ArtifactUpdate, Part, Task


@dataclass(slots=True)
class _SoFar:
    last: ArtifactUpdate  # the last chunk: its numbers are the snapshot's
    pieces: list[str] = field(default_factory=list)


class RelayedSoFar:
    """The chunks relayed in this process, joined, by task."""

    def __init__(self) -> None:
        self._tasks: dict[str, _SoFar] = {}

    def __bool__(self) -> bool:
        return bool(self._tasks)

    def add(self, chunk: ArtifactUpdate) -> None:
        """One more chunk: the first of an artifact begins it again."""
        text = "".join(part.text for part in chunk.artifact.parts)
        so_far = self._tasks.get(chunk.task_id)
        same = so_far is not None and so_far.last.artifact.artifact_id == chunk.artifact.artifact_id
        if so_far is None or not (chunk.append and same):
            self._tasks[chunk.task_id] = _SoFar(chunk, [text])
            return
        so_far.last = chunk
        so_far.pieces.append(text)

    def drop(self, task_id: str) -> None:
        """The task moved: its turn's chunks are past (its end has the whole answer)."""
        self._tasks.pop(task_id, None)

    def get(self, task_id: str) -> ArtifactUpdate | None:
        """Every chunk of the task's answer so far as one, numbered as the last one."""
        so_far = self._tasks.get(task_id)
        if so_far is None:
            return None
        joined = "".join(so_far.pieces)
        so_far.pieces = [joined]
        artifact = Artifact(
            so_far.last.artifact.artifact_id, so_far.last.artifact.name, (Part(joined),)
        )
        return replace(so_far.last, artifact=artifact, append=False)


def joined(task: Task, so_far: ArtifactUpdate | None) -> Task:
    """The task as a subscriber who joins mid-answer sees it first: with the answer so far
    among its artifacts, at the generation of the last chunk it holds (the chunks of its
    turn only: numbered as its next move)."""
    if so_far is None or so_far.sequence != task.version + 1:
        return task
    relayed = so_far.generation - task.version - 1
    return replace(task, artifacts=(*task.artifacts, so_far.artifact), relayed=relayed)
