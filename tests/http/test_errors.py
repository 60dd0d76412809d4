"""The serving side's errors: a refused request carries the status it is answered with."""

from __future__ import annotations

from n8n_a2a.http.errors import RequestError, ResponseError


def test_a_refused_request_is_a_400_unless_it_says_otherwise() -> None:
    assert RequestError("illegal request line").status == 400
    refused = RequestError("HTTP/2.0 is not served here", 505)
    assert (refused.status, str(refused)) == (505, "HTTP/2.0 is not served here")


def test_a_response_against_its_framing_is_no_refused_request() -> None:
    assert not issubclass(ResponseError, RequestError)
