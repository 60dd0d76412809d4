"""One webhook call's life as a state machine: events in, actions out, no I/O.

A call is one task's turn sent to the workflow, from its slot to its reported end. The
trio driver (calls.py) feeds it events and does what it answers:

- events: the task moved to `working`, or not (`Working`), the slot held after a wait
  in line (`SlotTaken`), the workflow's reply (`Replied`) or its failure
  (`WorkflowFailed`), a piece of a streamed answer (`Chunk`), the task ended elsewhere
  (`Cut`: CancelTask, shutdown, another replica), the driver's cuttable await ended by
  that cut (`CutOff`), the verdict recorded or not (`Recorded`, `StoreOut`), a wait run
  out (`Ready`), the task read back (`ReadBack`), the driver's step broken by a bug
  (`Broke`);
- actions: wait in line for a slot (`TakeSlot`), move the task to `working`
  (`MarkWorking`), call the workflow (`CallWorkflow`), give the slot back (`FreeSlot`),
  relay a chunk to the task's listeners (`Relay`), cut the await under way (`Cancel`),
  record the verdict (`Record`), wait (`WaitUntil`), end the task failed (`Fail`), let
  the call go (`Release`: its room, its hearing of the task's events), read the task
  (`ReadEnd`), and report the turn's end (`Report`); these words are in call_events.py.

What may be cut: the wait in line, the move to `working` after it, and the workflow's
call, each under a cancel scope of the driver's (`cuttable`). A cut heard at any other
moment is remembered: a call cut before its reply never records a verdict, so the cut
wins any race with the reply. A verdict waits for a store out of reach (a database
restarting) with a doubling pause, until the call's own webhook timeout has run from its
start, and `store_patience` seconds after the reply at least: an outage that ends by then
loses nothing (the other replicas' reapers watch a lease of their own after it before
they end a task LOST: reaper.py). Past it the task is ended failed if the store allows,
else left to its lease.
"""

from __future__ import annotations

import enum
from typing import assert_never

from ..core.contract import classify
from ..core.replies import HttpReply, StreamedReply, Verdict
from ..core.turns import ADAPTER_FAILED, answer_chunk, reply_not_held
from ..protocol.model import Task
from .call_events import (
    Action,
    Broke,
    CallWorkflow,
    Cancel,
    Chunk,
    Cut,
    CutOff,
    Event,
    Fail,
    FreeSlot,
    Heard,
    MarkWorking,
    ReadBack,
    ReadEnd,
    Ready,
    Record,
    Recorded,
    Relay,
    Release,
    Replied,
    Report,
    SlotTaken,
    StoreOut,
    TakeSlot,
    WaitUntil,
    WorkflowFailed,
    Working,
)
from .config import ExecutorConfig

#: The first pause before a verdict is recorded again, and the longest, seconds.
FIRST_PAUSE, LONGEST_PAUSE = 0.1, 2.0


class Phase(enum.Enum):
    STARTING = ("moving the task to working, for its send", False)
    IN_LINE = ("waiting in line for a call slot", True)
    MARKING = ("moving the task to working, its slot held", True)
    WAITING_TO_MARK = ("waiting for the store to move the task to working", True)
    CALLING = ("calling the workflow", True)
    RECORDING = ("recording the verdict", False)
    BACKING_OFF = ("waiting for the store to record the verdict", False)
    FAILING = ("ending the task failed", False)
    READING = ("reading the task back for its report", False)
    OVER = ("over", False)

    def __init__(self, doing: str, cuttable: bool) -> None:
        self.doing = doing
        #: Its await is under the driver's cancel scope: a cut cancels it. (An attribute,
        #: not a set's lookup: the driver asks at every step, and an Enum hashes in Python.)
        self.cuttable = cuttable


class Call:
    """One task's webhook call, from its slot to its reported end."""

    def __init__(self, task: Task, answer_id: str, config: ExecutorConfig) -> None:
        """`task`: as the send made it; `answer_id`: its streamed chunks' artifact."""
        self.task_id = task.id
        self._config = config
        self._answer_id = answer_id
        #: What it is doing (the driver reads it; only the machine moves it).
        self.phase = Phase.STARTING
        self._known: Task | None = task  # as the last move here left it
        self._cut = False  # the task ended elsewhere: no verdict is recorded
        self._sealed = False  # a move of its task is under way: no chunk may go out now
        self._relayed = 0  # chunks of the answer that went out
        self._verdict: Verdict | None = None
        self._webhook_status: int | None = None
        self._seconds: float | None = None
        self._deadline = 0.0  # the last moment to record the verdict
        self._pause = FIRST_PAUSE

    def __repr__(self) -> str:
        return f"<Call {self.task_id} {self.phase.name.lower()} cut={self._cut}>"

    @property
    def released(self) -> bool:
        """Its room and hearing are given back (or it is over)."""
        return self.phase in (Phase.READING, Phase.OVER)

    def begin(self, waited: bool) -> TakeSlot | MarkWorking:
        """The call is claimed: with a slot free (the send moves the task to `working`
        itself), or a place in line."""
        if waited:
            self.phase = Phase.IN_LINE
            return TakeSlot()
        return MarkWorking(self._known)

    def seal(self) -> int:
        """A move of the task is about to be made here (a cancel, a shutdown's cut): no
        chunk goes out from now on, so that none takes the generation the move's events
        will have; the chunks that went out, which the move counts."""
        self._sealed = True
        return self._relayed

    def hear(self, event: Heard) -> list[Relay | Cancel]:
        """Take what came from elsewhere: a cut of the task, or a chunk of the answer."""
        match event:
            case Cut():
                self._cut = True
                return [Cancel()] if self.phase.cuttable else []
            case Chunk(text=text):
                return self._chunk(text)
            case _:
                assert_never(event)

    def handle(self, event: Event) -> list[Action]:
        """Take what the driver's step came to; what the driver is to do, in order."""
        if self.phase is Phase.OVER:
            return []
        match event:
            case SlotTaken():
                return self._slot_taken()
            case Working(task=task):
                return self._working(task)
            case Replied() | WorkflowFailed():
                return self._answered(event)
            case CutOff(seconds=seconds):
                self._seconds = seconds if seconds is not None else self._seconds
                return [*self._free_slot(), *self._over(None)]
            case Recorded(task=task):
                return self._over(task)
            case StoreOut() | Ready():  # the store out of reach, and a pause for it over
                return self._store_out(event.at) if isinstance(event, StoreOut) else self._ready()
            case ReadBack(task=task):
                return self._report(task)
            case Broke():
                return self._broke()
            case _:
                assert_never(event)

    def _chunk(self, text: str) -> list[Relay | Cancel]:
        # A read in the step the task was cut: its chunk must not follow the end.
        if self.phase is not Phase.CALLING or self._cut or self._sealed or self._known is None:
            return []
        update = answer_chunk(self._known, self._answer_id, text, self._relayed)
        self._relayed += 1
        return [Relay(update)]

    def _slot_taken(self) -> list[Action]:
        if self._cut:  # cut in the tick its turn came: the move would lose anyway
            return [FreeSlot(), *self._over(None)]
        self.phase = Phase.MARKING
        return [MarkWorking(None)]

    def _working(self, task: Task | None) -> list[Action]:
        if task is None or self._cut:
            return [*self._free_slot(), *self._over(None)]
        self._known, self.phase, self._pause = task, Phase.CALLING, FIRST_PAUSE
        return [CallWorkflow()]

    def _answered(self, answer: Replied | WorkflowFailed) -> list[Action]:
        self._seconds = answer.seconds
        if isinstance(answer, Replied):
            reply = answer.reply
            if isinstance(reply, HttpReply | StreamedReply):
                self._webhook_status = reply.status
            config = self._config
            verdict = classify(
                reply,
                input_required=config.input_required,
                modes=config.modes,
                auth_required=config.auth_required,
                waiting_path=config.waiting_path,
            )
        else:
            verdict = ADAPTER_FAILED if answer.full is None else reply_not_held(answer.full)
        freed = self._free_slot()
        if self._cut:  # the cut came first: it stands, the reply is dropped
            return [*freed, *self._over(None)]
        # The call's webhook timeout from its start, and the store's patience at least.
        called = answer.at - answer.seconds + self._config.webhook_timeout
        self._verdict = verdict
        self._deadline = max(called, answer.at + self._config.store_patience)
        return [*freed, *self._record(self._known)]

    def _ready(self) -> list[Action]:
        """A pause for the store is over: try again what it could not do."""
        if self.phase is Phase.BACKING_OFF:
            return self._record(None)
        if self.phase is Phase.WAITING_TO_MARK:
            self.phase = Phase.MARKING
            return [MarkWorking(self._known)]
        return []

    def _record(self, known: Task | None) -> list[Action]:
        assert self._verdict is not None
        self.phase = Phase.RECORDING
        return [Record(self._verdict, known, self._answer_id, self._relayed)]

    def _store_out(self, at: float) -> list[Action]:
        if self.phase in (Phase.STARTING, Phase.MARKING):
            return self._mark_later(at)
        if self.phase is not Phase.RECORDING:
            return []
        if at + self._pause > self._deadline:
            self.phase = Phase.FAILING
            why = "its verdict could not be recorded before the call's deadline"
            return [Fail(why, self._relayed)]
        self.phase = Phase.BACKING_OFF
        wait = WaitUntil(at + self._pause)
        self._pause = min(self._pause * 2, LONGEST_PAUSE)
        return [wait]

    def _mark_later(self, at: float) -> list[Action]:
        """The store was out of reach as the task was to move to `working` (the task is
        made: a caller that sends its message again finds it): try again after a pause,
        for `store_patience` seconds; then it fails, or its lease ends it."""
        if not self._deadline:  # the first time
            self._deadline = at + self._config.store_patience
        if at + self._pause > self._deadline:
            freed = self._free_slot()
            self.phase = Phase.FAILING
            return [*freed, Fail("it could not be moved to working before the store's patience")]
        self.phase = Phase.WAITING_TO_MARK
        wait = WaitUntil(at + self._pause)
        self._pause = min(self._pause * 2, LONGEST_PAUSE)
        return [wait]

    def _broke(self) -> list[Action]:
        freed = self._free_slot()
        if self.phase is Phase.READING:  # the report's read broke: report what is known
            return self._report(None)
        if self.phase is Phase.FAILING:  # ending it failed broke too: leave it to its lease
            return self._over(None)
        self.phase = Phase.FAILING
        return [*freed, Fail(relayed=self._relayed)]

    def _free_slot(self) -> list[Action]:
        """The slot back, when this phase holds one (the wait in line holds none yet)."""
        held = (Phase.MARKING, Phase.WAITING_TO_MARK, Phase.CALLING)
        return [FreeSlot()] if self.phase in held else []

    def _over(self, ended: Task | None) -> list[Action]:
        """The call is over: let it go, then report the task as it ended (read back when
        the end was not this call's own)."""
        released: list[Action] = [] if self.released else [Release()]
        if ended is not None:
            return [*released, *self._report(ended)]
        self.phase = Phase.READING
        return [*released, ReadEnd()]

    def _report(self, task: Task | None) -> list[Action]:
        self.phase = Phase.OVER
        return [Report(task, self._webhook_status, self._seconds)]
