"""The A2A protocol, sans-I/O: JSON-RPC envelopes, the two wire codecs and the Agent Card.

Nothing in this package imports trio, quart or httpx.
"""
