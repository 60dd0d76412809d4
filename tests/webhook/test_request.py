"""What the workflow receives: a turn's request as its JSON body (webhook/request.py)."""

from __future__ import annotations

import json

from n8n_a2a.protocol.model import FileContent, Part
from n8n_a2a.webhook.request import WebhookRequest


def test_the_body_holds_the_text_the_ids_and_the_data_and_files() -> None:
    parts = (
        Part("hi"),
        Part.of_data({"rows": 2}),
        Part.of_file(FileContent.of_bytes("a.csv", "text/csv", b"x,y")),
    )
    request = WebhookRequest("hi", "t-1", "c-1", "m-1", "check", parts)
    assert json.loads(bytes(request.body())) == {
        "text": "hi",
        "taskId": "t-1",
        "contextId": "c-1",
        "messageId": "m-1",
        "skillId": "check",
        "data": [{"rows": 2}],
        "files": [{"name": "a.csv", "mediaType": "text/csv", "base64": "eCx5"}],
    }


def test_a_resumed_turn_posts_the_same_body_and_never_shows_where() -> None:
    plain = WebhookRequest("salt", "t-1", "c-1", "m-2", "check")
    resumed = WebhookRequest(
        "salt", "t-1", "c-1", "m-2", "check", resume="/webhook-waiting/5?signature=5ecret"
    )
    assert resumed.body() == plain.body()
    assert "5ecret" not in repr(resumed) and resumed != plain
