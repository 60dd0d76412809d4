"""A webhook's refusal of the request's size, worded with the n8n setting that bounds it
(core/contract.py asks, for an HTTP error reply).

n8n 2.41.1 bounds the two ways the adapter sends (ADAPTER_WEBHOOK_FILES) differently, and
refuses each in its own way, as tried against it:

- a JSON body past N8N_PAYLOAD_SIZE_MAX (16 MiB by default; a file's base64 in it is 4/3 of
  its bytes): HTTP **500** `{"code":0,"message":"There was a problem executing the
  workflow"}`, the words n8n answers for any failure before its workflow runs;
- a multipart/form-data body past N8N_FORMDATA_FILE_SIZE_MAX (200 MiB of files by default)
  or past 20 MiB of form fields: HTTP 413 `{"code":413,"message":"The submitted form data
  exceeds the allowed size."}`.

A proxy in front of n8n may answer 413 to either. Pure: no I/O.
"""

from __future__ import annotations

import json

#: What n8n 2.41 answers, with HTTP 500, when it fails before the workflow runs.
N8N_NOT_RUN = "There was a problem executing the workflow"
#: A JSON body from which a 500 of n8n's is worth reading as N8N_PAYLOAD_SIZE_MAX (its
#: unit is the MiB): a smaller one failed for some other reason.
SIZE_WORTH_NAMING = 1024 * 1024

_JSON_BOUND = (
    "n8n takes a JSON body up to N8N_PAYLOAD_SIZE_MAX (16 MiB by default; a file's base64 is "
    "4/3 of its bytes). Raise it, or send files as n8n's binary data "
    "(ADAPTER_WEBHOOK_FILES=multipart), which it does not bound"
)
_FORM_BOUND = (
    "n8n takes form files up to N8N_FORMDATA_FILE_SIZE_MAX (200 MiB by default) and form "
    "fields (the request's JSON, its text and data) up to 20 MiB"
)


def size_refusal(
    status: int, body: bytes | bytearray, request_bytes: int, multipart: bool
) -> str | None:
    """Why the webhook refused a request of `request_bytes` (sent as multipart/form-data or
    not) for its size, without what n8n said; None when the reply is no such refusal."""
    sent = f"{'a multipart/form-data' if multipart else 'a JSON'} body of {_size(request_bytes)}"
    if status == 413:
        bound = _FORM_BOUND if multipart else _JSON_BOUND
        return (
            f"The webhook refused the request as too large (HTTP 413): {sent}. {bound}; a "
            "proxy in front of n8n may have a bound of its own."
        )
    large_json = not multipart and request_bytes >= SIZE_WORTH_NAMING
    if status == 500 and large_json and _message(body) == N8N_NOT_RUN:
        return (
            f'n8n failed the request before its workflow ran (HTTP 500 "{N8N_NOT_RUN}"), '
            f"as n8n 2.41 answers a JSON body too large for it; this one was {sent}. "
            f"{_JSON_BOUND}. If it is not that, n8n's log says why."
        )
    return None


def _size(count: int) -> str:
    return f"{count / (1024 * 1024):.1f} MiB" if count >= 1024 * 1024 else f"{count} bytes"


def _message(body: bytes | bytearray) -> object:
    try:
        document = json.loads(body)
    except (ValueError, RecursionError):
        return None
    return document.get("message") if isinstance(document, dict) else None
