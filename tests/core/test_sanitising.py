"""Redaction, repair and cutting of the text a task carries, without sockets."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from n8n_a2a.core.sanitising import (
    MARKUP_WINDOW,
    REDACTED,
    cut,
    markup_free,
    redact,
    repair,
    unsigned,
)

TOKEN = "eyJhbGciOi.J/IUz+I1Ni_J9~x="


def escaped(token: str, form: str) -> str:
    """The token with every character written one way."""
    writers: dict[str, Callable[[str], str]] = {
        "json-lower": lambda c: f"\\u{ord(c):04x}",
        "json-upper": lambda c: f"\\u{ord(c):04X}",
        "percent-lower": lambda c: f"%{ord(c):02x}",
        "percent-upper": lambda c: f"%{ord(c):02X}",
        "slash": lambda c: "\\/" if c == "/" else c,
    }
    return "".join(writers[form](c) for c in token)


def test_the_plain_token_is_redacted_everywhere_it_appears() -> None:
    text = f"{TOKEN} and again:{TOKEN}."
    assert redact(text, TOKEN) == f"{REDACTED} and again:{REDACTED}."


@pytest.mark.parametrize(
    "form", ["json-lower", "json-upper", "percent-lower", "percent-upper", "slash"]
)
def test_an_escaped_token_is_redacted(form: str) -> None:
    text = f'{{"answer": "it is {escaped(TOKEN, form)}!"}}'
    assert redact(text, TOKEN) == f'{{"answer": "it is {REDACTED}!"}}'


def test_each_character_may_be_escaped_its_own_way() -> None:
    forms = ["json-lower", "json-upper", "percent-lower", "percent-upper", "slash"]
    mixed = "".join(escaped(c, forms[i % len(forms)]) for i, c in enumerate(TOKEN))
    assert redact(f"\\u00e9 {mixed} %41 \\/", TOKEN) == f"\\u00e9 {REDACTED} %41 \\/"


def test_escapes_that_are_not_the_token_are_left_as_they_are() -> None:
    text = "caf\\u00e9 50% off, %7e, a\\/b, \\u12 and a token-like eyJhbGciOi"
    assert redact(text, TOKEN) == text


def test_text_without_the_token_is_returned_unchanged() -> None:
    assert redact("nothing here", TOKEN) == "nothing here"
    assert redact(f"anything {TOKEN}", None) == f"anything {TOKEN}"


def test_repeated_and_overlapping_tokens_are_all_redacted() -> None:
    assert redact("aaaaa", "aa") == f"{REDACTED}{REDACTED}a"
    assert redact("%61a\\u0061a", "aa") == f"{REDACTED}{REDACTED}"


def test_a_long_token_over_text_that_almost_matches_it_everywhere() -> None:
    # A caller picks both the token and, through a workflow that echoes, the text: the
    # search must stay linear, not try the token at every position.
    token = "a" * 4000 + "b"
    text = "a" * 200_000 + "%62" + "a" * 3
    assert redact(text, token) == "a" * 196_000 + REDACTED + "aaa"


def test_a_lone_surrogate_is_repaired_and_reported() -> None:
    assert repair("flour \ud83d") == ("flour \ufffd", True)
    assert repair("\udc00 and \ud800") == ("\ufffd and \ufffd", True)
    assert repair("flour \U0001f35e") == ("flour \U0001f35e", False)
    assert repair("plain") == ("plain", False)


def test_cut_keeps_text_up_to_the_limit_and_marks_a_cut() -> None:
    assert cut("x" * 10, 10) == "x" * 10
    assert cut("x" * 11, 10) == "x" * 10 + "[... cut at 10 characters]"


def test_a_page_is_read_as_a_person_reads_it() -> None:
    page = (
        "<!DOCTYPE html><html><head><title>Not found</title><style>p { color: red }</style>"
        "<script>var x = '<b>';</script></head><body><!-- a <comment> -->"
        "<h1>404</h1>\n\n<p>Cannot&nbsp;POST &lt;/webhook/x&gt;</p></BODY></html>"
    )
    assert markup_free(page) == "Not found 404 Cannot POST </webhook/x>"
    assert markup_free("no markup at all") == "no markup at all"


def test_only_the_first_part_of_a_huge_page_is_read() -> None:
    unclosed = "<script>" + "<b " * MARKUP_WINDOW  # no end: a regex reading all would crawl
    read = markup_free(unclosed + "</script><p>tail</p>" * 100_000)
    assert len(read) <= MARKUP_WINDOW and "tail" not in read
    assert markup_free("x" * (MARKUP_WINDOW + 10)) == "x" * MARKUP_WINDOW


@pytest.mark.parametrize(
    ("text", "shown"),
    [
        (
            "http://h/webhook-waiting/1?signature=ab12",
            "http://h/webhook-waiting/1?signature=[redacted]",
        ),
        ("?x=1&signature=ab12&y=2", "?x=1&signature=[redacted]&y=2"),
        ('"?signature\\u003dab12"', '"?signature\\u003d[redacted]"'),
        ("SIGNATURE%3Dab12 then", "SIGNATURE%3D[redacted] then"),
        ("no signature here", "no signature here"),
    ],
)
def test_a_urls_signature_is_never_shown(text: str, shown: str) -> None:
    assert unsigned(text) == shown
