"""The outcome rules, case by case: only the contract with escalate false completes."""

from __future__ import annotations

import json
from dataclasses import replace

import pytest

from n8n_a2a.core.contract import RAW_EXCERPT_CHARS, classify
from n8n_a2a.core.replies import HttpReply, Outcome, StreamedReply, TransportFailure, Verdict
from n8n_a2a.core.turns import state_for
from n8n_a2a.protocol.media import Modes
from n8n_a2a.protocol.model import FileContent, Part, TaskState


def reply(body: bytes, status: int = 200, **kwargs: object) -> HttpReply:
    return HttpReply(status=status, body=body, content_type="application/json", **kwargs)  # type: ignore[arg-type]


def test_answered_completes_with_the_answer() -> None:
    verdict = classify(reply(b'{"answer": "12 pallets", "escalate": false}'))
    assert verdict.outcome is Outcome.ANSWERED
    assert state_for(verdict.outcome) is TaskState.COMPLETED
    assert verdict.text == "12 pallets"


def test_escalated_fails_carrying_the_answer() -> None:
    verdict = classify(reply(b'{"answer": "needs approval", "escalate": true}'))
    assert verdict.outcome is Outcome.ESCALATED
    assert state_for(verdict.outcome) is TaskState.FAILED
    assert "needs approval" in verdict.text


@pytest.mark.parametrize("body", [b"", b"  \n", b"\r\n"])
def test_an_empty_2xx_body_is_silent(body: bytes) -> None:
    verdict = classify(reply(body))
    assert verdict.outcome is Outcome.SILENT
    assert state_for(verdict.outcome) is TaskState.FAILED
    assert "returned nothing" in verdict.text


def test_a_204_is_silent_too() -> None:
    assert classify(reply(b"", status=204)).outcome is Outcome.SILENT


def test_a_blank_answer_is_silent() -> None:
    assert classify(reply(b'{"answer": "  ", "escalate": false}')).outcome is Outcome.SILENT


def test_n8n_2_41_error_in_workflow_is_silent() -> None:
    verdict = classify(reply(b'{"message":"Error in workflow"}', status=500))
    assert verdict.outcome is Outcome.SILENT
    assert "Error in workflow" in verdict.text


@pytest.mark.parametrize(
    ("body", "why"),
    [
        (b'{"result":42}', "keys"),
        (b"sure, whatever you say", "not JSON"),
        (b'["answer", false]', "not a JSON object"),
        (b'{"answer": "x"}', "keys"),
        (b'{"answer": "x", "escalate": false, "extra": 1}', "keys"),
        (b'{"answer": 42, "escalate": false}', "'answer' is not a string"),
        (b'{"answer": "x", "escalate": "false"}', "'escalate' is not true or false"),
        (b'{"answer": "x", "escalate": 0}', "'escalate' is not true or false"),
        (b'{"answer": "x", "escalate": null}', "'escalate' is not true or false"),
        (b'{"answer": "x", "escalate": true, "escalate": false}', "appears twice"),
        (b"\xff\xfe{}", "not JSON"),
        (b"[" * 50_000, "not JSON"),
    ],
)
def test_anything_else_is_off_contract_and_shown_raw(body: bytes, why: str) -> None:
    verdict = classify(reply(body))
    assert verdict.outcome is Outcome.OFF_CONTRACT
    assert state_for(verdict.outcome) is TaskState.FAILED
    assert why in verdict.text
    assert body.decode("utf-8", errors="replace")[:100] in verdict.text


def test_the_raw_excerpt_is_cut_at_the_documented_length() -> None:
    body = b"y" * (RAW_EXCERPT_CHARS + 500)
    verdict = classify(reply(body))
    assert "y" * RAW_EXCERPT_CHARS in verdict.text
    assert "y" * (RAW_EXCERPT_CHARS + 1) not in verdict.text
    assert f"cut at {RAW_EXCERPT_CHARS} characters" in verdict.text


def test_a_truncated_reply_is_off_contract_even_if_it_starts_well() -> None:
    verdict = classify(reply(b'{"answer": "xxxx', truncated=True, read_limit=33_554_432))
    assert verdict.outcome is Outcome.OFF_CONTRACT
    assert "larger than ADAPTER_MAX_REPLY_BYTES (33,554,432 bytes)" in verdict.text


def test_404_is_not_registered() -> None:
    body = b'{"code":404,"message":"The requested webhook \\"POST x\\" is not registered."}'
    verdict = classify(reply(body, status=404))
    assert verdict.outcome is Outcome.NOT_REGISTERED
    assert "not active" in verdict.text
    assert "is not registered" in verdict.text


#: What Express (under n8n) answers a path no route takes: /webhooks/x, a typo'd prefix.
EXPRESS_404 = (
    b'<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n<title>Error</title>'
    b"\n</head>\n<body>\n<pre>Cannot POST /webhooks/supply</pre>\n</body>\n</html>\n"
)


def test_a_404_page_is_quoted_as_its_text_not_its_markup() -> None:
    page = HttpReply(404, EXPRESS_404, content_type="text/html; charset=utf-8")
    verdict = classify(page)
    assert verdict.outcome is Outcome.NOT_REGISTERED
    assert verdict.text.endswith("n8n said: Error Cannot POST /webhooks/supply")
    # Any other type is quoted as it came.
    assert "<pre>" in classify(HttpReply(404, EXPRESS_404, content_type="text/plain")).text


def test_a_token_a_page_writes_as_entities_is_redacted_all_the_same() -> None:
    token = "eyJhbGciOi.secret-token"
    written = "".join(f"&#{ord(c)};" for c in token).encode()
    page = HttpReply(502, b"<p>bad gateway for " + written + b"</p>", content_type="text/html")
    verdict = classify(replace(page, subject_token=token))
    assert token not in verdict.text
    assert "[redacted]" in verdict.text


@pytest.mark.parametrize("status", [400, 401, 403, 500, 502, 503])
def test_other_statuses_are_http_errors(status: int) -> None:
    verdict = classify(reply(b'{"message":"boom"}', status=status))
    assert verdict.outcome is Outcome.HTTP_ERROR
    assert f"HTTP {status}" in verdict.text


def test_a_contract_body_with_an_error_status_does_not_complete() -> None:
    verdict = classify(reply(b'{"answer": "fine", "escalate": false}', status=500))
    assert verdict.outcome is Outcome.HTTP_ERROR
    assert state_for(verdict.outcome) is TaskState.FAILED


@pytest.mark.parametrize("status", [301, 302, 307, 308])
def test_redirects_fail(status: int) -> None:
    verdict = classify(reply(b"", status=status, location="http://elsewhere/"))
    assert verdict.outcome is Outcome.REDIRECTED
    assert "http://elsewhere/" in verdict.text


@pytest.mark.parametrize(
    ("outcome", "words"),
    [
        (Outcome.TIMEOUT, "in time"),
        (Outcome.UNREACHABLE, "could not be reached"),
        (Outcome.TLS_FAILURE, "ADAPTER_CA_BUNDLE"),
        (Outcome.BROKEN_REPLY, "could not be read"),
    ],
)
def test_transport_failures_fail_with_a_reason(outcome: Outcome, words: str) -> None:
    verdict = classify(TransportFailure(outcome, "detail here"))
    assert verdict.outcome is outcome
    assert state_for(verdict.outcome) is TaskState.FAILED
    assert words in verdict.text
    assert "detail here" in verdict.text


TOKEN = "eyJhbGciOi.J/IUz+I1Ni_J9~x="


def json_escaped(token: str) -> str:
    """The token as a workflow's JSON may write it: escapes in mixed-case hex, '\\/'."""
    return "".join(
        "\\/" if c == "/" else f"\\u{ord(c):04X}" if i % 2 else f"\\u{ord(c):04x}"
        for i, c in enumerate(token)
    )


def percent_encoded(token: str) -> str:
    return "".join(f"%{ord(c):02x}" for c in token)


def with_token(body: bytes, status: int = 200, **kwargs: object) -> HttpReply:
    return reply(body, status, subject_token=TOKEN, **kwargs)


@pytest.mark.parametrize(
    ("body", "outcome"),
    [
        (f'{{"answer": "it is {TOKEN}", "escalate": false}}', Outcome.ANSWERED),
        (f'{{"answer": "it is {json_escaped(TOKEN)}", "escalate": false}}', Outcome.ANSWERED),
        (f'{{"answer": "it is {json_escaped(TOKEN)}", "escalate": true}}', Outcome.ESCALATED),
        (f'{{"answer": "it is {percent_encoded(TOKEN)}", "escalate": false}}', Outcome.ANSWERED),
        (f'{{"{json_escaped(TOKEN)}": 1}}', Outcome.OFF_CONTRACT),
        (f'{{"token": "{json_escaped(TOKEN)}"}}', Outcome.OFF_CONTRACT),
    ],
)
def test_the_token_is_redacted_from_what_the_reply_says(body: str, outcome: Outcome) -> None:
    verdict = classify(with_token(body.encode()))
    assert verdict.outcome is outcome
    assert "[redacted]" in verdict.text
    for form in (TOKEN, json_escaped(TOKEN), percent_encoded(TOKEN), "J9~x="):
        assert form not in verdict.text


def test_an_answer_that_is_only_the_token_still_answers() -> None:
    verdict = classify(with_token(f'{{"answer": "{TOKEN}", "escalate": false}}'.encode()))
    assert (verdict.outcome, verdict.text) == (Outcome.ANSWERED, "[redacted]")


def test_a_token_that_spells_a_word_of_the_contract_does_not_change_the_verdict() -> None:
    body = b'{"answer": "all false alarms", "escalate": false}'
    verdict = classify(HttpReply(200, body, subject_token="false"))
    assert verdict.outcome is Outcome.ANSWERED
    assert verdict.text == "all [redacted] alarms"


@pytest.mark.parametrize("offset", [-20, -5, -1, 0, 1])
def test_a_token_across_the_excerpts_cut_leaves_no_piece_behind(offset: int) -> None:
    body = ("y" * (RAW_EXCERPT_CHARS + offset) + json_escaped(TOKEN) + "y" * 50).encode()
    verdict = classify(with_token(body))
    assert verdict.outcome is Outcome.OFF_CONTRACT
    assert "\\u" not in verdict.text and "%" not in verdict.text
    assert "eyJ" not in verdict.text and "x=" not in verdict.text


def test_the_token_is_redacted_from_an_error_body() -> None:
    verdict = classify(with_token(f"bad token {TOKEN}".encode(), status=401))
    assert verdict.outcome is Outcome.HTTP_ERROR
    assert TOKEN not in verdict.text and "[redacted]" in verdict.text


def test_the_token_is_redacted_from_a_redirects_location() -> None:
    where = f"https://login.example/cb?t={percent_encoded(TOKEN)}&u={TOKEN}"
    verdict = classify(with_token(b"", status=302, location=where))
    assert verdict.outcome is Outcome.REDIRECTED
    assert "https://login.example/cb?t=[redacted]&u=[redacted]" in verdict.text


def test_the_token_is_redacted_from_a_content_type() -> None:
    verdict = classify(
        HttpReply(200, b"text", content_type=f"text/plain; t={TOKEN}", subject_token=TOKEN)
    )
    assert verdict.outcome is Outcome.OFF_CONTRACT
    assert "text/plain; t=[redacted]" in verdict.text and TOKEN not in verdict.text


def test_the_token_is_redacted_from_a_transport_failure() -> None:
    failure = TransportFailure(Outcome.BROKEN_REPLY, f"bad header {TOKEN!r}", TOKEN)
    assert TOKEN not in classify(failure).text


def test_a_reply_never_shows_the_token_in_its_repr() -> None:
    assert TOKEN not in repr(with_token(b"{}"))
    assert TOKEN not in repr(TransportFailure(Outcome.TIMEOUT, "late", TOKEN))


@pytest.mark.parametrize(
    ("body", "outcome", "shown", "repaired"),
    [
        (b'{"answer": "flour \\ud83d", "escalate": false}', Outcome.ANSWERED, "flour \ufffd", True),
        (b'{"answer": "\\udc00 x", "escalate": true}', Outcome.ESCALATED, "\ufffd x", True),
        # Quoted raw, the escape is plain ASCII: nothing to repair.
        (b'{"answer": "\\ud83d", "x": 1}', Outcome.OFF_CONTRACT, '"\\ud83d"', False),
        (b"caf\xc3\xa9 \xed\xa0\xbd", Outcome.OFF_CONTRACT, "caf\u00e9 \ufffd", True),
    ],
)
def test_text_that_cannot_be_encoded_is_repaired_and_marked(
    body: bytes, outcome: Outcome, shown: str, repaired: bool
) -> None:
    verdict = classify(reply(body))
    assert verdict.outcome is outcome
    assert shown in verdict.text
    verdict.text.encode("utf-8")  # strict: nothing unencodable is left
    assert verdict.repaired is repaired


def test_a_cut_emoji_answer_and_an_intact_one() -> None:
    intact = classify(reply('{"answer": "flour \U0001f35e", "escalate": false}'.encode()))
    assert (intact.text, intact.repaired) == ("flour \U0001f35e", False)
    escaped = classify(reply(b'{"answer": "flour \\ud83c\\udf5e", "escalate": false}'))
    assert (escaped.text, escaped.repaired) == ("flour \U0001f35e", False)


def test_a_body_cut_at_the_read_limit_inside_a_character_is_not_bad_utf8() -> None:
    body = b"x" * 100 + "\u00e9".encode()[:1]
    assert not classify(reply(body, truncated=True)).repaired
    assert classify(reply(body)).repaired


def test_a_compressed_reply_the_adapter_does_not_decode_is_off_contract() -> None:
    verdict = classify(reply(b"\x1b\x00\x00", content_encoding="br"))
    assert verdict.outcome is Outcome.OFF_CONTRACT
    assert "Content-Encoding: br" in verdict.text
    assert "(3 bytes of br, not shown)" in verdict.text
    failed = classify(reply(b"\x1b\x00\x00", status=502, content_encoding="br"))
    assert failed.outcome is Outcome.HTTP_ERROR
    assert "(3 bytes of br, not shown)" in failed.text


# A question: the third key, where ADAPTER_ALLOW_INPUT_REQUIRED allows it.

QUESTION = b'{"answer": "Which item?", "escalate": false, "inputRequired": true}'


def test_a_question_is_off_contract_unless_the_deployment_allows_it() -> None:
    strict = classify(reply(QUESTION))
    assert strict.outcome is Outcome.OFF_CONTRACT
    assert "its keys are ['answer', 'escalate', 'inputRequired']" in strict.text
    assert strict == classify(reply(QUESTION), input_required=False)


def test_an_allowed_question_makes_the_task_wait_with_the_question() -> None:
    verdict = classify(reply(QUESTION), input_required=True)
    assert verdict.outcome is Outcome.INPUT_REQUIRED
    assert state_for(verdict.outcome) is TaskState.INPUT_REQUIRED
    assert verdict.text == "Which item?"


@pytest.mark.parametrize(
    ("body", "outcome"),
    [
        (b'{"answer": "12 pallets", "escalate": false, "inputRequired": false}', "ANSWERED"),
        (b'{"answer": "12 pallets", "escalate": false}', "ANSWERED"),
        (b'{"answer": "ask a person", "escalate": true, "inputRequired": false}', "ESCALATED"),
        (b'{"answer": " ", "escalate": false, "inputRequired": true}', "SILENT"),
    ],
)
def test_false_or_absent_is_the_two_key_contract(body: bytes, outcome: str) -> None:
    assert classify(reply(body), input_required=True).outcome is Outcome(outcome)


@pytest.mark.parametrize(
    ("body", "why"),
    [
        (
            b'{"answer": "x", "escalate": true, "inputRequired": true}',
            "'escalate' and 'inputRequired' are both true",
        ),
        (b'{"answer": "x", "escalate": false, "inputRequired": "true"}', "'inputRequired' is not"),
        (b'{"answer": "x", "escalate": false, "inputRequired": 1}', "'inputRequired' is not"),
        (b'{"answer": "x", "escalate": false, "inputRequired": null}', "'inputRequired' is not"),
        (b'{"answer": "x", "inputRequired": true}', "its keys are"),
        (b'{"answer": "x", "escalate": false, "inputRequired": true, "y": 1}', "its keys are"),
        (
            b'{"answer": "x", "escalate": false, "inputRequired": false, "inputRequired": true}',
            "appears twice",
        ),
    ],
)
def test_a_question_that_says_two_things_is_off_contract(body: bytes, why: str) -> None:
    verdict = classify(reply(body), input_required=True)
    assert verdict.outcome is Outcome.OFF_CONTRACT
    assert why in verdict.text


# Data and files, where the output modes allow them.

PARTS = Modes(outputs=("text/plain", "application/json", "text/csv", "image/png"))


def with_parts(body: object, modes: Modes = PARTS, token: str | None = None) -> Verdict:
    return classify(reply(json.dumps(body).encode(), subject_token=token), modes=modes)


def test_an_answer_carries_its_data_and_files_in_order() -> None:
    verdict = with_parts(
        {
            "answer": "2 files",
            "escalate": False,
            "data": [1, {"a": None}],
            "files": [
                {"name": "r.csv", "mediaType": "text/csv", "base64": "YSxi"},
                {"name": "", "mediaType": "image/png", "url": "https://files.example/p.png"},
            ],
        }
    )
    assert (verdict.outcome, verdict.text) == (Outcome.ANSWERED, "2 files")
    assert verdict.parts == (
        Part.of_data([1, {"a": None}]),
        Part.of_file(FileContent.of_bytes("r.csv", "text/csv", b"a,b")),
        Part.of_file(FileContent("", "image/png", url="https://files.example/p.png")),
    )


@pytest.mark.parametrize("data", [None, 0, "text", [], {}])
def test_data_is_any_json_value(data: object) -> None:
    verdict = with_parts({"answer": "x", "escalate": False, "data": data})
    assert verdict.parts == (Part.of_data(data),)


def test_any_type_allows_data_and_files_of_every_type() -> None:
    body = {
        "answer": "x",
        "escalate": False,
        "data": 1,
        "files": [{"name": "v", "mediaType": "video/mp4", "base64": ""}],
    }
    assert with_parts(body, Modes(outputs=("*/*",))).outcome is Outcome.ANSWERED


def test_an_escalation_or_a_question_carries_no_parts() -> None:
    body = {"answer": "x", "escalate": True, "data": 1}
    assert with_parts(body).parts == ()
    question = {"answer": "which?", "escalate": False, "inputRequired": True, "data": 1}
    verdict = classify(reply(json.dumps(question).encode()), input_required=True, modes=PARTS)
    assert (verdict.outcome, verdict.parts) == (Outcome.INPUT_REQUIRED, ())


@pytest.mark.parametrize(
    ("modes", "extra", "why"),
    [
        (Modes(), {"data": {}}, "its keys are"),
        (Modes(), {"files": []}, "its keys are"),
        (Modes(outputs=("text/plain", "image/png")), {"data": {}}, "its keys are"),
        (Modes(outputs=("text/plain", "application/json")), {"files": []}, "its keys are"),
        (PARTS, {"files": {}}, "'files' is not a list"),
        (PARTS, {"files": ["x"]}, "files[0] is not an object"),
        (PARTS, {"files": [{"name": "a", "mediaType": "text/csv"}]}, "files[0] has the keys"),
        (
            PARTS,
            {"files": [{"name": "a", "mediaType": "text/csv", "base64": "", "url": "http://x"}]},
            "files[0] has the keys",
        ),
        (
            PARTS,
            {"files": [{"name": "a", "mediaType": "text/csv", "base64": "", "size": 1}]},
            "files[0] has the keys",
        ),
        (PARTS, {"files": [{"mediaType": "text/csv", "base64": ""}]}, "files[0] has the keys"),
        (
            PARTS,
            {"files": [{"name": 1, "mediaType": "text/csv", "base64": ""}]},
            "is not a string",
        ),
        (
            PARTS,
            {"files": [{"name": "a", "mediaType": "application/pdf", "base64": ""}]},
            "files[0] has the media type 'application/pdf'",
        ),
        (
            PARTS,
            {"files": [{"name": "a", "mediaType": "image/*", "base64": ""}]},
            "has the media type",
        ),
        (
            PARTS,
            {"files": [{"name": "a", "mediaType": "text/csv", "base64": "not base64!"}]},
            "files[0] has a base64 that is not base64",
        ),
        # Strict standard base64: nothing after its padding, the padding whole, no
        # URL-safe letters, nothing past ASCII, no line breaks.
        *(
            (
                PARTS,
                {"files": [{"name": "a", "mediaType": "text/csv", "base64": wrong}]},
                "files[0] has a base64 that is not base64",
            )
            for wrong in ("YQ==YQ==", "YQ", "Y-Q_", "YQ\u00e9=", "YQ==\n")
        ),
        (PARTS, {"files": [{"name": "a", "mediaType": "text/csv", "url": ""}]}, "an empty url"),
    ],
)
def test_data_and_files_the_modes_do_not_allow_are_off_contract(
    modes: Modes, extra: dict[str, object], why: str
) -> None:
    body = {"answer": "x", "escalate": False, **extra}
    verdict = with_parts(body, modes)
    assert verdict.outcome is Outcome.OFF_CONTRACT
    assert why in verdict.text
    assert json.dumps(body)[:100] in verdict.text  # the raw reply, as it came


def test_the_token_is_redacted_from_data_and_file_names() -> None:
    body = {
        "answer": "x",
        "escalate": False,
        "data": {"token": TOKEN, "bad": "\ud83d"},
        "files": [{"name": f"{TOKEN}.csv", "mediaType": "text/csv", "url": f"http://x/?t={TOKEN}"}],
    }
    verdict = with_parts(body, token=TOKEN)
    data, file = verdict.parts
    assert data.data == {"token": "[redacted]", "bad": "\ufffd"}
    assert file.file == FileContent("[redacted].csv", "text/csv", url="http://x/?t=[redacted]")
    assert verdict.repaired


# A streamed reply (ADAPTER_WEBHOOK_STREAMING): its text is the answer, its JSON the contract.


@pytest.mark.parametrize(
    ("text", "outcome", "said"),
    [
        ("Yes: 12 pallets.", Outcome.ANSWERED, "Yes: 12 pallets."),
        ('{"answer": "12", "escalate": false}', Outcome.ANSWERED, "12"),
        (' {"answer": "30 is a lot", "escalate": true}', Outcome.ESCALATED, "30 is a lot"),
        ('{"answer": "x", "escalate": false, "more": 1}', Outcome.OFF_CONTRACT, "streamed items"),
        ("{not json", Outcome.OFF_CONTRACT, "not JSON"),
        ("  ", Outcome.SILENT, "streamed no text"),
        ("", Outcome.SILENT, "streamed no text"),
    ],
)
def test_a_streamed_text_is_judged_as_a_reply_read_whole(
    text: str, outcome: Outcome, said: str
) -> None:
    verdict = classify(StreamedReply(200, text))
    assert verdict.outcome is outcome
    assert said in verdict.text


def test_a_streamed_question_asks_where_the_deployment_allows_it() -> None:
    streamed = StreamedReply(200, '{"answer": "Which?", "escalate": false, "inputRequired": true}')
    assert classify(streamed).outcome is Outcome.OFF_CONTRACT
    verdict = classify(streamed, input_required=True)
    assert (verdict.outcome, verdict.text) == (Outcome.INPUT_REQUIRED, "Which?")


def test_a_stream_that_went_wrong_fails_with_its_raw_text() -> None:
    verdict = classify(StreamedReply(200, "par", problem="a line is not JSON", raw="<html>"))
    assert verdict.outcome is Outcome.OFF_CONTRACT
    assert "a line is not JSON" in verdict.text and "<html>" in verdict.text
    assert state_for(verdict.outcome) is TaskState.FAILED


def test_a_stream_past_its_bound_is_off_contract() -> None:
    verdict = classify(StreamedReply(200, "x" * 10, truncated=True, raw="{...}", read_limit=1024))
    assert verdict.outcome is Outcome.OFF_CONTRACT
    assert "larger than ADAPTER_MAX_REPLY_BYTES (1,024 bytes)" in verdict.text


def test_an_error_chunk_fails_with_the_nodes_words_and_the_text_before() -> None:
    verdict = classify(StreamedReply(200, "partial ", error="The service is down"))
    assert verdict.outcome is Outcome.NODE_ERROR
    assert state_for(verdict.outcome) is TaskState.FAILED
    assert "The service is down" in verdict.text and "partial" in verdict.text


def test_the_token_is_redacted_from_a_streamed_reply() -> None:
    token = "secret.token"
    for streamed in (
        StreamedReply(200, f"your token is {token}", subject_token=token),
        StreamedReply(200, "", problem="x", raw=f"line {token}", subject_token=token),
        StreamedReply(200, token, error=f"bad {token}", subject_token=token),
    ):
        assert token not in classify(streamed).text


# A reply held to the rules a request meets: what it holds can always be written.

_DEEP = "[" * 500 + "1" + "]" * 500  # json.loads reads it; its encoder, deeper down, may not


@pytest.mark.parametrize(
    ("data", "why"),
    [
        ('{"v": NaN}', "NaN is not JSON"),
        ("[1, Infinity]", "Infinity is not JSON"),
        ('{"v": -Infinity}', "-Infinity is not JSON"),
        ('{"v": 1e400}', "the reply.data.v is a number beyond the range of JSON numbers"),
        ("[0, 1, -1e400]", "the reply.data[2] is a number beyond"),
        (_DEEP, "is nested more than 100 levels deep"),
        ("[" + ",".join(["{}"] * 40_000) + "]", "the reply holds more than 32,768 JSON values"),
    ],
)
@pytest.mark.parametrize("streamed", [False, True])
def test_data_json_cannot_write_back_is_off_contract_with_the_raw_reply(
    data: str, why: str, streamed: bool
) -> None:
    body = '{"answer": "x", "escalate": false, "data": ' + data + "}"
    if streamed:
        verdict = classify(StreamedReply(200, body), modes=PARTS)
    else:
        verdict = classify(reply(body.encode()), modes=PARTS)
    assert verdict.outcome is Outcome.OFF_CONTRACT
    assert why in verdict.text
    assert body[:100] in verdict.text  # the raw reply, as it came
    assert verdict.parts == ()


@pytest.mark.parametrize(
    ("body", "why"),
    [
        (b'{"answer": "x", "escalate": false, "x": NaN}', "NaN is not JSON"),
        (b'{"answer": "x", "escalate": 1e999}', "the reply.escalate is a number beyond"),
    ],
)
def test_every_key_of_a_reply_is_held_to_the_same_rules(body: bytes, why: str) -> None:
    verdict = classify(reply(body))
    assert verdict.outcome is Outcome.OFF_CONTRACT and why in verdict.text


def test_data_at_the_bounds_is_kept() -> None:
    deep = "[" * 98 + "1" + "]" * 98  # 100 levels with the reply object itself
    for data in (deep, '{"v": 1.7976931348623157e308, "w": -0.0, "n": 1e-400}'):
        body = '{"answer": "x", "escalate": false, "data": ' + data + "}"
        verdict = classify(reply(body.encode()), modes=PARTS)
        assert verdict.outcome is Outcome.ANSWERED, verdict.text
        assert verdict.parts == (Part.of_data(json.loads(data)),)


def test_n8ns_refusal_of_a_large_json_body_names_n8n_payload_size_max() -> None:
    # What n8n 2.41.1 answers a JSON body past N8N_PAYLOAD_SIZE_MAX (tried: docs/n8n.md).
    body = b'{"code":0,"message":"There was a problem executing the workflow"}'
    verdict = classify(reply(body, status=500, request_bytes=17 * 1024 * 1024))
    assert verdict.outcome is Outcome.HTTP_ERROR
    assert "N8N_PAYLOAD_SIZE_MAX" in verdict.text
    assert verdict.text.endswith(f"n8n said: {body.decode()}")
    # The same reply to a small body fails as any other HTTP 500.
    small = classify(reply(body, status=500, request_bytes=2000))
    assert small.text == f"The workflow's webhook failed with HTTP 500: {body.decode()}"


def test_a_413_names_the_bound_of_the_way_it_was_sent() -> None:
    body = b'{"code":413,"message":"The submitted form data exceeds the allowed size."}'
    form = classify(reply(body, status=413, request_bytes=1000, multipart=True))
    assert form.outcome is Outcome.HTTP_ERROR
    assert "N8N_FORMDATA_FILE_SIZE_MAX" in form.text and "N8N_PAYLOAD_SIZE_MAX" not in form.text
    assert form.text.endswith(f"n8n said: {body.decode()}")
    as_json = classify(reply(b"", status=413, request_bytes=1000))
    assert "N8N_PAYLOAD_SIZE_MAX" in as_json.text


# A request to sign in: the key ADAPTER_ALLOW_AUTH_REQUIRED allows.

SIGN_IN = b'{"answer": "Sign in to the ERP at https://erp.example/login, then reply.", '
SIGN_IN += b'"escalate": false, "authRequired": true}'


def test_a_sign_in_asked_is_off_contract_unless_the_deployment_allows_it() -> None:
    strict = classify(reply(SIGN_IN), input_required=True)
    assert strict.outcome is Outcome.OFF_CONTRACT
    assert "its keys are ['answer', 'authRequired', 'escalate']" in strict.text


def test_an_allowed_sign_in_makes_the_task_wait_with_what_to_sign_in_to() -> None:
    verdict = classify(reply(SIGN_IN), auth_required=True)
    assert verdict.outcome is Outcome.AUTH_REQUIRED
    assert state_for(verdict.outcome) is TaskState.AUTH_REQUIRED
    assert verdict.text == "Sign in to the ERP at https://erp.example/login, then reply."
    streamed = StreamedReply(200, SIGN_IN.decode())
    assert classify(streamed, auth_required=True).outcome is Outcome.AUTH_REQUIRED


@pytest.mark.parametrize(
    ("document", "said"),
    [
        ({"answer": "x", "escalate": False, "authRequired": False}, "ANSWERED"),
        ({"answer": " ", "escalate": False, "authRequired": True}, "SILENT"),
        ({"answer": "x", "escalate": True, "authRequired": True}, "'escalate' and 'authRequired'"),
        (
            {"answer": "x", "escalate": False, "authRequired": True, "inputRequired": True},
            "'inputRequired' and 'authRequired' are both true",
        ),
        ({"answer": "x", "escalate": False, "authRequired": "yes"}, "'authRequired' is not"),
    ],
)
def test_a_sign_in_is_one_thing_at_a_time(document: dict[str, object], said: str) -> None:
    verdict = classify(
        reply(json.dumps(document).encode()), input_required=True, auth_required=True
    )
    if said.isupper():
        assert verdict.outcome is Outcome(said)
    else:
        assert verdict.outcome is Outcome.OFF_CONTRACT and said in verdict.text


# The contract as its tables: what a reply within the contract says, cell by cell; each
# key's rule for its value; which keys each deployment allows; the order values are read.

CONTRACT = '{"answer": string, "escalate": boolean}'
EMPTY = "The workflow returned nothing: its answer is empty."
BOTH = "'escalate' and 'inputRequired' are both true"

# (escalate, inputRequired, answer) -> (outcome, text); None: off contract for saying both.
SAYS: dict[tuple[bool, bool, str], tuple[Outcome, str] | None] = {
    (False, False, "12 pallets"): (Outcome.ANSWERED, "12 pallets"),
    (False, False, " "): (Outcome.SILENT, EMPTY),
    (False, True, "Which item?"): (Outcome.INPUT_REQUIRED, "Which item?"),
    (False, True, " "): (Outcome.SILENT, EMPTY),
    (True, False, " too much "): (Outcome.ESCALATED, "Escalated for human approval: too much"),
    (True, False, " "): (
        Outcome.ESCALATED,
        "Escalated for human approval: (the workflow gave no reason)",
    ),
    (True, True, "x"): None,
    (True, True, " "): None,
}


@pytest.mark.parametrize(("escalate", "asks", "answer"), list(SAYS))
def test_what_a_reply_within_the_contract_says(escalate: bool, asks: bool, answer: str) -> None:
    document = {"answer": answer, "escalate": escalate, "inputRequired": asks, "data": 1}
    body = json.dumps(document)
    verdict = classify(reply(body.encode()), input_required=True, modes=PARTS)
    said = SAYS[escalate, asks, answer]
    if said is None:
        assert (verdict.outcome, verdict.parts) == (Outcome.OFF_CONTRACT, ())
        assert verdict.text == (
            f"The workflow's reply is off contract ({BOTH}); expected {CONTRACT}. "
            f"Raw reply (HTTP 200, application/json): {body}"
        )
    else:
        assert (verdict.outcome, verdict.text) == said
        # Only an answer carries its data and files.
        carried = (Part.of_data(1),) if said[0] is Outcome.ANSWERED else ()
        assert verdict.parts == carried


def test_an_absent_input_required_is_false() -> None:
    for escalate, outcome in ((False, Outcome.ANSWERED), (True, Outcome.ESCALATED)):
        document = {"answer": "x", "escalate": escalate}
        verdict = classify(reply(json.dumps(document).encode()), input_required=True)
        assert verdict.outcome is outcome


#: A value of each JSON kind.
VALUES: dict[str, object] = {
    "string": "x",
    "empty string": "",
    "true": True,
    "false": False,
    "zero": 0,
    "number": 1.5,
    "null": None,
    "empty list": [],
    "list": ["x"],
    "object": {},
}
# Each key: the kinds of value it takes, and the reason given for any other.
RULES: dict[str, tuple[set[str], str]] = {
    "answer": ({"string", "empty string"}, "'answer' is not a string"),
    "escalate": ({"true", "false"}, "'escalate' is not true or false"),
    "inputRequired": ({"true", "false"}, "'inputRequired' is not true or false"),
    "data": (set(VALUES), ""),  # any JSON value
    "files": ({"empty list"}, "'files' is not a list"),  # ["x"]: its entry is wrong
}


@pytest.mark.parametrize(
    ("key", "kind"), [(key, kind) for key in RULES for kind in VALUES if kind != "list"]
)
def test_each_keys_rule_for_its_value(key: str, kind: str) -> None:
    document: dict[str, object] = {"answer": "x", "escalate": True, key: VALUES[kind]}
    verdict = classify(reply(json.dumps(document).encode()), input_required=True, modes=PARTS)
    taken, reason = RULES[key]
    if kind in taken:
        # Taken: what the reply comes to is the table above's (both true is off contract).
        assert verdict.outcome is not Outcome.OFF_CONTRACT or BOTH in verdict.text
    else:
        assert verdict.outcome is Outcome.OFF_CONTRACT
        assert verdict.text.startswith(f"The workflow's reply is off contract ({reason}); ")


def test_a_file_entry_that_is_no_object_is_named_by_its_index() -> None:
    document = {"answer": "x", "escalate": False, "files": [], "data": ["x"]}
    assert classify(reply(json.dumps(document).encode()), modes=PARTS).outcome is Outcome.ANSWERED
    document["files"] = ["x"]
    verdict = classify(reply(json.dumps(document).encode()), modes=PARTS)
    assert "(files[0] is not an object)" in verdict.text


# The keys a reply may have, by deployment: ADAPTER_ALLOW_INPUT_REQUIRED and the output modes.
ALWAYS = {"answer", "escalate"}
ALLOWED: list[tuple[bool, Modes, set[str]]] = [
    (False, Modes(), ALWAYS),
    (True, Modes(), ALWAYS | {"inputRequired"}),
    (False, Modes(outputs=("text/plain", "application/json")), ALWAYS | {"data"}),
    (False, Modes(outputs=("text/plain", "image/png")), ALWAYS | {"files"}),
    (False, Modes(outputs=("*/*",)), ALWAYS | {"data", "files"}),
    (True, PARTS, ALWAYS | {"inputRequired", "data", "files"}),
]
GOOD = {"answer": "x", "escalate": False, "inputRequired": False, "data": 1, "files": []}


@pytest.mark.parametrize(("input_required", "modes", "allowed"), ALLOWED)
def test_the_keys_each_deployment_allows(
    input_required: bool, modes: Modes, allowed: set[str]
) -> None:
    for key in GOOD:
        document = {"answer": "x", "escalate": False, key: GOOD[key]}
        verdict = classify(
            reply(json.dumps(document).encode()), input_required=input_required, modes=modes
        )
        refused = f"(its keys are {sorted(document)})" in verdict.text
        assert refused is (key not in allowed), key
    for key in ALWAYS:  # and a reply without one of them is off contract anyway
        document = {name: GOOD[name] for name in ALWAYS - {key}}
        verdict = classify(reply(json.dumps(document).encode()), modes=modes)
        assert f"(its keys are {sorted(document)})" in verdict.text


# The values are read in this order, the first wrong one named: files, then the three words.
ORDER = [
    ("files", {}, "'files' is not a list"),
    ("answer", 1, "'answer' is not a string"),
    ("escalate", "no", "'escalate' is not true or false"),
    ("inputRequired", "yes", "'inputRequired' is not true or false"),
]


@pytest.mark.parametrize("first", range(len(ORDER)))
def test_the_first_wrong_value_in_the_tables_order_is_named(first: int) -> None:
    document: dict[str, object] = {"answer": "x", "escalate": False}
    document.update({key: wrong for key, wrong, _ in ORDER[first:]})
    verdict = classify(reply(json.dumps(document).encode()), input_required=True, modes=PARTS)
    assert f"off contract ({ORDER[first][2]})" in verdict.text


@pytest.mark.parametrize(
    ("outcome", "text"),
    [
        (Outcome.TIMEOUT, "The workflow did not answer in time: {d}"),
        (Outcome.UNREACHABLE, "The workflow's webhook could not be reached: {d}"),
        (
            Outcome.TLS_FAILURE,
            "TLS verification of the webhook failed: {d}. Set ADAPTER_CA_BUNDLE to the CA "
            "that signed its certificate.",
        ),
        (Outcome.BROKEN_REPLY, "The webhook's reply could not be read: {d}"),
        (Outcome.ADAPTER_ERROR, "The webhook's reply could not be read: {d}"),
    ],
)
def test_what_each_failure_short_of_a_reply_says(outcome: Outcome, text: str) -> None:
    detail = "a {detail} with braces"  # said as it is: no template reads it
    verdict = classify(TransportFailure(outcome, detail))
    assert (verdict.outcome, verdict.text) == (outcome, text.replace("{d}", detail))


# The resume URL of the n8n execution waiting for the next message (core/resume.py).

RESUME = "http://localhost:5678/webhook-waiting/231?signature=5ecret"


def asking_with(resume: object, **keys: object) -> bytes:
    document = {"answer": "Which item?", "escalate": False, "inputRequired": True}
    return json.dumps({**document, "resumeUrl": resume, **keys}).encode()


def test_a_question_may_carry_the_resume_url_of_its_waiting_execution() -> None:
    verdict = classify(reply(asking_with(RESUME)), input_required=True)
    assert verdict.outcome is Outcome.INPUT_REQUIRED and verdict.text == "Which item?"
    assert verdict.resume == "/webhook-waiting/231?signature=5ecret"
    assert "5ecret" not in repr(verdict)
    signed_in = {"answer": "Sign in", "escalate": False, "authRequired": True, "resumeUrl": RESUME}
    verdict = classify(reply(json.dumps(signed_in).encode()), auth_required=True)
    assert verdict.resume == "/webhook-waiting/231?signature=5ecret"


@pytest.mark.parametrize(
    ("body", "why"),
    [
        (asking_with("http://localhost:5678/rest/login?signature=5ecret"), "waiting path"),
        (asking_with(42), "'resumeUrl' is not a string"),
        (asking_with(RESUME, inputRequired=False), "comes only with a question"),
    ],
)
def test_a_resume_url_off_its_rules_is_off_contract_and_its_signature_never_shown(
    body: bytes, why: str
) -> None:
    verdict = classify(reply(body), input_required=True)
    assert verdict.outcome is Outcome.OFF_CONTRACT and why in verdict.text
    assert verdict.resume is None and "5ecret" not in verdict.text
    assert ("signature=[redacted]" in verdict.text) is (b"5ecret" in body)


def test_a_resume_url_without_the_setting_is_a_key_too_many() -> None:
    verdict = classify(reply(asking_with(RESUME)))
    assert verdict.outcome is Outcome.OFF_CONTRACT and "5ecret" not in verdict.text


def test_a_signature_the_workflow_wrote_into_its_answer_is_not_shown_either() -> None:
    document = {"answer": f"resume me at {RESUME}", "escalate": False}
    verdict = classify(reply(json.dumps(document).encode()))
    assert verdict.outcome is Outcome.ANSWERED
    assert (
        verdict.text
        == "resume me at http://localhost:5678/webhook-waiting/231?signature=[redacted]"
    )


@pytest.mark.parametrize(
    ("status", "said"),
    [(401, "signature is missing or wrong"), (404, "no waiting execution"), (409, "no longer")],
)
def test_n8ns_refusal_to_resume_fails_the_task_saying_which(status: int, said: str) -> None:
    body = b'{"code":409,"message":"The execution \\"12\\" is not waiting"}'
    verdict = classify(HttpReply(status, body, "application/json", resumed=True))
    assert verdict.outcome is Outcome.RESUME_FAILED
    assert said in verdict.text and f"HTTP {status}" in verdict.text
    # The same status from the webhook itself is what it always was.
    assert classify(HttpReply(status, body)).outcome is not Outcome.RESUME_FAILED
