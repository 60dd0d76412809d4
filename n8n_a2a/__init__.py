"""n8n-a2a: an Agent2Agent (A2A) facade in front of one n8n workflow."""

from importlib.metadata import PackageNotFoundError, version

try:
    __version__ = version("n8n-a2a")
except PackageNotFoundError:  # running from a checkout that was never installed
    __version__ = "0.0.0"
