"""What the workflow receives: a turn's request as its JSON body (webhook/request.py)."""

from __future__ import annotations

import json

from n8n_a2a.protocol import base64_bytes
from n8n_a2a.protocol.carving import Carved
from n8n_a2a.protocol.model import FileContent, Part
from n8n_a2a.protocol.writing import Pieces
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


def test_a_files_base64_goes_as_the_very_slice_of_the_body_it_came_in() -> None:
    body = bytearray(b'{"raw":"' + b"QUJD" * 30_000 + b'QQ"}')
    carved = Carved(memoryview(body)[8:-2], url_safe=False)
    encoded = base64_bytes.parse(carved)
    assert encoded is not None
    file = Part.of_file(FileContent.of_base64("a.bin", "application/octet-stream", encoded))
    sent = WebhookRequest("hi", "t-1", "c-1", "m-1", "check", (file,)).body()
    assert isinstance(sent, Pieces)
    assert any(piece is carved.view for piece in sent.buffers)  # never copied
    [entry] = json.loads(bytes(sent))["files"]
    assert entry["base64"] == "QUJD" * 30_000 + "QQ=="  # padded as it goes
