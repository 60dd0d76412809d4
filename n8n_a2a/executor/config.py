"""The executor's settings in one frozen piece, as hypercorn passes its one `Config`.

The values alone: the collaborators (the store, the workflow, the metrics, the budget)
are objects the server wires in beside it. `from_settings` is the one place that maps
the environment's names to the executor's (ADAPTER_LEASE_SECONDS is also how long a
verdict waits for a store out of reach: past it, the lease has another replica end
the task).
"""

from __future__ import annotations

from dataclasses import dataclass

from ..config.settings import Settings
from ..core.resume import WAITING_PATH
from ..protocol.media import TEXT_ONLY, Modes
from .subscriptions import DEFAULT_BUFFER


@dataclass(frozen=True, slots=True)
class ExecutorConfig:
    """How the executor runs tasks: its defaults are the settings' own."""

    #: The card's skill, named to the workflow in each call.
    skill_id: str
    #: ADAPTER_MAX_CONCURRENT_CALLS: webhook calls under way at once.
    max_concurrent_calls: int = 1024
    #: ADAPTER_MAX_QUEUED_CALLS: sends waiting for a call slot, past which one is refused.
    max_queued_calls: int = 1024
    #: Events a stream's reader may lag behind before it is cut.
    stream_buffer: int = DEFAULT_BUFFER
    #: ADAPTER_ALLOW_INPUT_REQUIRED: a workflow may ask the caller a question.
    input_required: bool = False
    #: ADAPTER_ALLOW_AUTH_REQUIRED: a workflow may ask the caller to sign in.
    auth_required: bool = False
    #: ADAPTER_WAITING_PATH: n8n's path of waiting executions (core/resume.py).
    waiting_path: str = WAITING_PATH
    #: ADAPTER_INPUT_TTL: how long a question waits for its answer, seconds.
    input_ttl: float = 86400.0
    #: The card's input and output modes, which a reply's parts are judged by.
    modes: Modes = TEXT_ONLY
    #: How long a verdict waits for a store out of reach to be recorded, seconds, at least.
    store_patience: float = 15.0
    #: ADAPTER_WEBHOOK_TIMEOUT: a verdict waits for the store until it has run from the
    #: call's start (calls.py's deadline), seconds.
    webhook_timeout: float = 60.0
    #: ADAPTER_LONG_POLL_TIMEOUT: how long a GetTask with currentGeneration is held, seconds.
    long_poll_timeout: float = 30.0
    #: ADAPTER_MAX_POLLS_PER_CALLER: such GetTasks one caller may have held at once.
    max_long_polls_per_caller: int = 32

    @classmethod
    def from_settings(cls, settings: Settings) -> ExecutorConfig:
        return cls(
            skill_id=settings.skill_id,
            max_concurrent_calls=settings.max_concurrent_calls,
            max_queued_calls=settings.max_queued_calls,
            input_required=settings.allow_input_required,
            auth_required=settings.allow_auth_required,
            waiting_path=settings.waiting_path,
            input_ttl=settings.input_ttl,
            modes=settings.modes,
            store_patience=settings.lease_seconds,
            webhook_timeout=settings.webhook_timeout,
            long_poll_timeout=settings.long_poll_timeout,
            max_long_polls_per_caller=settings.max_long_polls_per_caller,
        )
