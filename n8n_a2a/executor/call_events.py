"""The words between a call's machine (call.py) and its driver (calls.py): the events
the driver tells, the actions the machine asks. Frozen values, no I/O.

Two kinds of event: what the driver's own step came to (`Event`, one for each awaited
action), and what comes from elsewhere at any moment, awaiting nothing (`Heard`: a cut
of the task, a chunk of the answer). Two kinds of action: those the driver awaits
(`Awaited`, each followed by its event) and those done at once (`Now`); an answer holds
at most one awaited action, last.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..core.replies import Verdict, WebhookReply
from ..protocol.model import ArtifactUpdate, Task

# Events: what the driver tells a call.


@dataclass(frozen=True, slots=True)
class Working:
    """The move to `working` is made: the task as it left it; None if the task ended first."""

    task: Task | None


@dataclass(frozen=True, slots=True)
class SlotTaken:
    """The call's turn in line came: it holds a slot."""


@dataclass(frozen=True, slots=True)
class Replied:
    """The workflow answered after `seconds`, at `at` (the driver's clock)."""

    reply: WebhookReply
    seconds: float
    at: float


@dataclass(frozen=True, slots=True)
class WorkflowFailed:
    """The workflow's call failed after `seconds`, at `at`. `full`: the reply was bigger
    than the memory budget holds (its words); None for any other failure (logged)."""

    seconds: float
    at: float
    full: str | None = None


@dataclass(frozen=True, slots=True)
class Chunk:
    """A piece of the workflow's streamed answer was read."""

    text: str


@dataclass(frozen=True, slots=True)
class Cut:
    """The task ended elsewhere (CancelTask, shutdown, another replica): stop the call."""


@dataclass(frozen=True, slots=True)
class CutOff:
    """The cuttable await under way ended by the cut; `seconds` the workflow's call took,
    if it was under way."""

    seconds: float | None = None


@dataclass(frozen=True, slots=True)
class Recorded:
    """The verdict (or the failure) is recorded: the task as ended; None if it had ended
    already (the move lost), or the failure could not be recorded."""

    task: Task | None


@dataclass(frozen=True, slots=True)
class StoreOut:
    """The store was out of reach at `at`: the verdict is not recorded."""

    at: float


@dataclass(frozen=True, slots=True)
class Ready:
    """A wait ran out at `at`."""

    at: float


@dataclass(frozen=True, slots=True)
class ReadBack:
    """The task as it stands; None when the store could not be read."""

    task: Task | None


@dataclass(frozen=True, slots=True)
class Broke:
    """The driver's step raised (a bug; it logged the traceback)."""


#: What the driver's own steps come to (`Call.handle`).
Event = (
    Working
    | SlotTaken
    | Replied
    | WorkflowFailed
    | CutOff
    | Recorded
    | StoreOut
    | Ready
    | ReadBack
    | Broke
)
#: What comes from elsewhere, at any moment (`Call.hear`): it awaits nothing.
Heard = Chunk | Cut


# Actions: what a call asks of the driver.


@dataclass(frozen=True, slots=True)
class TakeSlot:
    """Wait in line for a slot, cuttable; then `SlotTaken` (or `CutOff`)."""


@dataclass(frozen=True, slots=True)
class MarkWorking:
    """Move the task to `working` (from `known`, the task as last seen, if any); then
    `Working`. Cuttable after a wait in line; made by the send itself otherwise."""

    known: Task | None


@dataclass(frozen=True, slots=True)
class CallWorkflow:
    """Call the workflow with the turn, cuttable; then `Replied` or `WorkflowFailed`
    (or `CutOff`), and a `Chunk` for each piece of a streamed answer meanwhile."""


@dataclass(frozen=True, slots=True)
class FreeSlot:
    """Give the slot back: the next call in line may go."""


@dataclass(frozen=True, slots=True)
class Relay:
    """Send this chunk of the answer to the task's listeners in this process."""

    update: ArtifactUpdate


@dataclass(frozen=True, slots=True)
class Cancel:
    """Cut the cuttable await under way (or the next one)."""


@dataclass(frozen=True, slots=True)
class Record:
    """End the task's turn with the verdict, from `known` if not None, counting the
    `relayed` chunks of its answer; then `Recorded` (or `StoreOut`)."""

    verdict: Verdict
    known: Task | None
    answer_id: str
    relayed: int = 0


@dataclass(frozen=True, slots=True)
class WaitUntil:
    """Wait until `at`, then `Ready`."""

    at: float


@dataclass(frozen=True, slots=True)
class Fail:
    """End the task failed (ADAPTER_FAILED), logging `why` when there is one, counting the
    `relayed` chunks of its answer; then `Recorded` (None if the store refused that too)."""

    why: str = ""
    relayed: int = 0


@dataclass(frozen=True, slots=True)
class Release:
    """The call is over: give back its room under the budget, stop hearing its task."""


@dataclass(frozen=True, slots=True)
class ReadEnd:
    """Read the task as it stands, for its report; then `ReadBack`."""


@dataclass(frozen=True, slots=True)
class Report:
    """Report the turn's end: the task as the call left it (None: it could not be read),
    the webhook's HTTP status and how long its call took, when known."""

    task: Task | None
    webhook_status: int | None
    seconds: float | None


#: The actions the driver awaits, each followed by the event it came to.
Awaited = TakeSlot | MarkWorking | CallWorkflow | Record | WaitUntil | Fail | ReadEnd
#: The actions done at once.
Now = Relay | Cancel | FreeSlot | Release | Report
Action = Awaited | Now
