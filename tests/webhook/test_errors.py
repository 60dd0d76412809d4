"""The outbound side's errors: each kind the client tells apart falls under the base it
catches; a push URL refused is none of them."""

from __future__ import annotations

import pytest

from n8n_a2a.webhook.errors import (
    ConnectError,
    LocalProtocolError,
    NetworkError,
    ProtocolError,
    PushRefused,
    ReadError,
    RemoteProtocolError,
    WebhookTransportError,
    WriteError,
)


@pytest.mark.parametrize(
    ("error", "kind"),
    [
        (ReadError, NetworkError),
        (WriteError, NetworkError),
        (RemoteProtocolError, ProtocolError),
        (LocalProtocolError, ProtocolError),
    ],
)
def test_each_error_is_of_the_kind_the_client_catches(
    error: type[WebhookTransportError], kind: type[WebhookTransportError]
) -> None:
    assert issubclass(error, kind)
    assert issubclass(error, WebhookTransportError)


def test_a_connect_error_is_neither_a_network_nor_a_protocol_error() -> None:
    # The client answers it UNREACHABLE or TLS_FAILURE, not BROKEN_REPLY.
    assert not issubclass(ConnectError, NetworkError | ProtocolError)


def test_a_refused_push_url_is_no_transport_error() -> None:
    # Nothing was sent: push/sender.py records it apart from the exchanges that failed.
    assert not issubclass(PushRefused, WebhookTransportError)
    assert str(PushRefused("the URL cannot be read")) == "the URL cannot be read"
