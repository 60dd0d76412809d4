"""httpcore's errors raised as httpx's, for the push client (push/client.py), which sends
on httpcore's public API under an httpx client.

httpx maps them in a private function, hence the table here.
"""

from __future__ import annotations

import contextlib
import typing

import httpcore
import httpx

# httpcore's error -> httpx's; a subclass not named here maps as its nearest base.
_HTTPX_ERRORS: dict[type[Exception], type[httpx.TransportError]] = {
    httpcore.TimeoutException: httpx.TimeoutException,
    httpcore.ConnectTimeout: httpx.ConnectTimeout,
    httpcore.ReadTimeout: httpx.ReadTimeout,
    httpcore.WriteTimeout: httpx.WriteTimeout,
    httpcore.PoolTimeout: httpx.PoolTimeout,
    httpcore.NetworkError: httpx.NetworkError,
    httpcore.ConnectError: httpx.ConnectError,
    httpcore.ReadError: httpx.ReadError,
    httpcore.WriteError: httpx.WriteError,
    httpcore.ProtocolError: httpx.ProtocolError,
    httpcore.LocalProtocolError: httpx.LocalProtocolError,
    httpcore.RemoteProtocolError: httpx.RemoteProtocolError,
    httpcore.ProxyError: httpx.ProxyError,
    httpcore.UnsupportedProtocol: httpx.UnsupportedProtocol,
}


@contextlib.contextmanager
def httpx_errors() -> typing.Iterator[None]:
    """Raise httpcore's errors as httpx's, the original as the cause (as httpx does):
    callers catch httpx's kinds, and find an ssl.SSLError down the cause chain."""
    try:
        yield
    except Exception as error:
        for kind in type(error).__mro__:
            mapped = _HTTPX_ERRORS.get(kind)
            if mapped is not None:
                raise mapped(str(error)) from error
        raise
