"""The trio driver: serve the app with hypercorn beside the nursery that runs webhook calls."""

from __future__ import annotations

import logging
import signal
from collections.abc import Awaitable, Callable

import trio
from hypercorn.config import Config

from .app import create_app
from .config import Settings
from .connections import serve_http
from .executor import Executor
from .metrics import Metrics
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
    # Hypercorn's default listen backlog is 100: a burst of more new connections than
    # that overflows it, and the kernel leaves the rest to SYN-ACK retries a second or
    # more apart. Room for every send the adapter admits (the kernel caps it at somaxconn).
    config.backlog = settings.max_concurrent_calls + settings.max_queued_calls
    # A Logger, not a path: hypercorn then adds no handler of its own, and its lines go
    # through ours (logs.py), at our level.
    config.errorlog = logging.getLogger("hypercorn.error")
    # connections.py times idle connections and request reads itself, and ends a
    # connection whose peer left. hypercorn's keep-alive timer (which runs from the end of
    # a response until the next request's head is whole) is never the first to fire;
    # it closes idle connections at once on shutdown. Its read_timeout stays off: it
    # bounds every read, also those while a response is produced.
    config.keep_alive_timeout = settings.keep_alive_timeout + settings.request_read_timeout
    # Requests waiting on a blocking send end at most at the end of the grace period,
    # when their calls are cut: hypercorn must not close their sockets before that.
    config.graceful_timeout = settings.shutdown_grace + 5.0
    stopping = trio.Event()
    async with WebhookClient(settings) as webhook, trio.open_nursery() as calls:
        table = TaskTable(settings.max_tasks, settings.task_ttl)
        metrics = Metrics()
        executor = Executor(
            calls,
            table,
            webhook,
            settings.skill_id,
            max_concurrent_calls=settings.max_concurrent_calls,
            max_queued_calls=settings.max_queued_calls,
            metrics=metrics,
        )
        metrics.watch(lambda: executor.in_flight, lambda: executor.queued, lambda: len(table))

        async def stop_when_told() -> None:
            await shutdown_trigger()
            executor.stop_accepting()
            stopping.set()

        async def drain_when_stopping() -> None:
            await stopping.wait()
            await executor.drain(settings.shutdown_grace)

        calls.start_soon(drain_when_stopping)
        app = create_app(settings, executor, metrics)
        # The connection's read deadline bounds a request's body: quart's own 60 s would
        # cut one that ADAPTER_REQUEST_READ_TIMEOUT allows longer.
        app.config["BODY_TIMEOUT"] = None
        # Hypercorn stops listening and waits for the requests under way while the
        # executor drains the webhook calls beside it.
        await serve_http(
            app, config, settings, shutdown_trigger=stop_when_told, task_status=task_status
        )
        stopping.set()  # also when hypercorn stopped on its own
