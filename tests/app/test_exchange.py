from __future__ import annotations

from collections.abc import AsyncGenerator
from typing import Any

import pytest
import trio

from n8n_a2a.app.exchange import Answer, Fields, LastPiece, json_answer, not_allowed, send_answer
from n8n_a2a.budget import MemoryBudget
from n8n_a2a.core.errors import BodyTooLarge
from n8n_a2a.protocol.base64_bytes import Base64Bytes
from n8n_a2a.protocol.writing import SLICE_BYTES, Pieces, written
from tests.support.asgi import asked


def test_a_header_is_found_whatever_its_case_and_a_repeated_one_is_its_first() -> None:
    fields = Fields.of_headers([(b"A2A-Version", b"1.0"), (b"a2a-version", b"0.3")])
    assert fields.get("a2a-version") == fields.get("A2A-VERSION") == "1.0"
    assert fields.get("Authorization") is None


def test_the_query_is_decoded_and_a_repeated_argument_is_its_first() -> None:
    request = asked("GET", "/tasks", query=b"pageSize=5&status=a%20b&pageSize=9&empty=")
    assert request.args == {"pageSize": "5", "status": "a b", "empty": ""}


async def test_a_body_comes_whole_from_its_pieces() -> None:
    request = asked("POST", "/", body=b"ef", pieces=(b"ab", b"cd"))
    assert await request.body() == b"abcdef"


async def test_a_body_past_the_bound_is_refused_announced_or_as_it_comes() -> None:
    announced = asked("POST", "/", {"Content-Length": "11"}, b"x" * 11, max_body_bytes=10)
    with pytest.raises(BodyTooLarge):
        await announced.body()
    chunked = asked("POST", "/", body=b"x", pieces=(b"x" * 5, b"x" * 5), max_body_bytes=10)
    with pytest.raises(BodyTooLarge):
        await chunked.body()
    assert await asked("POST", "/", body=b"x" * 10, max_body_bytes=10).body() == b"x" * 10


async def test_an_answer_of_bytes_goes_with_its_length_and_its_type() -> None:
    sent: list[Any] = []

    async def send(event: Any) -> None:
        sent.append(event)

    answer = not_allowed("POST")
    await send_answer(answer, send)
    start, body = sent
    assert start["status"] == 405
    assert (b"allow", b"POST") in start["headers"]
    assert (b"content-type", b"application/json") in start["headers"]
    assert (b"content-length", str(len(body["body"])).encode()) in start["headers"]
    assert body["more_body"] is False


async def test_an_answer_holding_a_file_goes_in_views_of_its_buffers() -> None:
    sent: list[Any] = []

    async def send(event: Any) -> None:
        sent.append(event)

    file = Base64Bytes.of_bytes(bytes(3 * SLICE_BYTES))  # base64: four slices
    body = written({"raw": file})
    assert isinstance(body, Pieces)
    await send_answer(json_answer(body), send)
    start, *pieces, end = sent
    assert (b"content-length", str(len(body)).encode()) in start["headers"]
    assert all(piece["more_body"] for piece in pieces) and end == {
        "type": "http.response.body",
        "body": b"",
        "more_body": False,
    }
    assert b"".join(piece["body"] for piece in pieces) == bytes(body)
    views = [piece["body"] for piece in pieces if isinstance(piece["body"], memoryview)]
    assert len(views) == 4 and all(view.obj is file.pieces[0] for view in views)


async def test_a_send_s_answer_holds_its_files_until_written_and_a_read_s_what_it_copies() -> None:
    """A send's files are its own task's, which the store may give up meanwhile: held with
    the answer. A read's are kept tasks' (several reads, one task's bytes): not."""
    file = Base64Bytes.of_bytes(bytes(3 * SLICE_BYTES))
    budget = MemoryBudget(64 * SLICE_BYTES, wait=0.0)
    held: list[int] = []

    async def send(event: Any) -> None:
        held.append(room.size)

    for its_own in (True, False):
        body = written({"raw": file, "text": "answered"})
        assert isinstance(body, Pieces)
        room = budget.reservation("ann")
        answer = json_answer(body)
        answer.files_its_own = its_own
        held.clear()
        await send_answer(answer, send, room)
        assert set(held) == {len(body) if its_own else body.copied}
        room.give_back()
    assert budget.held == 0


async def test_a_stream_goes_piece_by_piece_and_is_closed_when_its_client_goes() -> None:
    closed = trio.Event()

    async def events() -> AsyncGenerator[bytes, None]:
        try:
            yield b"one"
            yield b"two"
        finally:
            closed.set()

    sent: list[Any] = []

    async def send(event: Any) -> None:
        sent.append(event)

    await send_answer(Answer(events(), headers={"Content-Type": "text/event-stream"}), send)
    assert [event.get("body") for event in sent[1:]] == [b"one", b"two", b""]
    assert [event.get("more_body") for event in sent[1:]] == [True, True, False]
    assert closed.is_set()
    closed = trio.Event()

    async def gone(event: Any) -> None:
        if event["type"] == "http.response.body":
            raise trio.BrokenResourceError

    with pytest.raises(trio.BrokenResourceError):
        await send_answer(Answer(events()), gone)
    assert closed.is_set()


async def test_a_streams_last_piece_goes_with_the_bodys_end() -> None:
    async def events() -> AsyncGenerator[bytes, None]:
        yield b"working"
        yield LastPiece(b"completed")

    sent: list[Any] = []

    async def send(event: Any) -> None:
        sent.append(event)

    await send_answer(Answer(events()), send)
    bodies = [(event["body"], event["more_body"]) for event in sent[1:]]
    assert bodies == [(b"working", True), (b"completed", False)]
