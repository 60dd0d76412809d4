"""httpcore's errors raised as httpx's kinds, the original as the cause."""

from __future__ import annotations

import httpcore
import httpx
import pytest

from n8n_a2a.push.httpcore_errors import httpx_errors


@pytest.mark.parametrize(
    ("raised", "expected"),
    [
        (httpcore.TimeoutException, httpx.TimeoutException),
        (httpcore.ConnectTimeout, httpx.ConnectTimeout),
        (httpcore.ReadTimeout, httpx.ReadTimeout),
        (httpcore.WriteTimeout, httpx.WriteTimeout),
        (httpcore.PoolTimeout, httpx.PoolTimeout),
        (httpcore.NetworkError, httpx.NetworkError),
        (httpcore.ConnectError, httpx.ConnectError),
        (httpcore.ReadError, httpx.ReadError),
        (httpcore.WriteError, httpx.WriteError),
        (httpcore.ProtocolError, httpx.ProtocolError),
        (httpcore.LocalProtocolError, httpx.LocalProtocolError),
        (httpcore.RemoteProtocolError, httpx.RemoteProtocolError),
        (httpcore.ProxyError, httpx.ProxyError),
        (httpcore.UnsupportedProtocol, httpx.UnsupportedProtocol),
    ],
)
def test_each_httpcore_error_is_raised_as_its_httpx_kind(
    raised: type[Exception], expected: type[httpx.TransportError]
) -> None:
    original = raised("what happened")
    with pytest.raises(httpx.TransportError) as error, httpx_errors():
        raise original
    assert type(error.value) is expected
    assert str(error.value) == "what happened"
    assert error.value.__cause__ is original


def test_other_errors_pass_unchanged() -> None:
    with pytest.raises(ValueError, match="not httpcore's"), httpx_errors():
        raise ValueError("not httpcore's")
