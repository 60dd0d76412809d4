"""n8n's resume URL: what of it the next turn is POSTed to, and how n8n refuses a resume."""

from __future__ import annotations

import pytest

from n8n_a2a.core.resume import MAX_RESUME_CHARS, Refused, refused_resume, resume_target

SIGNED = "?signature=3f9a0c"


@pytest.mark.parametrize(
    ("url", "target"),
    [
        # n8n's own, with its default host: only the path and query are taken.
        ("http://localhost:5678/webhook-waiting/231" + SIGNED, "/webhook-waiting/231" + SIGNED),
        ("https://n8n.example.com/webhook-waiting/7" + SIGNED, "/webhook-waiting/7" + SIGNED),
        # The Wait node's webhookSuffix option; a path alone; no signature (n8n says 401).
        (
            "http://n8n:5678/webhook-waiting/9/approve" + SIGNED,
            "/webhook-waiting/9/approve" + SIGNED,
        ),
        ("/webhook-waiting/9", "/webhook-waiting/9"),
    ],
)
def test_the_path_and_query_of_a_resume_url_under_n8ns_waiting_path(url: str, target: str) -> None:
    assert resume_target(url) == target


@pytest.mark.parametrize(
    "url",
    [
        "http://localhost:5678/webhook/supply",  # the webhook itself
        "http://localhost:5678/rest/login",  # another of n8n's paths
        "http://localhost:5678/webhook-waiting/",  # no execution
        "http://localhost:5678/webhook-waiting/1/../../rest/login",
        "http://localhost:5678/webhook-waiting/1/%2e%2e/%2E%2E/rest/login",
        "http://localhost:5678/webhook-waiting//1",
        "http://localhost:5678/webhook-waiting/1%5c..%5crest",
        "ftp://localhost/webhook-waiting/1",
        "javascript:alert(1)",
        "http://localhost:5678/webhook-waiting/1#fragment",
        "http://[::1/webhook-waiting/1",  # no URL at all
        "/webhook-waiting/" + "1" * MAX_RESUME_CHARS,
    ],
)
def test_anything_else_is_refused_saying_why(url: str) -> None:
    refused = resume_target(url)
    assert isinstance(refused, Refused) and "'resumeUrl'" in refused.why
    assert "3f9a0c" not in refused.why


def test_the_waiting_path_is_n8ns_as_configured() -> None:
    prefixed = "https://example.com/n8n/wait-here/12" + SIGNED
    assert resume_target(prefixed, "/n8n/wait-here/") == "/n8n/wait-here/12" + SIGNED
    assert isinstance(resume_target(prefixed), Refused)


def test_n8ns_refusals_to_resume_say_which() -> None:
    assert "signature" in (refused_resume(401) or "")
    assert "no waiting execution" in (refused_resume(404) or "")
    assert "no longer waiting" in (refused_resume(409) or "")
    assert refused_resume(200) is None and refused_resume(500) is None
