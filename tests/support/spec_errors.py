"""The A2A errors as the specification released as v1.0.1 (2026-05-26) maps them, copied
by hand from its §5.4 table and its §11.6 rule for the ErrorInfo's reason, so that the
tests hold the adapter's own table (n8n_a2a/protocol/rest.py) to the spec's, not to itself.

§5.4 (v1.0.1): "All A2A-specific errors defined in Section 3.3.2 MUST be mapped to
binding-specific error representations." §11.6: the ErrorInfo's `reason` is "The A2A
error type in UPPER_SNAKE_CASE without the "Error" suffix", its `domain`
"a2a-protocol.org".
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class SpecError:
    """One row of §5.4: the error's name, its JSON-RPC code, its gRPC status (the
    google.rpc.Code an HTTP+JSON body names as its `status`) and its HTTP status."""

    name: str
    code: int
    grpc_status: str
    http_status: int

    @property
    def reason(self) -> str:
        """The ErrorInfo reason §11.6 makes of the name: `TaskNotFoundError`, TASK_NOT_FOUND."""
        bare = self.name.removesuffix("Error")
        return "".join(f"_{c}" if c.isupper() and i else c for i, c in enumerate(bare)).upper()


#: §5.4's table, row by row, as released in v1.0.1.
TABLE = (
    SpecError("TaskNotFoundError", -32001, "NOT_FOUND", 404),
    SpecError("TaskNotCancelableError", -32002, "FAILED_PRECONDITION", 400),
    SpecError("PushNotificationNotSupportedError", -32003, "FAILED_PRECONDITION", 400),
    SpecError("UnsupportedOperationError", -32004, "FAILED_PRECONDITION", 400),
    SpecError("ContentTypeNotSupportedError", -32005, "INVALID_ARGUMENT", 400),
    SpecError("InvalidAgentResponseError", -32006, "INTERNAL", 500),
    SpecError("ExtendedAgentCardNotConfiguredError", -32007, "FAILED_PRECONDITION", 400),
    SpecError("ExtensionSupportRequiredError", -32008, "FAILED_PRECONDITION", 400),
    SpecError("VersionNotSupportedError", -32009, "FAILED_PRECONDITION", 400),
)

#: Each row by its error's name.
BY_NAME = {row.name: row for row in TABLE}
