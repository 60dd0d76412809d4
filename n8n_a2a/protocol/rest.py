"""The A2A 1.0 HTTP+JSON binding (spec §11): its routes, what a request's path, query and
body say, and its errors as HTTP statuses with a google.rpc.Status body.

A route names the JSON-RPC method whose params its path, query and body make up, so a
request of this binding is decoded by the same codec, into the same Operation, as a
JSON-RPC one: the binding adds a route table and an error shape, no second decoder.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from .codec import Codec
from .errors import A2AError, ErrorCode, InvalidRequest, NoRoute, quoted_id
from .jsonrpc import load
from .model import JSONObject
from .strict import may_hold_surrogates, unwritable
from .versions import REST_VERSION, V1, V11, negotiate
from .writing import dump

#: What the binding answers in (spec §11.1), and the A2A media type it also takes.
JSON = "application/json"
MEDIA_TYPE = "application/a2a+json"
#: Query fields read as numbers and as booleans (proto JSON names); others stay strings.
_QUERY_INTS = frozenset({"historyLength", "pageSize"})
_QUERY_BOOLS = frozenset({"includeArtifacts"})
_BOOLS = {"true": True, "false": False}


@dataclass(frozen=True, slots=True)
class Route:
    """One route: an HTTP method and a path template (`{}` stands for one id, in the order of
    `path_fields`, the params field each fills), and the JSON-RPC method it performs.
    `body`: whether the request's params come from a JSON body (else from the query)."""

    http_method: str
    template: str
    method: str
    path_fields: tuple[str, ...] = ()
    body: bool = False

    def match(self, path: str) -> tuple[str, ...] | None:
        """The ids in `path` if it has this route's shape, else None."""
        segments, pattern = path.split("/"), self.template.split("/")
        if len(segments) != len(pattern):
            return None
        ids = []
        for segment, expected in zip(segments, pattern, strict=True):
            if "{}" not in expected:
                if segment != expected:
                    return None
                continue
            suffix = expected.removeprefix("{}")  # ":cancel", or nothing
            value = segment.removesuffix(suffix) if suffix else segment
            if not value or (suffix and not segment.endswith(suffix)):
                return None
            ids.append(value)
        return tuple(ids)


# The google.api.http annotations of a2a.proto, as a2a-sdk 1.3.0 and @a2a-js/sdk 1.3.0 call
# them; a `{}` followed by a `:verb` comes first, so that `/tasks/x:cancel` is no task id.
ROUTES = (
    Route("POST", "/message:send", "SendMessage", body=True),
    Route("POST", "/message:stream", "SendStreamingMessage", body=True),
    Route("POST", "/tasks/{}:cancel", "CancelTask", ("id",), body=True),
    Route("POST", "/tasks/{}:subscribe", "SubscribeToTask", ("id",), body=True),
    Route("GET", "/tasks/{}:subscribe", "SubscribeToTask", ("id",)),
    Route("GET", "/tasks/{}", "GetTask", ("id",)),
    Route("GET", "/tasks", "ListTasks"),
    Route(
        "POST",
        "/tasks/{}/pushNotificationConfigs",
        "CreateTaskPushNotificationConfig",
        ("taskId",),
        body=True,
    ),
    Route(
        "GET", "/tasks/{}/pushNotificationConfigs", "ListTaskPushNotificationConfigs", ("taskId",)
    ),
    Route(
        "GET",
        "/tasks/{}/pushNotificationConfigs/{}",
        "GetTaskPushNotificationConfig",
        ("taskId", "id"),
    ),
    Route(
        "DELETE",
        "/tasks/{}/pushNotificationConfigs/{}",
        "DeleteTaskPushNotificationConfig",
        ("taskId", "id"),
    ),
    Route("GET", "/extendedAgentCard", "GetExtendedAgentCard"),
)


def codec_for(requested: str | None) -> tuple[Codec, A2AError | None]:
    """The codec of a request of this binding, and the -32009 to answer if it asks for a
    version the binding does not serve. No A2A-Version is 1.0 here, not 0.3 as for JSON-RPC:
    these paths are 1.0's (v0.3 clients prefix theirs with /v1), so a request on them is."""
    if requested is None or not requested.strip():
        return V1, None
    codec, unsupported = negotiate(requested)
    if unsupported is None and codec is V11:
        return codec, None  # 1.0's routes and shapes, with the 1.1 draft's generation
    if unsupported is None and codec is not V1:
        unsupported = A2AError(
            ErrorCode.VERSION_NOT_SUPPORTED,
            f"The HTTP+JSON binding serves A2A {REST_VERSION}; A2A {codec.facts.version} clients"
            " use JSON-RPC (the card's first interface)",
        )
    return V1, unsupported


def answer_type(accept: str | None) -> str:
    """The media type to answer in: JSON (spec §11.1), or the A2A media type to a client
    that accepts only that."""
    accepted = {item.split(";", 1)[0].strip().lower() for item in (accept or "").split(",")}
    if MEDIA_TYPE in accepted and not accepted & {JSON, "*/*", "application/*"}:
        return MEDIA_TYPE
    return JSON


def route(http_method: str, path: str) -> tuple[Route, tuple[str, ...]]:
    """The route of a request (`path` relative to the binding's root) and its path's ids."""
    allowed: list[str] = []
    for candidate in ROUTES:
        ids = candidate.match(path)
        if ids is None:
            continue
        if candidate.http_method == http_method:
            return candidate, ids
        if candidate.http_method not in allowed:
            allowed.append(candidate.http_method)
    shown = path if len(path) <= 80 else path[:64] + "..."
    if allowed:
        raise NoRoute(
            f"{http_method} is not served on {shown!r}; use {', '.join(allowed)}", tuple(allowed)
        )
    raise NoRoute(f"No A2A HTTP+JSON operation at {shown!r}")


def params_of(
    matched: Route, ids: tuple[str, ...], query: Mapping[str, str], body: bytes | bytearray
) -> JSONObject:
    """The params a request makes up: its body's (or query's) fields and its path's ids.

    An id in both the path and the body or query (a2a-sdk sends a cancel's id in both) must
    agree."""
    params = _body_params(body) if matched.body else _query_params(query)
    for name, value in zip(matched.path_fields, ids, strict=True):
        said = params.get(name)
        if said not in (None, "", value):
            raise A2AError.invalid_params(
                f"params.{name} differs from the {name} in the path ({quoted_id(value)})"
            )
        params[name] = value
    return params


def _body_params(body: bytes | bytearray) -> JSONObject:
    if not body or body.isspace():
        return {}  # a cancel or a subscribe may come without a body
    parsed = load(body)
    document: Any = parsed.document
    if not isinstance(document, dict):
        raise InvalidRequest(ErrorCode.INVALID_REQUEST, "The request body must be a JSON object")
    problem = unwritable(document, "body", text=may_hold_surrogates(parsed.rest))
    if problem is not None:
        raise A2AError.invalid_params(problem)
    return document


def _query_params(query: Mapping[str, str]) -> JSONObject:
    params: JSONObject = {}
    for name, raw in query.items():
        if name in _QUERY_INTS:
            if not raw.isascii() or not raw.isdigit() or len(raw) > 9:
                raise A2AError.invalid_params(
                    f"The query's {name} must be a whole number >= 0, got {raw[:20]!r}"
                )
            params[name] = int(raw)
        elif name in _QUERY_BOOLS:
            if raw.lower() not in _BOOLS:
                raise A2AError.invalid_params(
                    f"The query's {name} must be true or false, got {raw[:20]!r}"
                )
            params[name] = _BOOLS[raw.lower()]
        else:
            params[name] = raw
    return params


# A2A 1.0.1 §5.4 (its "recent transcoding-related error changes"): each A2A error's HTTP
# status and google.rpc.Code name, the HTTP status being the one google.rpc.Code maps its
# name to (1.0.0's table said 409, 415 and 502, and UNIMPLEMENTED for three of them). The
# JSON-RPC errors' rows are as the SDKs (a2a-sdk 1.3.0, @a2a-js/sdk 1.3.0) answer them;
# both SDKs' clients tell errors apart by the ErrorInfo's reason, not the status.
_STATUSES: dict[ErrorCode, tuple[int, str]] = {
    ErrorCode.PARSE_ERROR: (400, "INVALID_ARGUMENT"),
    ErrorCode.INVALID_REQUEST: (400, "INVALID_ARGUMENT"),
    ErrorCode.METHOD_NOT_FOUND: (404, "NOT_FOUND"),
    ErrorCode.INVALID_PARAMS: (400, "INVALID_ARGUMENT"),
    ErrorCode.INTERNAL_ERROR: (500, "INTERNAL"),
    ErrorCode.TASK_NOT_FOUND: (404, "NOT_FOUND"),
    ErrorCode.TASK_NOT_CANCELABLE: (400, "FAILED_PRECONDITION"),
    ErrorCode.PUSH_NOTIFICATION_NOT_SUPPORTED: (400, "FAILED_PRECONDITION"),
    ErrorCode.UNSUPPORTED_OPERATION: (400, "FAILED_PRECONDITION"),
    ErrorCode.CONTENT_TYPE_NOT_SUPPORTED: (400, "INVALID_ARGUMENT"),
    ErrorCode.INVALID_AGENT_RESPONSE: (500, "INTERNAL"),
    ErrorCode.EXTENDED_AGENT_CARD_NOT_CONFIGURED: (400, "FAILED_PRECONDITION"),
    ErrorCode.EXTENSION_SUPPORT_REQUIRED: (400, "FAILED_PRECONDITION"),
    ErrorCode.VERSION_NOT_SUPPORTED: (400, "FAILED_PRECONDITION"),
    # A2A 1.1 as drafted: ABORTED, which google.rpc.Code maps to 409.
    ErrorCode.TASK_GENERATION_MISMATCH: (409, "ABORTED"),
    ErrorCode.SERVER_BUSY: (503, "UNAVAILABLE"),
}
# Statuses the edge answers for its own reasons, whatever the error's code.
_NAMES = {
    401: "UNAUTHENTICATED",
    403: "PERMISSION_DENIED",
    405: "UNIMPLEMENTED",
    413: "INVALID_ARGUMENT",
}


def error_status(error: A2AError) -> int:
    """The HTTP status an error is answered with."""
    if isinstance(error, NoRoute) and error.allowed:
        return 405
    return _STATUSES[error.code][0]


def error_body(error: A2AError, status: int) -> bytes:
    """The binding's error body: a google.rpc.Status whose ErrorInfo's reason names the A2A
    error, which is how both SDKs' REST clients tell one error from another."""
    reason = "INVALID_REQUEST" if error.code is ErrorCode.PARSE_ERROR else error.code.name
    info: JSONObject = {
        "@type": "type.googleapis.com/google.rpc.ErrorInfo",
        "reason": reason,
        "domain": "a2a-protocol.org",
    }
    if error.metadata:
        info["metadata"] = error.metadata
    name = _NAMES.get(status) or _STATUSES[error.code][1]
    document = {"code": status, "status": name, "message": error.message, "details": [info]}
    return dump({"error": document})
