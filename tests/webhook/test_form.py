"""The multipart/form-data body: its exact framing, names that cannot make a header, its
pieces sent without copying a file whole."""

from __future__ import annotations

from email.message import EmailMessage

import pytest

from n8n_a2a.webhook.form import SLICE_BYTES, FormBody, FormFile, file_field, form_body
from tests.support.forms import parsed_form


def parsed(body: FormBody) -> list[EmailMessage]:
    return parsed_form(body.content_type, bytes(body))


def test_the_exact_framing() -> None:
    files = (FormFile("file0", "stock.csv", "text/csv", b"item,pallets\r\nflour,12\r\n"),)
    body = form_body('{"text":"hi"}', files, boundary="BOUNDARY")
    assert body.content_type == "multipart/form-data; boundary=BOUNDARY"
    assert bytes(body) == (
        b"--BOUNDARY\r\n"
        b'Content-Disposition: form-data; name="request"\r\n'
        b"\r\n"
        b'{"text":"hi"}\r\n'
        b"--BOUNDARY\r\n"
        b'Content-Disposition: form-data; name="file0"; filename="stock.csv"\r\n'
        b"Content-Type: text/csv\r\n"
        b"\r\n"
        b"item,pallets\r\nflour,12\r\n\r\n"
        b"--BOUNDARY--\r\n"
    )
    assert len(body) == len(bytes(body))


def test_no_files_is_the_json_field_alone() -> None:
    body = form_body("{}", (), boundary="B")
    assert (
        bytes(body)
        == b'--B\r\nContent-Disposition: form-data; name="request"\r\n\r\n{}\r\n--B--\r\n'
    )


@pytest.mark.parametrize(
    ("name", "written"),
    [
        ('say "hi".csv', b'filename="say %22hi%22.csv"'),
        ("a.csv\r\nContent-Type: text/html", b'filename="a.csv%0D%0AContent-Type: text/html"'),
        ('x"\r\n\r\n--B--\r\n', b'filename="x%22%0D%0A%0D%0A--B--%0D%0A"'),
        ("tab\there\x00\x7f", b'filename="tab%09here%00%7F"'),
        ("Prüfbericht ✓.pdf", 'filename="Prüfbericht ✓.pdf"'.encode()),
        ("\ud83d.txt", 'filename="\ufffd.txt"'.encode()),  # a lone surrogate has no UTF-8
    ],
)
def test_a_file_name_never_makes_a_header(name: str, written: bytes) -> None:
    body = form_body("{}", (FormFile("file0", name, "text/plain", b"x"),), boundary="B")
    raw = bytes(body)
    assert written in raw
    # Still two parts, each with exactly its own headers, as another parser reads them.
    request, file = parsed(body)
    assert request.get_content() == "{}"
    assert list(file.keys()) == ["Content-Disposition", "Content-Type"]
    assert file.get_content_type() == "text/plain"
    assert file.get_payload(decode=True) == b"x"


def test_a_nameless_file_is_named_after_its_field() -> None:
    # n8n drops a form file with an empty name and no bytes: it must keep the file.
    body = form_body("{}", (FormFile("file0", "", "text/plain", b""),), boundary="B")
    assert b'name="file0"; filename="file0"\r\n' in bytes(body)


def test_a_media_type_that_is_not_a_plain_token_is_sent_as_octet_stream() -> None:
    odd = FormFile("file0", "a", "text/plain\r\nX-Evil: 1", b"x")
    assert b"Content-Type: application/octet-stream\r\n\r\nx\r\n" in bytes(form_body("{}", (odd,)))


def test_the_json_is_utf8_with_lone_surrogates_replaced() -> None:
    body = form_body('{"text":"ü \ud83d"}', (), boundary="B")
    assert '{"text":"ü \ufffd"}'.encode() in bytes(body)


def test_a_fresh_boundary_each_body() -> None:
    first, second = form_body("{}", ()), form_body("{}", ())
    assert first.boundary != second.boundary
    assert first.boundary.startswith("n8n-a2a-") and len(first.boundary) == 40
    assert parsed(first)[0].get_content() == "{}"


def test_the_fields_are_n8ns_binary_names() -> None:
    assert [file_field(index) for index in range(3)] == ["file0", "file1", "file2"]


async def test_sent_in_slices_that_refer_to_the_file_and_again_from_its_start() -> None:
    content = bytes(range(256)) * (3 * SLICE_BYTES // 256 + 7)
    body = form_body("{}", (FormFile("file0", "big.bin", "application/octet-stream", content),))
    for _ in range(2):  # a retried send reads it whole again
        slices = [piece async for piece in body]
        assert b"".join(slices) == bytes(body)
        assert max(len(piece) for piece in slices) == SLICE_BYTES
    # The file's own bytes object is the piece: the body holds no copy of it.
    assert any(piece is content for piece in body.pieces)
