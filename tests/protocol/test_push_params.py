"""A push config read from a request's params: every field checked, secrets never quoted."""

from __future__ import annotations

import pytest

from n8n_a2a.protocol.errors import A2AError, ErrorCode
from n8n_a2a.protocol.params import Params
from n8n_a2a.protocol.push import PushAuthentication, PushConfig
from n8n_a2a.protocol.push_params import push_authentication, push_config


def test_a_config_is_read_with_its_fields_and_named_after_its_task_without_an_id() -> None:
    params = Params({"url": "https://bridge.example/a2a", "token": "tok"})
    config = push_config(params, task_id="t-1", version="1.0", authentication=None)
    assert config == PushConfig("t-1", "t-1", "https://bridge.example/a2a", "tok", None, "1.0")


@pytest.mark.parametrize(
    ("document", "words"),
    [
        ({"url": "ftp://b.example/"}, "params.url must be an http:// or https:// URL"),
        ({"url": "http://b.example/", "id": "i" * 257}, "params.id must be at most 256"),
        ({"url": "http://b.example/", "token": "s3cret\n"}, "params.token must be printable"),
        ({"url": "http://b.example/", "token": "s3cret" * 700}, "params.token must be at most"),
    ],
)
def test_a_field_past_its_rules_is_refused_naming_it(document: dict[str, str], words: str) -> None:
    with pytest.raises(A2AError) as refused:
        push_config(Params(document), task_id="t-1", version="1.0", authentication=None)
    assert refused.value.code is ErrorCode.INVALID_PARAMS
    assert words in refused.value.message and "s3cret" not in refused.value.message


def test_authentication_needs_a_short_scheme_and_keeps_its_credentials_unquoted() -> None:
    where = Params({}, "params.authentication")
    assert push_authentication(where, "Bearer", "c") == PushAuthentication("Bearer", "c")
    for scheme, words in ((None, "must name a scheme"), ("B" * 65, "at most 64 characters")):
        with pytest.raises(A2AError, match=words):
            push_authentication(where, scheme, "c")
    with pytest.raises(A2AError) as refused:
        push_authentication(where, "Bearer", "s3cret\r\n")
    assert "credentials" in refused.value.message and "s3cret" not in refused.value.message
