from __future__ import annotations

import json

from n8n_a2a.app.rest import RestFrames
from n8n_a2a.protocol.errors import A2AError, ErrorCode
from n8n_a2a.protocol.versions import V1


def test_an_event_is_the_stream_response_itself() -> None:
    assert RestFrames(V1).result({"task": {"id": "t"}}) == b'data: {"task":{"id":"t"}}\n\n'


def test_an_error_is_an_error_event_of_the_binding_s_error_body() -> None:
    frame = RestFrames(V1).error(A2AError(ErrorCode.SERVER_BUSY, "too slow"))
    head, data = frame.decode().split("\n", 1)
    assert head == "event: error"
    error = json.loads(data.removeprefix("data: "))["error"]
    assert (error["code"], error["status"], error["message"]) == (503, "UNAVAILABLE", "too slow")
    assert error["details"][0]["reason"] == "SERVER_BUSY"
