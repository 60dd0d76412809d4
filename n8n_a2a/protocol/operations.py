"""Every A2A method, one row each: its name, how its params are read into an Operation,
and whether it is answered with an event stream. The codec (codec.py) decodes a request
by its row; nothing else dispatches on a method.

A row is named as A2A 1.0 and the HTTP+JSON routes name the method; each version's
spelling of it is a fact of that version (facts.py). What the adapter does with the
operation, and how its result is written, is app/operations.py's table, keyed by the
operation's type: its handlers need the executor, which this sans-I/O floor cannot see.

A new method is: its Operation (model.py, or push.py), a row here, its spelling in each
version's facts, a handler in app/operations.py, and a route in rest.py.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import datetime
from functools import partial
from types import MappingProxyType
from typing import NoReturn

from .errors import A2AError, ErrorCode, quoted
from .facts import VersionFacts
from .media import Modes
from .model import (
    CancelTask,
    GetTask,
    ListTasks,
    Message,
    Operation,
    Role,
    SendMessage,
    SubscribeToTask,
)
from .params import Params
from .parts import check_attachments, metadata_of
from .shapes import Shapes

# ListTasks paging, as the spec bounds it.
DEFAULT_PAGE_SIZE = 50
MAX_PAGE_SIZE = 100


@dataclass(frozen=True, slots=True)
class Reading:
    """What a request's params are read with: one version's facts and shapes, and the
    media types the agent takes in and gives out (the card's)."""

    facts: VersionFacts
    shapes: Shapes
    modes: Modes


@dataclass(frozen=True, slots=True)
class Method:
    """One A2A method. `decode` reads its params (A2AError for anything this agent cannot
    do); `streams`: it is answered with an event stream, not at once (and so a v0.3 caller
    refused before its stream opens is answered with the stream's one error event)."""

    name: str
    decode: Callable[[Reading, Params], Operation]
    streams: bool = False


def _send(reading: Reading, params: Params, *, streaming: bool) -> SendMessage:
    facts, shapes, modes = reading.facts, reading.shapes, reading.modes
    message = _message(reading, params.required_object("message"))
    configuration = params.optional_object("configuration") or Params({}, "configuration")
    accepted = configuration.optional_str_list("acceptedOutputModes")
    if accepted and not modes.answers_any_of(accepted):
        raise A2AError(
            ErrorCode.CONTENT_TYPE_NOT_SUPPORTED,
            f"This agent answers in {', '.join(modes.outputs)}; "
            f"acceptedOutputModes was {accepted[:8]}",
        )
    inline = configuration.optional_object(facts.push_config_field)
    # Read (and so checked) on a stream too, where it has no effect: see SendMessage.
    blocking = shapes.decode_blocking(configuration)
    return SendMessage(
        message=message,
        history_length=configuration.optional_int("historyLength"),
        blocking=blocking or streaming,
        streaming=streaming,
        # Its task id is the new task's, once there is one.
        push_config=None if inline is None else shapes.decode_push_config(inline, task_id=""),
        if_generation_match=configuration.optional_int64("ifGenerationMatch"),
    )


def _message(reading: Reading, message: Params) -> Message:
    user = reading.facts.roles[Role.USER]
    if message.required_str("role") != user:
        raise A2AError.invalid_params(f"{message.path}.role must be {user!r}")
    parts = tuple(
        reading.shapes.decode_part(part, reading.modes)
        for part in message.required_objects("parts")
    )
    check_attachments(message, parts)
    return Message(
        message_id=message.required_str("messageId"),
        role=Role.USER,
        parts=parts,
        task_id=message.optional_str("taskId"),
        context_id=message.optional_str("contextId"),
        metadata=metadata_of(message),
    )


def _list(reading: Reading, params: Params) -> ListTasks:
    page_size = params.optional_int("pageSize")
    if page_size is not None and not 1 <= page_size <= MAX_PAGE_SIZE:
        raise A2AError.invalid_params(
            f"params.pageSize must be from 1 to {MAX_PAGE_SIZE}, got {page_size}"
        )
    status = params.optional_str("status")
    state = None
    if status is not None and status != "TASK_STATE_UNSPECIFIED":
        state = reading.facts.state_named(status)
        if state is None:
            raise A2AError.invalid_params(f"params.status {quoted(status)} is not a task state")
    return ListTasks(
        context_id=params.optional_id("contextId"),
        state=state,
        status_timestamp_after=_timestamp(params, "statusTimestampAfter"),
        page_size=page_size or DEFAULT_PAGE_SIZE,
        page_token=params.optional_str("pageToken"),
        history_length=params.optional_int("historyLength"),
        include_artifacts=bool(params.optional_bool("includeArtifacts")),
    )


def _timestamp(params: Params, name: str) -> datetime | None:
    raw = params.optional_str(name)
    if raw is None:
        return None
    try:
        moment = datetime.fromisoformat(raw)
    except ValueError:
        moment = None
    if moment is None or moment.tzinfo is None:
        raise A2AError.invalid_params(
            f"params.{name} must be an RFC 3339 timestamp with a time zone, got {raw[:40]!r}"
        )
    return moment


def _no_extended_card(reading: Reading, params: Params) -> NoReturn:
    # The card never claims one (capabilities.extendedAgentCard, v0.3's
    # supportsAuthenticatedExtendedCard): each version's answer to that is its fact.
    raise A2AError(
        reading.facts.no_extended_card,
        "This agent has no extended Agent Card: its card does not claim one",
    )


_TABLE = (
    Method("SendMessage", partial(_send, streaming=False)),
    # A send answered with the task's events: the same send, always blocking.
    Method("SendStreamingMessage", partial(_send, streaming=True), streams=True),
    Method(
        "SubscribeToTask",
        lambda _, params: SubscribeToTask(params.required_id("id")),
        streams=True,
    ),
    Method(
        "GetTask",
        lambda _, params: GetTask(
            params.required_id("id"),
            params.optional_int("historyLength"),
            params.optional_int64("currentGeneration"),
        ),
    ),
    Method("CancelTask", lambda _, params: CancelTask(params.required_id("id"))),
    Method("ListTasks", _list),
    # A push config's shape is the version's: read by its shapes alone.
    Method(
        "CreateTaskPushNotificationConfig",
        lambda reading, params: reading.shapes.decode_push_create(params),
    ),
    Method(
        "GetTaskPushNotificationConfig",
        lambda reading, params: reading.shapes.decode_push_get(params),
    ),
    Method(
        "ListTaskPushNotificationConfigs",
        lambda reading, params: reading.shapes.decode_push_list(params),
    ),
    Method(
        "DeleteTaskPushNotificationConfig",
        lambda reading, params: reading.shapes.decode_push_delete(params),
    ),
    # Named, so that a caller hears why rather than "method not found".
    Method("GetExtendedAgentCard", _no_extended_card),
)

#: Every method, by its name.
METHODS: Mapping[str, Method] = MappingProxyType({method.name: method for method in _TABLE})
