"""The rules, sans-I/O: the lifecycle table, turns, the workflow contract and its
chunk reader, what a task retains, sanitising text. Nothing here does I/O or reads
configuration (tests/test_architecture.py checks the folder)."""
