"""What stands in sys.modules for hypercorn's HTTP/1.1 protocol module,
`hypercorn.protocol.h11`: the names hypercorn's protocol package imports from it, the
adapter's own.

hypercorn's ProtocolWrapper makes an `H11Protocol` for each connection not given h2 by
ALPN (a plain TCP stream never is), and turns to HTTP/2 on two errors of its. unused.py
puts this module in that one's place before hypercorn's protocol package is imported:
the wrapper makes an HTTP11Protocol (protocol.py) itself, and hypercorn's module, with
h11 and HTTPStream, is never imported (36 million instructions of the start), nor an h11
connection made for each connection only to be dropped. The two errors are never raised
(framing.py refuses the HTTP/2 preface and drops `Upgrade`), but the wrapper's `except`
clauses name them: each must be an exception class, or any error of the protocol's
would pass on as a TypeError.

tests/http/test_hypercorn_h11.py pins what hypercorn takes from here and how it makes
its protocol with it.
"""

from __future__ import annotations

from .protocol import HTTP11Protocol as H11Protocol

__all__ = ["H2CProtocolRequiredError", "H2ProtocolAssumedError", "H11Protocol"]


class H2ProtocolAssumedError(Exception):
    """Never raised: HTTP11Protocol refuses the HTTP/2 preface."""


class H2CProtocolRequiredError(Exception):
    """Never raised: HTTP11Protocol drops `Upgrade: h2c`."""
