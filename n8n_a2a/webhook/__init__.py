"""The workflow's production webhook: the one call to it (`client`) over its connection
pool (`pool`)."""

from .client import WebhookClient, WebhookRequest

__all__ = ["WebhookClient", "WebhookRequest"]
