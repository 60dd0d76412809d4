"""n8n-a2a: an Agent2Agent (A2A) facade in front of one n8n workflow."""

# pyproject.toml's version, written here rather than read from the installed metadata:
# importlib.metadata's import and its scan of sys.path were an eighth of a start's
# instructions (tests/test_main.py holds the two equal).
__version__ = "0.1.0"
