"""Conformance tooling: the A2A TCK's workflow stand-in and the README conformance table."""
