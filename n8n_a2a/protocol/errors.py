"""The protocol's errors, all in one place: JSON-RPC and A2A error codes, the exception
that carries them to the wire (A2AError) and its two kinds (a broken envelope, a path no
route serves), and what the strict JSON and the canonical JSON readers refuse."""

from __future__ import annotations

import enum

#: Characters of a caller's id quoted back in an error (ids run to 1,024 characters).
_QUOTED_ID_CHARS = 64


class ErrorCode(enum.IntEnum):
    """JSON-RPC 2.0 codes and the A2A codes of both protocol versions."""

    PARSE_ERROR = -32700
    INVALID_REQUEST = -32600
    METHOD_NOT_FOUND = -32601
    INVALID_PARAMS = -32602
    INTERNAL_ERROR = -32603
    TASK_NOT_FOUND = -32001
    TASK_NOT_CANCELABLE = -32002
    PUSH_NOTIFICATION_NOT_SUPPORTED = -32003
    UNSUPPORTED_OPERATION = -32004
    CONTENT_TYPE_NOT_SUPPORTED = -32005
    INVALID_AGENT_RESPONSE = -32006
    EXTENDED_AGENT_CARD_NOT_CONFIGURED = -32007
    EXTENSION_SUPPORT_REQUIRED = -32008
    VERSION_NOT_SUPPORTED = -32009
    # A2A 1.1 (drafted): a send's `ifGenerationMatch` is not its task's generation.
    TASK_GENERATION_MISMATCH = -32010
    # JSON-RPC's range for server errors; A2A defines no code for "try again later".
    SERVER_BUSY = -32000

    @property
    def is_a2a(self) -> bool:
        """True for the codes A2A defines on top of JSON-RPC (they carry an ErrorInfo in v1.0)."""
        return -32099 <= self.value <= -32001


#: A JSON-RPC request's id: what its answer echoes, type and all (jsonrpc.py).
RequestId = str | int | float | None


class A2AError(Exception):
    """An error answered to the caller as a JSON-RPC error object.

    The message is shown to the caller as it is: it must never contain a token.
    """

    def __init__(
        self, code: ErrorCode, message: str, metadata: dict[str, str] | None = None
    ) -> None:
        """`metadata`: what its ErrorInfo says beside the reason (strings, as
        google.rpc.ErrorInfo's map holds them), where the version carries one."""
        super().__init__(message)
        self.code = code
        self.message = message
        self.metadata = metadata

    @classmethod
    def invalid_params(cls, message: str) -> A2AError:
        return cls(ErrorCode.INVALID_PARAMS, message)

    @classmethod
    def internal(cls) -> A2AError:
        """An error nobody expected, as a caller hears it: its traceback goes to the log."""
        return cls(ErrorCode.INTERNAL_ERROR, "Internal error")

    @classmethod
    def task_not_found(cls, task_id: str) -> A2AError:
        return cls(ErrorCode.TASK_NOT_FOUND, f"Task not found: {quoted_id(task_id)}")


class InvalidRequest(A2AError):
    """The JSON-RPC envelope itself is wrong; `request_id` is the id to echo (None when
    unreadable)."""

    def __init__(self, code: ErrorCode, message: str, request_id: RequestId = None) -> None:
        super().__init__(code, message)
        self.request_id = request_id


class NoRoute(A2AError):
    """No HTTP+JSON route has this path (404), or none of its routes this method (405:
    `allowed`)."""

    def __init__(self, message: str, allowed: tuple[str, ...] = ()) -> None:
        super().__init__(ErrorCode.METHOD_NOT_FOUND, message)
        self.allowed = allowed


class NotJSON(ValueError):
    """What json.loads takes and JSON does not have (strict.py): NaN, Infinity, -Infinity;
    with `unique_keys`, a key twice in one object."""


class NotCanonicalizable(ValueError):
    """A value with no canonical form (jcs.py): NaN, an infinity, a huge integer, a lone
    surrogate, a key that is not a string, or what is not JSON at all."""


def quoted_id(value: str) -> str:
    """An id a caller sent, as an error quotes it (and so the log line of that error): a
    long one shortened, so that no request can make an answer or the log grow by its size."""
    if len(value) <= _QUOTED_ID_CHARS:
        return value
    return f"{value[: _QUOTED_ID_CHARS - 16]}... ({len(value)} characters)"


def quoted(value: str) -> str:
    """A caller's text as an error quotes it: cut as an id is, then in quotes with every
    control character escaped (repr), so that it can neither swell nor split a log line."""
    return repr(quoted_id(value)) if len(value) > _QUOTED_ID_CHARS else repr(value)
