"""One config's route as tables: a sequence of events in, the actions each one answers.

Each step is an event and what the route asks of its driver then, shown short: `post
<member> <state or text>` (read from the body sent), `read`, `wait <moment>`,
`attempted`, `<result> ...` for a report, `close`. The expected schedules come from
docs/push.md (0.25-0.5 s, then twice that, capped), never from the route's own code.
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from n8n_a2a.protocol.model import (
    Artifact,
    ArtifactUpdate,
    Part,
    StatusUpdate,
    Task,
    TaskEvent,
    TaskState,
    TaskStatus,
)
from n8n_a2a.protocol.push import PushAuthentication, PushConfig
from n8n_a2a.push.attempts import Answer, Attempt, RetrySchedule
from n8n_a2a.push.route import (
    Action,
    Attempted,
    Broke,
    Close,
    Deleted,
    Event,
    GraceOver,
    Heard,
    Post,
    Posted,
    ReadTask,
    Ready,
    Report,
    Route,
    TaskEnded,
    TaskRead,
    WaitUntil,
    headers,
)
from tests.support.tasks import MOMENT

URL = "https://receiver.example/hook"
Step = tuple[Event, list[str]]


def status(state: TaskState, sequence: int = 1) -> StatusUpdate:
    return StatusUpdate("t-1", "c-1", TaskStatus(state, MOMENT), sequence)


def chunk(text: str, artifact_id: str = "answer-1") -> ArtifactUpdate:
    piece = Artifact(artifact_id, "answer", (Part(text),))
    return ArtifactUpdate("t-1", "c-1", piece, 2, append=True, last_chunk=False)


def heard(event: TaskEvent, at: float = 0.0) -> Heard:
    return Heard(event, at)


def posted(answer: Answer, at: float = 0.0) -> Posted:
    return Posted(Attempt(answer, f"HTTP {answer.value}"), at)


WORKING, COMPLETED = TaskState.WORKING, TaskState.COMPLETED
DELIVERED, RETRY, REJECTED, BLOCKED = (
    Answer.DELIVERED,
    Answer.RETRY,
    Answer.REJECTED,
    Answer.BLOCKED,
)


def shown(action: Action) -> str:
    match action:
        case Post(body=body):
            document = json.loads(body)
            if document.get("kind") == "task":  # v0.3: the task as it stands
                return f"post task {document['status']['state']}"
            [(member, update)] = document.items()
            if member == "artifactUpdate":
                return f"post artifactUpdate {update['artifact']['parts'][0]['text']!r}"
            return f"post {member} {update['status']['state']}"
        case ReadTask(task_id=task_id):
            return f"read {task_id}"
        case WaitUntil(at=at):
            return f"wait {at:g}"
        case Attempted():
            return "attempted"
        case Report():
            return reported(action)
        case Close(task_over=task_over):
            return "close, task over" if task_over else "close"
    raise AssertionError(action)


def reported(report: Report) -> str:
    words = [report.result.value]
    if report.updates != 1:
        words.append(f"x{report.updates}")
    if report.attempts is not None:
        words.append(f"after {report.attempts}")
    if report.latency is not None:
        words.append(f"in {report.latency:g} s")
    if not report.logged:
        words.append("(not logged)")
    return " ".join(words)


def play(route: Route, steps: list[Step]) -> None:
    for number, (event, expected) in enumerate(steps, start=1):
        answered = [shown(action) for action in route.handle(event)]
        assert answered == expected, f"step {number}: {event}"


def v1_route(**options: object) -> Route:
    config = PushConfig("t-1", "c-1", URL, version="1.0")
    return Route(config, jitter=lambda: 0.5, **options)  # type: ignore[arg-type]


def v03_route() -> Route:
    return Route(PushConfig("t-1", "c-1", URL, version="0.3"), jitter=lambda: 0.5)


TABLES: dict[str, list[Step]] = {
    "an update is posted once the driver is free, and the route ends with its task": [
        (heard(status(WORKING), at=1.0), []),
        (Ready(1.0), ["post statusUpdate TASK_STATE_WORKING"]),
        (posted(DELIVERED, at=1.5), ["attempted", "delivered after 1 in 0.5 s"]),
        (TaskEnded(), []),
        (Ready(2.0), ["close, task over"]),
        (heard(status(WORKING)), []),  # over: nothing more
    ],
    "the terminal update ends the route once it is delivered": [
        (heard(status(WORKING)), []),
        (heard(status(COMPLETED, 2)), []),
        (Ready(0.0), ["post statusUpdate TASK_STATE_WORKING"]),
        (
            posted(DELIVERED),
            ["attempted", "delivered after 1 in 0 s", "post statusUpdate TASK_STATE_COMPLETED"],
        ),
        (posted(DELIVERED), ["attempted", "delivered after 1 in 0 s", "close, task over"]),
    ],
    "an interrupted task is not over: the route waits for the next turn": [
        (heard(status(TaskState.INPUT_REQUIRED)), []),
        (Ready(0.0), ["post statusUpdate TASK_STATE_INPUT_REQUIRED"]),
        (posted(DELIVERED), ["attempted", "delivered after 1 in 0 s"]),
        (Ready(9.0), []),
    ],
    "a task that ended before anything came closes at once": [
        (TaskEnded(), []),
        (Ready(0.0), ["close, task over"]),
    ],
    "a retry waits 0.25-0.5 s, then twice that, and gives up after the last attempt": [
        (heard(status(WORKING)), []),
        (heard(status(COMPLETED, 2)), []),
        (Ready(10.0), ["post statusUpdate TASK_STATE_WORKING"]),
        (posted(RETRY, at=10.0), ["attempted", "wait 10.375"]),
        (Ready(10.2), ["wait 10.375"]),  # woken early: the wait goes on
        (Ready(10.375), ["post statusUpdate TASK_STATE_WORKING"]),
        (posted(RETRY, at=11.0), ["attempted", "wait 11.75"]),
        (Ready(11.75), ["post statusUpdate TASK_STATE_WORKING"]),
        (
            posted(RETRY, at=12.0),
            ["attempted", "failed after 3", "post statusUpdate TASK_STATE_COMPLETED"],
        ),
        (
            posted(DELIVERED, at=12.5),
            ["attempted", "delivered after 1 in 12.5 s", "close, task over"],
        ),
    ],
    "a refusal ends that update's delivery at once, and the next one goes": [
        (heard(status(WORKING)), []),
        (heard(status(COMPLETED, 2)), []),
        (Ready(0.0), ["post statusUpdate TASK_STATE_WORKING"]),
        (
            posted(REJECTED),
            ["attempted", "rejected after 1", "post statusUpdate TASK_STATE_COMPLETED"],
        ),
        (posted(BLOCKED), ["blocked after 0", "close, task over"]),  # never attempted
    ],
    "a stuck receiver: four queued behind the one under way, superseded statuses go": [
        (heard(status(WORKING, 1)), []),
        (Ready(0.0), ["post statusUpdate TASK_STATE_WORKING"]),
        (heard(status(TaskState.INPUT_REQUIRED, 2)), []),
        (heard(status(WORKING, 3)), []),
        (heard(status(TaskState.INPUT_REQUIRED, 4)), []),
        (heard(status(WORKING, 5)), []),
        (heard(status(TaskState.INPUT_REQUIRED, 6)), ["coalesced (not logged)"]),
        (heard(status(COMPLETED, 7)), ["coalesced (not logged)"]),
        (GraceOver(), ["undelivered x5", "close"]),
    ],
    "chunks go one per 0.25 s, merged meanwhile": [
        (heard(chunk("one ")), []),
        (Ready(0.0), ["post artifactUpdate 'one '"]),
        (posted(DELIVERED, at=0.05), ["attempted", "delivered after 1 in 0.05 s"]),
        (heard(chunk("two "), at=0.1), []),
        (Ready(0.1), ["wait 0.25"]),
        (heard(chunk("three "), at=0.2), ["coalesced (not logged)"]),  # merged into two
        (heard(status(COMPLETED, 3), at=0.2), []),
        (Ready(0.25), ["post artifactUpdate 'two three '"]),
        (
            posted(DELIVERED, at=0.3),
            ["attempted", "delivered after 1 in 0.2 s", "post statusUpdate TASK_STATE_COMPLETED"],
        ),
    ],
    "a deleted config gets nothing more, not even what is queued": [
        (heard(status(WORKING)), []),
        (Ready(0.0), ["post statusUpdate TASK_STATE_WORKING"]),
        (heard(status(COMPLETED, 2)), []),
        (Deleted(), ["canceled x2 (not logged)", "close"]),
        (posted(DELIVERED), []),
        (Ready(1.0), []),
    ],
    "a config deleted with nothing queued just closes": [
        (Deleted(), ["close"]),
    ],
    "the shutdown's grace over with nothing queued just closes": [
        (heard(status(TaskState.INPUT_REQUIRED)), []),
        (Ready(0.0), ["post statusUpdate TASK_STATE_INPUT_REQUIRED"]),
        (posted(DELIVERED), ["attempted", "delivered after 1 in 0 s"]),
        (GraceOver(), ["close"]),
    ],
    "a step broken by a bug loses that update and the next one goes": [
        (heard(status(WORKING)), []),
        (heard(status(COMPLETED, 2)), []),
        (Ready(0.0), ["post statusUpdate TASK_STATE_WORKING"]),
        (Broke(1.0), ["failed (not logged)", "post statusUpdate TASK_STATE_COMPLETED"]),
        (Broke(2.0), ["failed (not logged)", "close, task over"]),
    ],
    "answers that come at the wrong time move nothing": [
        (posted(DELIVERED), []),  # nothing was posted
        (TaskRead(None, 0.0), []),  # nothing was read
        (heard(status(WORKING)), []),
        (Ready(0.0), ["post statusUpdate TASK_STATE_WORKING"]),
        (Ready(0.1), []),  # the POST's answer moves it on
        (TaskRead(None, 0.2), []),
        (posted(DELIVERED, at=0.5), ["attempted", "delivered after 1 in 0.5 s"]),
    ],
}


@pytest.mark.parametrize("name", TABLES)
def test_a_v1_route(name: str) -> None:
    play(v1_route(retries=RetrySchedule(max_attempts=3), queue_limit=4), TABLES[name])


def task(state: TaskState, version: int) -> Task:
    return Task("t-1", "c-1", TaskStatus(state, MOMENT), version=version)


V03_TABLES: dict[str, list[Step]] = {
    "each update posts the task as it stands, read when its turn comes": [
        (heard(status(WORKING)), []),
        (Ready(0.0), ["read t-1"]),
        (TaskRead(task(WORKING, 1), 0.0), ["post task working"]),
        (heard(status(COMPLETED, 2)), []),
        (posted(DELIVERED), ["attempted", "delivered after 1 in 0 s", "read t-1"]),
        (TaskRead(task(COMPLETED, 2), 0.0), ["post task completed"]),
        (posted(DELIVERED), ["attempted", "delivered after 1 in 0 s", "close, task over"]),
    ],
    "an update the last task sent already showed is not sent again": [
        (heard(status(WORKING)), []),
        (heard(status(COMPLETED, 2)), []),
        (Ready(0.0), ["read t-1"]),
        (TaskRead(task(COMPLETED, 2), 0.0), ["post task completed"]),
        (posted(DELIVERED), ["attempted", "delivered after 1 in 0 s", "read t-1"]),
        (TaskRead(task(COMPLETED, 2), 0.0), ["coalesced (not logged)", "close, task over"]),
    ],
    "a task the store no longer holds is logged as gone, not counted": [
        (heard(status(COMPLETED)), []),
        (Ready(0.0), ["read t-1"]),
        (TaskRead(None, 0.0), ["gone", "close, task over"]),
    ],
}


@pytest.mark.parametrize("name", V03_TABLES)
def test_a_v03_route(name: str) -> None:
    play(v03_route(), V03_TABLES[name])


def test_what_is_left_counts_the_update_under_way() -> None:
    route = v1_route()
    for sequence in (1, 2, 3):
        route.handle(heard(status(WORKING, sequence)))
    assert route.left == 3
    route.handle(Ready(0.0))
    assert route.left == 3  # one under way, two queued
    route.handle(posted(DELIVERED))
    assert route.left == 2


@pytest.mark.parametrize(
    ("config", "expected"),
    [
        (
            PushConfig("t", "c", URL, version="1.0"),
            {"Content-Type": "application/a2a+json"},
        ),
        (
            PushConfig(
                "t",
                "c",
                URL,
                version="0.3",
                token="tok",
                authentication=PushAuthentication("Bearer", "cred"),
            ),
            {
                "Content-Type": "application/json",
                "X-A2A-Notification-Token": "tok",
                "Authorization": "Bearer cred",
            },
        ),
    ],
)
def test_a_post_carries_the_configs_own_headers(
    config: PushConfig, expected: dict[str, str]
) -> None:
    route = Route(config, jitter=lambda: 0.0)
    route.handle(heard(status(WORKING)))
    [first] = route.handle(Ready(0.0))
    if isinstance(first, ReadTask):
        [first] = route.handle(TaskRead(task(WORKING, 1), 0.0))
    assert isinstance(first, Post)
    assert (first.url, dict(first.headers)) == (URL, expected)
    assert headers(config) == expected


@pytest.mark.slow  # a Python process of its own
def test_the_route_does_no_io() -> None:
    """Imported alone, it loads neither trio nor any HTTP client (the standard library's
    email package, which the package's version lookup loads, brings `socket`: no matter)."""
    loaded = subprocess.run(
        [
            sys.executable,
            "-c",
            "import sys, n8n_a2a.push.route; "
            "print(' '.join(sorted({m.partition('.')[0] for m in sys.modules})))",
        ],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split()
    io = {"trio", "anyio", "httpx", "httpcore", "quart", "quart_trio", "hypercorn", "psycopg"}
    assert not io & set(loaded)
    assert "n8n_a2a" in loaded
