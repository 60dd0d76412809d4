"""The trio driver: serve the app with hypercorn beside the nursery that runs webhook calls."""

from __future__ import annotations

import signal
from collections.abc import Awaitable, Callable

import trio
from hypercorn.config import Config
from hypercorn.trio import serve as hypercorn_serve

from .app import create_app
from .config import Settings
from .executor import Executor
from .tasks import TaskTable
from .webhook import WebhookClient

ShutdownTrigger = Callable[[], Awaitable[None]]


async def wait_for_stop_signal() -> None:
    """Return on the first SIGTERM or SIGINT."""
    with trio.open_signal_receiver(signal.SIGTERM, signal.SIGINT) as signals:
        async for _ in signals:
            return


async def serve(
    settings: Settings,
    *,
    shutdown_trigger: ShutdownTrigger = wait_for_stop_signal,
    task_status: trio.TaskStatus[list[str]] = trio.TASK_STATUS_IGNORED,
) -> None:
    """Serve until `shutdown_trigger` returns; report the bound URLs through task_status."""
    config = Config()
    config.bind = [f"{settings.host}:{settings.port}"]
    config.accesslog = None
    config.graceful_timeout = settings.webhook_timeout
    async with WebhookClient(settings) as webhook, trio.open_nursery() as calls:
        executor = Executor(calls, TaskTable(), webhook, settings.skill_id)
        app = create_app(settings, executor)
        await hypercorn_serve(
            app, config, shutdown_trigger=shutdown_trigger, task_status=task_status
        )
        calls.cancel_scope.cancel()
