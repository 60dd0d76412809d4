"""A refusal of the request's size, read as n8n 2.41.1 answers it (tried: n8n.md, "How large")."""

from __future__ import annotations

import pytest

from n8n_a2a.core.too_large import SIZE_WORTH_NAMING, size_refusal

MIB = 1024 * 1024
# What n8n 2.41.1 answered, as tried against it: a JSON body past N8N_PAYLOAD_SIZE_MAX, and
# a form past its bounds.
NOT_RUN = b'{"code":0,"message":"There was a problem executing the workflow"}'
FORM_TOO_LARGE = b'{"code":413,"message":"The submitted form data exceeds the allowed size."}'


def test_a_json_body_past_n8ns_payload_bound_is_a_500_that_names_it() -> None:
    why = size_refusal(500, NOT_RUN, 17 * MIB + MIB // 2, multipart=False)
    assert why is not None
    assert "N8N_PAYLOAD_SIZE_MAX (16 MiB by default" in why
    assert "this one was a JSON body of 17.5 MiB" in why
    assert "4/3 of its bytes" in why
    assert "ADAPTER_WEBHOOK_FILES=multipart" in why


@pytest.mark.parametrize(
    ("body", "size", "multipart"),
    [
        (NOT_RUN, SIZE_WORTH_NAMING - 1, False),  # too small to be past n8n's bound
        (NOT_RUN, 17 * MIB, True),  # a form is not bound by N8N_PAYLOAD_SIZE_MAX
        (b'{"message":"Error in workflow"}', 17 * MIB, False),
        (b"<html>500</html>", 17 * MIB, False),
        (b"[1]", 17 * MIB, False),
    ],
)
def test_other_500s_are_no_size_refusal(body: bytes, size: int, multipart: bool) -> None:
    assert size_refusal(500, body, size, multipart) is None


def test_a_413_to_a_form_names_n8ns_form_bounds() -> None:
    why = size_refusal(413, FORM_TOO_LARGE, 21 * MIB, multipart=True)
    assert why is not None
    assert why.startswith(
        "The webhook refused the request as too large (HTTP 413): a multipart/form-data "
        "body of 21.0 MiB."
    )
    assert "N8N_FORMDATA_FILE_SIZE_MAX (200 MiB by default)" in why
    assert "20 MiB" in why and "proxy" in why


def test_a_413_to_json_names_the_payload_bound_whatever_its_body() -> None:
    # A proxy in front of n8n answers so too, with a body of its own.
    why = size_refusal(413, b"<html>413 Request Entity Too Large</html>", 900, multipart=False)
    assert why is not None
    assert "a JSON body of 900 bytes" in why
    assert "N8N_PAYLOAD_SIZE_MAX" in why


@pytest.mark.parametrize("status", [200, 400, 404, 502, 503])
def test_other_statuses_are_no_size_refusal(status: int) -> None:
    assert size_refusal(status, NOT_RUN, 17 * MIB, multipart=False) is None
