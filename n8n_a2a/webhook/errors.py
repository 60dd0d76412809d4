"""What goes wrong on the outbound side, all in one place: an exchange with the webhook
(or a push receiver, over the same HTTP/1.1) that comes to no reply, which the client
(webhook/client.py) turns into a TransportFailure's outcome and push/sender.py into an
attempt's; and a push URL the policy will not send to."""

from __future__ import annotations


class WebhookTransportError(Exception):
    """The exchange with the webhook did not come to a reply."""


class ConnectError(WebhookTransportError):
    """No connection: refused, unreachable, a name that does not resolve, or a TLS
    handshake that failed (the ssl.SSLError down the cause chain)."""


class NetworkError(WebhookTransportError):
    """A connection cut while the request went out or the reply came in."""


class ReadError(NetworkError):
    """Cut while the reply was read."""


class WriteError(NetworkError):
    """Cut while the request was written (and no reply came before the cut)."""


class ProtocolError(WebhookTransportError):
    """HTTP/1.1 broken on one side or the other."""


class RemoteProtocolError(ProtocolError):
    """The reply is not HTTP/1.1 as RFC 9112 frames it (or it ends before its end).

    `quoted`, the first bytes of the line that broke it, follows the reason in the
    message: a clue to what the operator's own webhook sent. `reason` alone is what a push
    attempt records (push/sender.py): a receiver's reply is the receiver's, and may echo
    the notification token it was sent."""

    def __init__(self, reason: str, quoted: bytes = b"") -> None:
        super().__init__(f"{reason}: {quoted!r}" if quoted else reason)
        self.reason = reason


class LocalProtocolError(ProtocolError):
    """The request cannot be written: a header field name or value HTTP/1.1 refuses."""


class PushRefused(Exception):
    """The push policy refuses where a URL leads (push/guard.py); the message says why, in
    words the caller may hear, and names ADAPTER_PUSH_ALLOW_HOSTS."""
