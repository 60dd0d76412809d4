"""The workflow's production webhook: the one call to it (`client`) over its connection
pool (`pool`), on streams of `network`, in HTTP/1.1 as `http11` writes and reads it."""

from .client import WebhookClient
from .request import WebhookRequest

__all__ = ["WebhookClient", "WebhookRequest"]
