"""A multipart/form-data body read by Python's own MIME parser: a reader apart from the
adapter's writer (webhook/form.py), for the tests of what the webhook receives."""

from __future__ import annotations

import email.parser
import email.policy
from email.message import EmailMessage
from typing import cast


def parsed_form(content_type: str, body: bytes) -> list[EmailMessage]:
    """The form's parts in order; each one's headers, name, filename and bytes."""
    head = f"Content-Type: {content_type}\r\n\r\n".encode()
    parser = email.parser.BytesParser(policy=email.policy.HTTP)
    message = parser.parsebytes(head + body)
    assert message.is_multipart(), "not a multipart body"
    return [cast(EmailMessage, part) for part in message.iter_parts()]
