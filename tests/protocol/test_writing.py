"""Strict, compact JSON out: a document without files in one piece, one with a file's
base64 as pieces that hold the file's own buffers, the same bytes json.dumps would write."""

from __future__ import annotations

import json
import math
from typing import Any

import pytest

from n8n_a2a.protocol import writing
from n8n_a2a.protocol.base64_bytes import Base64Bytes
from n8n_a2a.protocol.writing import Pieces, dump, written
from tests.support.documents import replaced

FILE = Base64Bytes.of_bytes(bytes(range(256)) * 4096)  # 1 MiB, 1.33 MiB of base64
SMALL = Base64Bytes((memoryview(b"QUJD"), b""), 3)


def as_text(document: Any) -> Any:
    """The document with each file's base64 as a string: what json.dumps is given."""
    return replaced(document, Base64Bytes, lambda value: value.text())


def dumps(document: Any) -> bytes:
    return json.dumps(document, ensure_ascii=False, separators=(",", ":")).encode()


def test_a_document_without_files_is_bytes_as_json_dumps_writes_them() -> None:
    document = {"text": "héllo \u2028", "n": [1, 2.5, None, True], "s": "\x00\n"}
    assert written(document) == dumps(document)


def test_a_document_with_files_is_pieces_holding_the_files_buffers() -> None:
    document = {"parts": [{"raw": FILE}, {"text": "between"}, {"raw": SMALL}], "end": 1}
    found = written(document)
    assert isinstance(found, Pieces)
    assert bytes(found) == dumps(as_text(document)) and len(found) == len(bytes(found))
    assert found.copied == len(found) - len(FILE) - len(SMALL)
    assert any(buffer is FILE.pieces[0] for buffer in found.buffers)
    assert any(buffer is SMALL.pieces[0] for buffer in found.buffers)
    assert dump(document) == dumps(as_text(document))


def test_a_file_alone_is_a_document_too() -> None:
    assert bytes(written(SMALL)) == b'"QUJD"'
    assert bytes(written([SMALL, SMALL])) == b'["QUJD","QUJD"]'


def test_a_document_holding_the_marker_has_its_files_written_as_strings() -> None:
    document = {"raw": SMALL, "text": writing._MARKER}
    assert written(document) == dumps(as_text(document))


@pytest.mark.parametrize("value", [math.nan, math.inf, "\ud800"])
def test_what_json_cannot_write_is_written_replaced_beside_a_file(value: object) -> None:
    replaced = None if isinstance(value, float) else "\ufffd"
    assert bytes(written({"raw": SMALL, "v": value})) == dumps({"raw": "QUJD", "v": replaced})


def test_what_is_no_json_still_fails() -> None:
    with pytest.raises(TypeError):
        written({"raw": SMALL, "v": object()})
    with pytest.raises(TypeError):
        written({"v": object()})


async def test_pieces_go_out_in_slices_that_are_views_not_copies() -> None:
    found = written({"raw": FILE})
    assert isinstance(found, Pieces)
    slices = [piece async for piece in found]
    assert all(len(piece) <= writing.SLICE_BYTES for piece in slices)
    assert b"".join(slices) == bytes(found)
    views = [piece for piece in slices if isinstance(piece, memoryview)]
    assert views and all(view.obj is FILE.pieces[0] for view in views)
