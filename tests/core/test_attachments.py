"""An answer's data and files, read from a reply as the contract reads them, and cleaned of
the caller's token (test_contract.py judges them within whole replies)."""

from __future__ import annotations

import pytest

from n8n_a2a.core.attachments import cleaned, data_of, files_of
from n8n_a2a.protocol.media import Modes
from n8n_a2a.protocol.model import FileContent, Part

CSV_AND_PNG = Modes(outputs=("text/plain", "text/csv", "image/png"))


@pytest.mark.parametrize("value", [None, 0, "x", [1, {"a": None}], {}])
def test_data_is_one_data_part_whatever_json_value_it_is(value: object) -> None:
    assert data_of(value) == (Part.of_data(value),)


def test_files_are_a_file_part_each_in_order() -> None:
    files = [
        {"name": "r.csv", "mediaType": "text/csv", "base64": "YSxi"},
        {"name": "", "mediaType": "image/png", "url": "https://files.example/p.png"},
    ]
    assert files_of(files, CSV_AND_PNG) == (
        Part.of_file(FileContent.of_bytes("r.csv", "text/csv", b"a,b")),
        Part.of_file(FileContent("", "image/png", url="https://files.example/p.png")),
    )
    assert files_of([], CSV_AND_PNG) == ()


@pytest.mark.parametrize(
    ("files", "wrong"),
    [
        ({}, "'files' is not a list"),
        (["x"], "files[0] is not an object"),
        (
            [{"name": "a", "mediaType": "text/csv", "base64": ""}, {"name": "b"}],
            "files[1] has the keys ['name'], not name, mediaType and one of base64 or url",
        ),
        (
            [{"name": "a", "mediaType": "text/csv", "url": 1}],
            "files[0] has a name, mediaType, base64 or url that is not a string",
        ),
        (
            [{"name": "a", "mediaType": "application/pdf", "base64": ""}],
            "files[0] has the media type 'application/pdf', not one of text/plain, text/csv, "
            "image/png",
        ),
        ([{"name": "a", "mediaType": "text/csv", "url": ""}], "files[0] has an empty url"),
        (
            [{"name": "a", "mediaType": "text/csv", "base64": "YQ"}],
            "files[0] has a base64 that is not base64",
        ),
    ],
)
def test_what_is_wrong_with_files_is_said_naming_the_entry(files: object, wrong: str) -> None:
    assert files_of(files, CSV_AND_PNG) == wrong


def test_cleaning_redacts_the_token_and_repairs_text_in_data_and_file_names() -> None:
    parts = (
        Part.of_data({"t": "tok", "bad": "\ud83d"}),
        Part.of_file(FileContent("tok.csv", "text/csv", url="http://x/?t=tok")),
        Part.of_file(FileContent.of_bytes("r.csv", "text/csv", b"tok")),  # bytes as they came
    )
    kept, repaired = cleaned(parts, "tok")
    assert kept == (
        Part.of_data({"t": "[redacted]", "bad": "\ufffd"}),
        Part.of_file(FileContent("[redacted].csv", "text/csv", url="http://x/?t=[redacted]")),
        Part.of_file(FileContent.of_bytes("r.csv", "text/csv", b"tok")),
    )
    assert repaired


def test_clean_parts_are_kept_as_they_are() -> None:
    parts = (Part.of_data([1, "two"]), Part.of_file(FileContent("a", "text/csv", url="http://x")))
    assert cleaned(parts, None) == (parts, False)
    assert cleaned((), "tok") == ((), False)
