"""n8n's resume URL: the address of an execution that waits, in a Wait node ("Resume: On
Webhook Call"), for the caller's next message, and how n8n refuses a resume.

A workflow's question (or sign-in asked) may carry `"resumeUrl": "{{ $execution.resumeUrl }}"`;
the caller's next message on the task then goes there instead of to the webhook, and the
same execution answers it. The facts, from n8n 2.41's source: the URL is
`<base>webhook-waiting/<execution id>?signature=<token>`; `<base>` is n8n's `WEBHOOK_URL`
or `N8N_PROTOCOL://N8N_HOST:N8N_PORT/` (host `localhost` by default), not the address the
adapter dials; a missing or wrong signature is 401, an unknown execution 404, one that
has finished, runs or failed 409.

So the adapter takes only the URL's path and query, and only a path under n8n's waiting
path (ADAPTER_WAITING_PATH: n8n's N8N_PATH, then its N8N_ENDPOINT_WEBHOOK_WAIT), and
POSTs them to the origin of ADAPTER_WEBHOOK_URL: a reply can never send the caller's
message and token anywhere else, nor to another of n8n's paths. The URL is a credential:
it is kept with the task, never shown. Pure: no I/O.
"""

from __future__ import annotations

from dataclasses import dataclass
from urllib.parse import unquote, urlsplit

#: n8n's default: N8N_PATH `/`, N8N_ENDPOINT_WEBHOOK_WAIT `webhook-waiting`.
WAITING_PATH = "/webhook-waiting/"
#: The longest resume URL taken (n8n's: some 120 characters).
MAX_RESUME_CHARS = 2048

#: Why n8n refuses to resume an execution, by the HTTP status it answers.
_REFUSALS = {
    401: "n8n refused the resume of the waiting execution (HTTP 401): its signature is "
    "missing or wrong.",
    404: "n8n knows no waiting execution at the resume URL (HTTP 404): it was deleted, or "
    "ADAPTER_WEBHOOK_URL names another n8n.",
    409: "n8n would not resume the execution (HTTP 409): it is no longer waiting (it "
    "finished, failed, or another message resumed it). Send a new message to start again.",
}


@dataclass(frozen=True, slots=True)
class Refused:
    """A `resumeUrl` that cannot be taken, and why (in the contract's words)."""

    why: str


def resume_target(url: str, waiting_path: str = WAITING_PATH) -> str | Refused:
    """The path and query the next turn is POSTed to, of an http(s) resume URL (or of its
    path alone) under `waiting_path`; Refused for anything else."""
    if len(url) > MAX_RESUME_CHARS:
        return Refused(f"'resumeUrl' is longer than {MAX_RESUME_CHARS} characters")
    try:
        parts = urlsplit(url.strip())
    except ValueError:
        parts = None
    if parts is None or parts.scheme not in ("", "http", "https") or parts.fragment:
        return Refused("'resumeUrl' is no http(s) URL")
    path = parts.path
    execution = path.removeprefix(waiting_path)
    segments = unquote(execution).split("/")
    if (
        not path.startswith(waiting_path)
        or not execution
        or "\\" in unquote(path)
        or any(segment in ("", ".", "..") for segment in segments)
    ):
        return Refused(
            f"'resumeUrl' is not under n8n's waiting path {waiting_path} (ADAPTER_WAITING_PATH)"
        )
    return path + (f"?{parts.query}" if parts.query else "")


#: A 409 for an execution that runs still (webhook/client.py tried again a few times).
_RUNNING = (
    "n8n would not resume the execution (HTTP 409): it is running still (it had not reached "
    "its Wait node after some 3 s of retries, or another message resumed it)."
)


def refused_resume(status: int, body: bytes | bytearray = b"") -> str | None:
    """What n8n's answer to a resume says, if it is a refusal to resume (None otherwise)."""
    if status == 409 and b"is running already" in body:
        return _RUNNING
    return _REFUSALS.get(status)
