from __future__ import annotations

import json

import pytest

from n8n_a2a.protocol import rest
from n8n_a2a.protocol.errors import A2AError, ErrorCode, NoRoute
from n8n_a2a.protocol.model import CancelTask, GetTask, ListTasks, Operation, SendMessage
from n8n_a2a.protocol.push import CreatePushConfig, DeletePushConfig
from n8n_a2a.protocol.versions import V1, V11
from tests.support import spec_errors
from tests.support.spec_errors import SpecError


@pytest.mark.parametrize(
    ("http_method", "path", "method", "ids"),
    [
        ("POST", "/message:send", "SendMessage", ()),
        ("POST", "/message:stream", "SendStreamingMessage", ()),
        ("GET", "/tasks", "ListTasks", ()),
        ("GET", "/tasks/t-1", "GetTask", ("t-1",)),
        ("POST", "/tasks/t-1:cancel", "CancelTask", ("t-1",)),
        ("POST", "/tasks/t-1:subscribe", "SubscribeToTask", ("t-1",)),
        ("GET", "/tasks/t-1:subscribe", "SubscribeToTask", ("t-1",)),
        (
            "POST",
            "/tasks/t-1/pushNotificationConfigs",
            "CreateTaskPushNotificationConfig",
            ("t-1",),
        ),
        ("GET", "/tasks/t-1/pushNotificationConfigs", "ListTaskPushNotificationConfigs", ("t-1",)),
        (
            "GET",
            "/tasks/t-1/pushNotificationConfigs/c",
            "GetTaskPushNotificationConfig",
            ("t-1", "c"),
        ),
        (
            "DELETE",
            "/tasks/t-1/pushNotificationConfigs/c",
            "DeleteTaskPushNotificationConfig",
            ("t-1", "c"),
        ),
        ("GET", "/extendedAgentCard", "GetExtendedAgentCard", ()),
    ],
)
def test_every_route_names_a_v1_method(
    http_method: str, path: str, method: str, ids: tuple[str, ...]
) -> None:
    matched, found = rest.route(http_method, path)
    assert (matched.method, found) == (method, ids)
    assert method in V1.facts.methods


def test_every_v1_method_has_a_route() -> None:
    assert {route.method for route in rest.ROUTES} == set(V1.facts.methods)


@pytest.mark.parametrize(
    ("http_method", "path", "allowed"),
    [
        ("GET", "/nowhere", ()),
        ("GET", "/tasks/t-1/other", ()),
        ("GET", "/tasks/", ()),
        ("DELETE", "/message:send", ("POST",)),
        ("PATCH", "/tasks/t-1:subscribe", ("POST", "GET")),
    ],
)
def test_a_path_or_method_not_served_is_refused_saying_what_is(
    http_method: str, path: str, allowed: tuple[str, ...]
) -> None:
    with pytest.raises(NoRoute) as refused:
        rest.route(http_method, path)
    assert refused.value.allowed == allowed
    assert rest.error_status(refused.value) == (405 if allowed else 404)


def test_a_long_path_is_quoted_short() -> None:
    with pytest.raises(NoRoute) as refused:
        rest.route("GET", "/x" * 10_000)
    assert len(refused.value.message) < 200


def decode(
    http_method: str, path: str, query: dict[str, str] | None = None, body: bytes = b""
) -> Operation:
    matched, ids = rest.route(http_method, path)
    return V1.decode(matched.method, rest.params_of(matched, ids, query or {}, body))


def test_a_send_decodes_as_json_rpc_s_params_do() -> None:
    body = {"message": {"messageId": "m", "role": "ROLE_USER", "parts": [{"text": "hi"}]}}
    operation = decode("POST", "/message:send", body=json.dumps(body).encode())
    assert isinstance(operation, SendMessage)
    assert operation == V1.decode("SendMessage", body)


def test_the_query_is_read_with_its_numbers_and_booleans() -> None:
    assert decode("GET", "/tasks/t-1", {"historyLength": "3"}) == GetTask("t-1", 3)
    listed = decode("GET", "/tasks", {"pageSize": "5", "includeArtifacts": "true", "x": "y"})
    assert isinstance(listed, ListTasks)
    assert (listed.page_size, listed.include_artifacts) == (5, True)


@pytest.mark.parametrize(
    ("query", "named"),
    [
        ({"pageSize": "-1"}, "pageSize"),
        ({"pageSize": "1e3"}, "pageSize"),
        ({"pageSize": "9" * 5000}, "pageSize"),
        ({"pageSize": "\u0661"}, "pageSize"),  # an Arabic-Indic one: isdigit() says yes
        ({"includeArtifacts": "yes"}, "includeArtifacts"),
        ({"status": "RUNNING"}, "status"),
    ],
)
def test_a_bad_query_value_is_invalid_params_naming_it(query: dict[str, str], named: str) -> None:
    with pytest.raises(A2AError) as refused:
        decode("GET", "/tasks", query)
    assert refused.value.code is ErrorCode.INVALID_PARAMS
    assert named in refused.value.message
    assert len(refused.value.message) < 200


def test_the_path_s_ids_fill_the_params_and_the_body_must_agree() -> None:
    assert decode("POST", "/tasks/t-1:cancel") == CancelTask("t-1")
    assert decode("POST", "/tasks/t-1:cancel", body=b'{"id": "t-1"}') == CancelTask("t-1")
    with pytest.raises(A2AError, match=r"params\.id differs from the id in the path \(t-1\)"):
        decode("POST", "/tasks/t-1:cancel", body=b'{"id": "t-2"}')
    created = decode(
        "POST", "/tasks/t-1/pushNotificationConfigs", body=b'{"url": "https://r.example/"}'
    )
    assert isinstance(created, CreatePushConfig)
    assert created.config.task_id == "t-1"
    assert decode("DELETE", "/tasks/t-1/pushNotificationConfigs/c") == DeletePushConfig("t-1", "c")


def test_an_id_past_the_bound_is_refused_naming_it() -> None:
    with pytest.raises(A2AError, match=r"params\.id must be at most 1024"):
        decode("GET", "/tasks/" + "x" * 1025)


@pytest.mark.parametrize(
    ("body", "code"),
    [
        (b"{", ErrorCode.PARSE_ERROR),
        (b"[]", ErrorCode.INVALID_REQUEST),
        (b'"text"', ErrorCode.INVALID_REQUEST),
        (b'{"message": NaN}', ErrorCode.PARSE_ERROR),
        (b'{"message": "\\ud800"}', ErrorCode.INVALID_PARAMS),
        (b"[" * 100_000, ErrorCode.PARSE_ERROR),
    ],
)
def test_a_body_that_is_no_json_object_is_refused(body: bytes, code: ErrorCode) -> None:
    with pytest.raises(A2AError) as refused:
        decode("POST", "/message:send", body=body)
    assert refused.value.code is code


def error_body_of(error: A2AError, status: int) -> dict[str, object]:
    """The google.rpc.Status body the binding writes for `error`, read back."""
    document: dict[str, object] = json.loads(rest.error_body(error, status))["error"]
    return document


def status_body(status: int, name: str, reason: str) -> dict[str, object]:
    """The body §11.6 asks for: the status, its google.rpc.Code name, an ErrorInfo."""
    info = {
        "@type": "type.googleapis.com/google.rpc.ErrorInfo",
        "reason": reason,
        "domain": "a2a-protocol.org",
    }
    return {"code": status, "status": name, "message": "what went wrong", "details": [info]}


@pytest.mark.parametrize("row", spec_errors.TABLE, ids=lambda row: row.name)
def test_each_a2a_error_is_its_spec_v1_0_1_status_name_and_reason(row: SpecError) -> None:
    """§5.4's table as released in v1.0.1, every row: the HTTP status, the google.rpc.Code
    name (its gRPC column) and the ErrorInfo reason (§11.6) of the error with its code."""
    error = A2AError(ErrorCode(row.code), "what went wrong")
    assert rest.error_status(error) == row.http_status
    assert error_body_of(error, row.http_status) == status_body(
        row.http_status, row.grpc_status, row.reason
    )


def test_every_a2a_error_code_of_the_spec_is_a_row_of_the_table() -> None:
    # -32010 is A2A 1.1's (drafted), not 1.0.1's: below with the JSON-RPC errors.
    ours = {code for code in ErrorCode if code.is_a2a} - {ErrorCode.TASK_GENERATION_MISMATCH}
    assert {ErrorCode(row.code) for row in spec_errors.TABLE} == ours


@pytest.mark.parametrize(
    ("code", "status", "name", "reason"),
    [
        # JSON-RPC's own errors, which §5.4 leaves out: as a2a-sdk 1.3.0 and @a2a-js/sdk
        # 1.3.0 answer them (a body that is no JSON reads as an invalid request there).
        (ErrorCode.INVALID_PARAMS, 400, "INVALID_ARGUMENT", "INVALID_PARAMS"),
        (ErrorCode.PARSE_ERROR, 400, "INVALID_ARGUMENT", "INVALID_REQUEST"),
        (ErrorCode.INVALID_REQUEST, 400, "INVALID_ARGUMENT", "INVALID_REQUEST"),
        (ErrorCode.METHOD_NOT_FOUND, 404, "NOT_FOUND", "METHOD_NOT_FOUND"),
        (ErrorCode.INTERNAL_ERROR, 500, "INTERNAL", "INTERNAL_ERROR"),
        (ErrorCode.SERVER_BUSY, 503, "UNAVAILABLE", "SERVER_BUSY"),
        # A2A 1.1 as drafted (§3.3.2, §11.6).
        (ErrorCode.TASK_GENERATION_MISMATCH, 409, "ABORTED", "TASK_GENERATION_MISMATCH"),
    ],
)
def test_an_error_outside_the_spec_s_table_is_a_status_and_a_google_rpc_status_body(
    code: ErrorCode, status: int, name: str, reason: str
) -> None:
    error = A2AError(code, "what went wrong")
    assert rest.error_status(error) == status
    assert error_body_of(error, status) == status_body(status, name, reason)


def test_an_errors_metadata_goes_in_its_error_info() -> None:
    metadata = {"taskId": "t-1", "expectedGeneration": "3", "currentGeneration": "5"}
    error = A2AError(ErrorCode.TASK_GENERATION_MISMATCH, "mismatch", metadata)
    [info] = json.loads(rest.error_body(error, 409))["error"]["details"]
    assert (info["reason"], info["metadata"]) == ("TASK_GENERATION_MISMATCH", metadata)


def test_a_long_poll_s_generation_is_read_from_the_query_as_int64() -> None:
    asked = decode("GET", "/tasks/t-1", {"currentGeneration": "9223372036854775807"})
    assert asked == GetTask("t-1", None, 2**63 - 1)
    with pytest.raises(A2AError) as refused:
        decode("GET", "/tasks/t-1", {"currentGeneration": "9223372036854775808"})
    assert "currentGeneration" in refused.value.message


def test_every_error_code_has_a_status() -> None:
    for code in ErrorCode:
        assert rest.error_status(A2AError(code, "x")) >= 400


def test_the_edge_s_own_statuses_name_theirs() -> None:
    body = json.loads(rest.error_body(A2AError(ErrorCode.INVALID_REQUEST, "no"), 401))
    assert (body["error"]["code"], body["error"]["status"]) == (401, "UNAUTHENTICATED")


@pytest.mark.parametrize(
    ("requested", "refused"),
    [(None, False), ("", False), ("1.0", False), ("1", False), ("0.3", True), ("9.9", True)],
)
def test_no_version_is_1_0_and_any_other_than_1_0_is_refused(
    requested: str | None, refused: bool
) -> None:
    codec, unsupported = rest.codec_for(requested)
    assert codec is V1
    assert (unsupported is not None) == refused
    if unsupported is not None:
        assert unsupported.code is ErrorCode.VERSION_NOT_SUPPORTED


def test_the_1_1_draft_is_served_on_1_0_s_routes_with_the_generation() -> None:
    codec, unsupported = rest.codec_for("1.1")
    assert (codec, unsupported) == (V11, None)


@pytest.mark.parametrize(
    ("accept", "answered"),
    [
        (None, rest.JSON),
        ("*/*", rest.JSON),
        ("application/a2a+json, application/json", rest.JSON),
        ("application/json", rest.JSON),
        ("application/a2a+json", rest.MEDIA_TYPE),
        ("application/a2a+json; q=0.9", rest.MEDIA_TYPE),
    ],
)
def test_the_answer_is_json_unless_only_the_a2a_media_type_is_accepted(
    accept: str | None, answered: str
) -> None:
    assert rest.answer_type(accept) == answered
