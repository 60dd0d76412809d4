"""A webhook call's words: the reply as it came and the verdict on it (pure data)."""

from __future__ import annotations

from n8n_a2a.core.replies import HttpReply, Outcome, StreamedReply, TransportFailure


def test_the_callers_token_a_reply_holds_is_never_in_its_repr() -> None:
    secret = "tok-3f9a"
    replies: list[HttpReply | TransportFailure | StreamedReply] = [
        HttpReply(200, b"{}", subject_token=secret),
        TransportFailure(Outcome.TIMEOUT, "slow", subject_token=secret),
        StreamedReply(200, "text", subject_token=secret),
    ]
    for reply in replies:
        assert reply.subject_token == secret and secret not in repr(reply)


def test_an_outcome_is_written_as_its_name() -> None:
    # The task's metadata, the metrics' label and the log line all write the value.
    assert all(outcome.value == outcome.name for outcome in Outcome)
