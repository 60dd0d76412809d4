from __future__ import annotations

import pytest

from n8n_a2a.protocol.errors import A2AError, ErrorCode
from n8n_a2a.protocol.http import bearer_token, is_json


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
