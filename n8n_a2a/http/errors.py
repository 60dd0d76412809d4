"""The errors of serving HTTP/1.1 (framing.py): a request the adapter will not read, and
a response written against its own framing."""

from __future__ import annotations


class RequestError(Exception):
    """A request the adapter will not read: answered with `status`, then closed."""

    def __init__(self, message: str, status: int = 400) -> None:
        super().__init__(message)
        self.status = status


class ResponseError(Exception):
    """A response written against its own framing (more or fewer body bytes than its
    Content-Length, a body where none may be): the app's fault, never the client's."""
