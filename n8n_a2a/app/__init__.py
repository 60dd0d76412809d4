"""The HTTP edge: the A2A routes on plain ASGI (front.py), the operator's on quart-trio
(operator.py), one module per route family.

card.py (the Agent Card), jsonrpc.py (the JSON-RPC endpoint) and rest.py (the HTTP+JSON
binding), with streams.py for their event streams, exchange.py for their requests and
answers; health.py (health, readiness, metrics), resource_metadata.py (RFC 9728's
metadata, with an issuer) and errors.py (what no route answers) on the operator's app;
negotiation.py reads what every request asks for, operations.py does what it asks.
"""

from .front import Front, create_app

__all__ = ["Front", "create_app"]
