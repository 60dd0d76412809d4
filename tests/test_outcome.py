"""The outcome rules, case by case: only the contract with escalate false completes."""

from __future__ import annotations

import pytest

from n8n_a2a.lifecycle import state_for
from n8n_a2a.outcome import (
    RAW_EXCERPT_CHARS,
    HttpReply,
    Outcome,
    TransportFailure,
    classify,
)
from n8n_a2a.protocol.model import TaskState


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
    verdict = classify(reply(b'{"answer": "xxxx', truncated=True))
    assert verdict.outcome is Outcome.OFF_CONTRACT
    assert "larger than" in verdict.text


def test_404_is_not_registered() -> None:
    body = b'{"code":404,"message":"The requested webhook \\"POST x\\" is not registered."}'
    verdict = classify(reply(body, status=404))
    assert verdict.outcome is Outcome.NOT_REGISTERED
    assert "not active" in verdict.text
    assert "is not registered" in verdict.text


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
