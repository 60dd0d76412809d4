"""A streamed reply's lines, as n8n 2.41 writes them: what is gathered, relayed, refused."""

from __future__ import annotations

import json
from typing import Any

import pytest

from n8n_a2a.core.chunks import MAX_KEY_CHARACTERS, MAX_OPEN_BEGINS, ChunkReader
from n8n_a2a.core.replies import StreamedReply

# The most text a reader gathers here (ADAPTER_MAX_REPLY_BYTES in the adapter).
BOUND = 1024 * 1024
MAX_LINE_BYTES = ChunkReader(BOUND).max_line_bytes
META = {"nodeId": "n1", "nodeName": "AI Agent", "itemIndex": 0, "runIndex": 0}


def line(kind: str, content: str | None = None, **metadata: Any) -> bytes:
    chunk: dict[str, Any] = {"type": kind, "metadata": {**META, **metadata}}
    if content is not None:
        chunk["content"] = content
    return json.dumps(chunk).encode() + b"\n"


def read(*pieces: bytes) -> StreamedReply:
    reader = ChunkReader(BOUND)
    for piece in pieces:
        reader.feed(piece)
    return reader.reply(200, None)


BEGIN, END = line("begin"), line("end")
KEEPALIVE = b'{"type":"keepalive"}\n'


@pytest.mark.parametrize(
    ("pieces", "text", "problem", "error"),
    [
        ((BEGIN, line("item", "Yes, "), KEEPALIVE, line("item", "12."), END), "Yes, 12.", "", ""),
        # Two nodes, each begun and ended; a line split across two reads.
        ((BEGIN + line("item", "a")[:9], line("item", "a")[9:] + END), "a", "", ""),
        ((line("begin", nodeId="x"), line("end", nodeId="x"), BEGIN, END), "", "", ""),
        ((BEGIN, line("item", "b"), END.rstrip(b"\n")), "b", "", ""),  # no last newline
        ((BEGIN, b"\n", b"  \n", END), "", "", ""),  # blank lines are nothing
        ((BEGIN, line("item", "x")), "x", "a begin without its end", ""),
        ((BEGIN, BEGIN, END, END), "", "", ""),  # the same node begun twice, ended twice
        (
            (line("begin", runIndex=0), line("end", runIndex=1)),
            "",
            "end came without its begin",
            "",
        ),
        ((END,), "", "an end came without its begin (nodeId 'n1')", ""),
        ((BEGIN, END, END), "", "an end came without its begin", ""),
        ((BEGIN, b"<html>\n", END), "", "not JSON", ""),
        ((BEGIN, b"[1]\n", END), "", "type None", ""),
        ((line("surprise"),), "", "type 'surprise'", ""),
        ((BEGIN, b'{"type":"item","content":{"a":1}}\n'), "", "content is not a string", ""),
        ((BEGIN, line("item", "par"), line("error", "down")), "par", "", "down"),
        ((BEGIN, line("error", "")), "", "", "(n8n gave no description)"),
        ((BEGIN, line("error")), "", "", "(n8n gave no description)"),  # a null description
    ],
)
def test_what_a_stream_comes_to(
    pieces: tuple[bytes, ...], text: str, problem: str, error: str
) -> None:
    reply = read(*pieces)
    assert reply.text == text
    assert problem in reply.problem and bool(problem) == bool(reply.problem)
    assert reply.error == error


def test_the_first_thing_wrong_stops_the_stream_and_its_line_is_shown() -> None:
    many = [line("item", "y" * 100) for _ in range(100)]
    reply = read(BEGIN, *many, b"oops\n", line("item", "after"), END)
    assert reply.text == "y" * 10_000 and "not JSON" in reply.problem
    assert reply.raw == "oops"
    unended = read(BEGIN, line("item", "x"))
    assert '"begin"' in unended.raw  # no line to blame: the stream's start


def test_the_text_past_its_bound_stops_the_stream_truncated() -> None:
    piece = "x" * (BOUND // 4)
    reader = ChunkReader(BOUND)
    for _ in range(5):
        reader.feed(line("item", piece))
    assert reader.stopped
    reply = reader.reply(200, None)
    assert reply.truncated and len(reply.text) == 4 * len(piece)
    assert reply.read_limit == BOUND  # for the reason to name


def test_a_line_past_its_bound_is_refused_before_it_ends() -> None:
    reader = ChunkReader(BOUND)
    reader.feed(b'{"type":"item","content":"' + b"x" * MAX_LINE_BYTES)
    assert reader.stopped
    # Named by the setting it follows: 2 x 1 MiB + 4 KiB.
    assert reader.problem == (
        "a line is longer than 2,101,248 bytes (twice ADAPTER_MAX_REPLY_BYTES and 4 KiB)"
    )


def test_a_whole_line_past_its_bound_is_refused_too() -> None:
    reader = ChunkReader(BOUND)
    reader.feed(b'{"type":"keepalive","x":"' + b"x" * MAX_LINE_BYTES + b'"}\n')
    assert reader.stopped and "longer than" in reader.problem
    assert len(reader.reply(200, None).raw) <= 8192


def test_a_long_line_in_small_pieces_stops_at_the_piece_past_its_bound() -> None:
    reader = ChunkReader(BOUND)
    reader.feed(b'{"type":"item","content":"')
    piece = b"x" * 1000
    fed = 26
    while fed + len(piece) <= MAX_LINE_BYTES:
        reader.feed(piece)
        fed += len(piece)
        assert not reader.stopped
    reader.feed(piece)
    assert reader.stopped and "longer than" in reader.problem
    assert reader.reply(200, None).raw.startswith('{"type":"item","content":"xxx')


def test_the_raw_text_kept_is_bounded() -> None:
    reader = ChunkReader(BOUND)
    for _ in range(100):
        reader.feed(line("item", "y" * 1000))
    assert len(reader.reply(200, None).raw) <= 8192


def test_an_emoji_cut_between_two_items_is_whole_again() -> None:
    halves = (b'{"type":"item","content":"\\ud83d"}\n', b'{"type":"item","content":"\\ude00"}\n')
    assert read(*halves).text == "\U0001f600"


@pytest.mark.parametrize(
    ("items", "relayed"),
    [
        (["Yes", ", 12", "."], ["Yes", ", 12", "."]),
        (["  ", "\n", "Yes"], ["", "", "  \nYes"]),  # blank: not decided yet
        (['{"answer": ', '"x", "escalate": false}'], ["", ""]),  # held back to be judged
        (["  {", "..."], ["", ""]),
        (["Use {braces}", " freely"], ["Use {braces}", " freely"]),
    ],
)
def test_what_is_relayed_as_it_comes(items: list[str], relayed: list[str]) -> None:
    reader = ChunkReader(BOUND)
    seen = []
    for item in items:
        reader.feed(line("item", item))
        seen.append(reader.relayable())
    assert seen == relayed


def test_nothing_is_relayed_once_the_stream_went_wrong() -> None:
    reader = ChunkReader(BOUND)
    reader.feed(line("item", "a"))
    assert reader.relayable() == "a"
    reader.feed(line("item", "b") + line("error", "down"))
    assert reader.relayable() == ""


def test_many_lines_of_one_read_are_one_relay() -> None:
    reader = ChunkReader(BOUND)
    reader.feed(b"".join(line("item", str(i)) for i in range(10)))
    assert reader.relayable() == "0123456789"
    assert reader.relayable() == ""


def test_metadata_of_any_shape_is_no_crash() -> None:
    deep = b'{"type":"begin","metadata":{"nodeId":' + b"[" * 100 + b"]" * 100 + b"}}\n"
    odd = b'{"type":"end","metadata":{"nodeId":{"a":[1]}}}\n'
    reply = read(deep, odd, b'{"type":"item","content":"x","metadata":7}\n')
    assert (reply.text, reply.problem) == ("x", "")
    too_deep = b'{"type":"begin","metadata":{"nodeId":' + b"[" * 100_000 + b"}}\n"
    assert "not JSON" in read(too_deep).problem


def test_open_begins_are_bounded() -> None:
    reader = ChunkReader(BOUND)
    reader.feed(b"".join(line("begin", nodeId=str(n)) for n in range(MAX_OPEN_BEGINS + 1)))
    assert reader.stopped and f"more than {MAX_OPEN_BEGINS} begins" in reader.problem


def test_sequential_begins_and_ends_past_the_open_bound_are_a_long_workflow() -> None:
    pairs = (line("begin", nodeId=str(n)) + line("end", nodeId=str(n)) for n in range(1100))
    reply = read(*pairs, line("item", "done"))
    assert (reply.text, reply.problem) == ("done", "")
    assert MAX_OPEN_BEGINS < 1100


def test_a_stray_end_stops_the_stream_at_once() -> None:
    reader = ChunkReader(BOUND)
    reader.feed(line("end", nodeId="a" * 100))
    assert reader.stopped and "an end came without its begin" in reader.problem
    reader.feed(line("end", nodeId="b"))  # nothing more is taken
    assert "'aaa" in reader.problem


@pytest.mark.parametrize("kind", ["begin", "end"])
def test_a_node_named_past_its_bound_stops_the_stream(kind: str) -> None:
    assert not read(
        line("begin", nodeId="n" * MAX_KEY_CHARACTERS), line("end", nodeId="n" * MAX_KEY_CHARACTERS)
    ).problem
    reply = read(line(kind, nodeId="n" * (MAX_KEY_CHARACTERS + 1)))
    assert f"names its node in more than {MAX_KEY_CHARACTERS} characters" in reply.problem
    assert reply.problem.startswith(f"a {kind} chunk")


def test_the_lines_of_a_reply_are_bounded() -> None:
    within = ChunkReader(BOUND, max_lines=10)
    within.feed(BEGIN + KEEPALIVE * 7 + b"\n" + END)
    assert within.reply(200, None).problem == ""
    past = ChunkReader(BOUND, max_lines=10)
    past.feed(BEGIN + KEEPALIVE * 8 + b"\n" + END)
    assert past.stopped and past.problem == "it is longer than 10 lines"


def test_many_tokens_of_one_character_are_one_text() -> None:
    reader = ChunkReader(BOUND)
    token = line("item", "a")
    relayed = []
    for _ in range(100):
        reader.feed(token * 500)
        relayed.append(reader.relayable())
    reply = reader.reply(200, None)
    assert reply.text == "a" * 50_000 == "".join(relayed) and not reply.problem
