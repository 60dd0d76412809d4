from __future__ import annotations

import pytest

from n8n_a2a.protocol.errors import A2AError, ErrorCode
from n8n_a2a.protocol.http import bearer_token, is_json, trace_headers


@pytest.mark.parametrize(
    ("header", "token"),
    [
        (None, None),
        ("", None),
        ("Bearer abc.DEF-ghi_~+/==", "abc.DEF-ghi_~+/=="),
        ("bearer   abc", "abc"),
        ("Basic dXNlcjpwdw==", None),
    ],
)
def test_bearer_token(header: str | None, token: str | None) -> None:
    assert bearer_token(header) == token


@pytest.mark.parametrize("header", ["Bearer", "Bearer two words", 'Bearer "quoted"', "Bearer a\nb"])
def test_a_malformed_bearer_is_refused_without_quoting_it(header: str) -> None:
    with pytest.raises(A2AError) as raised:
        bearer_token(header)
    assert raised.value.code is ErrorCode.INVALID_REQUEST
    assert "two words" not in raised.value.message and "quoted" not in raised.value.message


@pytest.mark.parametrize(
    ("content_type", "expected"),
    [
        ("application/json", True),
        ("application/json; charset=utf-8", True),
        ("Application/JSON", True),
        ("application/a2a+json", True),
        ("text/plain", False),
        ("application/x-www-form-urlencoded", False),
        (None, False),
        ("", False),
    ],
)
def test_is_json(content_type: str | None, expected: bool) -> None:
    assert is_json(content_type) is expected


PARENT = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"


@pytest.mark.parametrize(
    ("traceparent", "tracestate", "expected"),
    [
        (None, "a=b", ()),
        (PARENT, None, (("traceparent", PARENT),)),
        (PARENT, "a=b,c=d", (("traceparent", PARENT), ("tracestate", "a=b,c=d"))),
        (PARENT.upper(), None, (("traceparent", PARENT),)),
        (PARENT, "x" * 600, (("traceparent", PARENT),)),
        (PARENT, "a=b\r\nX-Evil: 1", (("traceparent", PARENT),)),
        ("00-" + "0" * 32 + "-00f067aa0ba902b7-01", None, ()),
        ("00-4bf92f3577b34da6a3ce929d0e0e4736-" + "0" * 16 + "-01", None, ()),
        ("ff-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01", None, ()),
        ("garbage", "a=b", ()),
    ],
)
def test_trace_headers(
    traceparent: str | None, tracestate: str | None, expected: tuple[tuple[str, str], ...]
) -> None:
    assert trace_headers(traceparent, tracestate) == expected
