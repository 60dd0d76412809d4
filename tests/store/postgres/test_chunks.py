"""A streamed answer's chunks as NOTIFY payloads, and back (pure: no database)."""

from __future__ import annotations

import pytest

from n8n_a2a.protocol.model import Artifact, ArtifactUpdate, Part
from n8n_a2a.store.postgres.chunks import (
    MAX_PAYLOAD,
    MAX_PENDING,
    Reassembly,
    chunk_payloads,
)


def chunk(text: str, task: str = "t-1", relayed: int = 4) -> ArtifactUpdate:
    artifact = Artifact("answer-1", "answer", (Part(text),))
    return ArtifactUpdate(task, "c-1", artifact, 3, append=True, last_chunk=False, relayed=relayed)


@pytest.mark.parametrize(
    "text",
    [
        "Yes, 12",
        "x" * 20_000,  # pieces
        '"\\\n\t' * 3000,  # every character escaped
        "ü€😀" * 4000,  # not ASCII: \\u escapes, surrogate pairs
        "cut \ud83d emoji",  # a lone surrogate goes as it came
        "",
    ],
)
def test_a_chunk_goes_in_payloads_under_postgresqls_bound_and_comes_back_whole(
    text: str,
) -> None:
    sent = chunk(text)
    payloads = chunk_payloads("replica-a", sent)
    assert all(len(p.encode()) <= MAX_PAYLOAD and p.isascii() for p in payloads)
    heard = Reassembly("replica-b")
    *pending, last = [heard.take(p.encode()) for p in payloads]
    assert pending == [None] * (len(payloads) - 1)
    assert last == sent


def test_a_replica_skips_its_own_chunks_and_ignores_what_is_none_of_ours() -> None:
    mine = Reassembly("replica-a")
    assert mine.take(chunk_payloads("replica-a", chunk("hi"))[0].encode()) is None
    for payload in (b"not json", b"[]", b'{"o": "x"}', b"\xff", b'{"i": true}'):
        assert mine.take(payload) is False


def test_a_chunk_missing_a_piece_is_dropped_and_the_pending_are_bounded() -> None:
    heard = Reassembly("replica-b")
    first, _, third, *_ = chunk_payloads("replica-a", chunk("x" * 30_000))
    assert heard.take(first.encode()) is None
    assert heard.take(third.encode()) is None  # the second never came: dropped
    for number in range(MAX_PENDING + 10):  # first pieces only, never finished
        payload = chunk_payloads("replica-a", chunk("y" * 9000, task=f"t-{number}"))[0]
        assert heard.take(payload.encode()) is None
    assert len(heard._pending) == MAX_PENDING
