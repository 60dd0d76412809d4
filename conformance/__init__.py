"""Conformance tooling: the TCK's workflow stand-in, the table of docs/conformance.md."""
