"""The trio driver: serve the app with hypercorn beside the nursery that runs webhook calls."""

from __future__ import annotations

import logging
import signal
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING

import trio

from . import __version__
from .app import create_app
from .budget import MemoryBudget, return_freed_payloads
from .config import Settings
from .executor import Drained, Executor, ExecutorConfig
from .executor.reaper import keep_leases
from .http.descriptors import fit_file_limit
from .http.hypercorn_seam import ServedConfig, serve_http
from .observability.metrics import Metrics
from .protocol.versions import SUPPORTED
from .push.deliverer import Deliverer
from .push.lookups import Lookups
from .push.sender import PushSender
from .push.service import PushNotifications
from .store import Leases, StoreConfig, Stores, open_stores
from .webhook import WebhookClient

if TYPE_CHECKING:
    # Its types only: the seam imports hypercorn's config once http/ has stood in for what
    # it imports unused (http/unused.py).
    from hypercorn.config import Config, Sockets

    from .auth.verifier import OidcVerifier

logger = logging.getLogger(__name__)

# Returns when the adapter should stop, with why (a signal's name), or None.
ShutdownTrigger = Callable[[], Awaitable[str | None]]


async def wait_for_stop_signal() -> str:
    """Return the name of the first SIGTERM or SIGINT."""
    with trio.open_signal_receiver(signal.SIGTERM, signal.SIGINT) as signals:
        return signal.Signals(await anext(signals)).name


class CannotListen(Exception):
    """The bind address cannot be had: in use, not on this machine, or not allowed."""

    def __init__(self, host: str, port: int, error: OSError) -> None:
        reason = error.strerror or str(error)
        address = f"[{host}]" if ":" in host else host
        super().__init__(
            f"cannot listen on {address}:{port} (ADAPTER_HOST, ADAPTER_PORT): "
            f"{reason[:1].lower()}{reason[1:]}"
        )


def listen(config: Config, settings: Settings) -> Sockets:
    """Bind and listen before anything starts, so a taken address is one clear error.

    Hypercorn would bind inside its nurseries, and the error would come out wrapped in
    three exception groups.
    """
    try:
        sockets = config.create_sockets()
        for sock in sockets.insecure_sockets:
            sock.listen(config.backlog)
    except OSError as error:
        raise CannotListen(settings.host, settings.port, error) from error
    return sockets


@asynccontextmanager
async def _token_verifier(settings: Settings) -> AsyncIterator[OidcVerifier | None]:
    """With ADAPTER_OIDC_ISSUER, the verifier whose keys load in the background; else none."""
    if settings.oidc_issuer is None:
        yield None
        return
    # The oidc extra: imported only when an issuer is set, so the base install runs without it.
    from .auth.verifier import open_verifier

    async with open_verifier(settings) as verifier:
        yield verifier


def _store_config(settings: Settings, metrics: Metrics, budget: MemoryBudget) -> StoreConfig:
    """What the backend ADAPTER_STORE_URL names opens its stores with (store/backends.py):
    in this process's memory, the finished tasks' payloads count in the budget and make
    room when it is full; PostgreSQL keeps them whole until the TTL, out of this process."""
    return StoreConfig(
        settings.store_url,
        max_tasks=settings.max_tasks,
        task_ttl=settings.task_ttl,
        lease_seconds=settings.lease_seconds,
        input_ttl=settings.input_ttl,
        budget=budget,
        ignored=metrics.store_notification_ignored,
    )


def hypercorn_config(settings: Settings) -> Config:
    """Hypercorn's settings for the adapter's connections."""
    config = ServedConfig()
    config.bind = [f"{settings.host}:{settings.port}"]
    config.accesslog = None
    # Hypercorn's default listen backlog is 100: a burst of more new connections than
    # that overflows it, and the kernel leaves the rest to SYN-ACK retries a second or
    # more apart. Room for every send the adapter admits (the kernel caps it at somaxconn).
    config.backlog = settings.max_concurrent_calls + settings.max_queued_calls
    # A Logger, not a path: hypercorn then adds no handler of its own, and its lines go
    # through ours (observability/logs.py), at our level.
    config.errorlog = logging.getLogger("hypercorn.error")
    # http/ times idle connections and request reads itself, and ends a connection whose
    # peer left. hypercorn's keep-alive timer (which runs from the end of a response
    # until the next request's head is whole) is never the first to fire; on shutdown
    # the seam closes the connections idle then, and this timer those idle after.
    # Its read_timeout stays off: it bounds every read, also those while a response is
    # produced.
    config.keep_alive_timeout = settings.keep_alive_timeout + settings.request_read_timeout
    # Requests waiting on a blocking send end at most at the end of the grace period,
    # when their calls are cut: hypercorn must not close their sockets before that.
    config.graceful_timeout = settings.shutdown_grace + 5.0
    return config


@dataclass(frozen=True)
class _TaskServices:
    """What serves tasks, once the stores and the webhook client are open."""

    executor: Executor
    deliverer: Deliverer
    push: PushNotifications


def _open_task_services(
    settings: Settings,
    calls: trio.Nursery,
    stores: Stores,
    budget: MemoryBudget,
    webhook: WebhookClient,
    push_sender: PushSender,
    lookups: Lookups,
    metrics: Metrics,
) -> _TaskServices:
    deliverer = Deliverer(
        push_sender,
        stores.tasks,
        stores.configs,
        max_attempts=settings.push_max_attempts,
        metrics=metrics,
    )
    push = PushNotifications(
        stores.configs,
        deliverer,
        stores.tasks,
        settings.push_allow_hosts,
        max_configs=settings.push_max_configs,
        lookups=lookups,
    )
    executor = Executor(
        calls,
        stores.tasks,
        stores.events,
        webhook,
        ExecutorConfig.from_settings(settings),
        metrics=metrics,
        push=push,
        budget=budget,
    )
    metrics.watch(lambda: executor.in_flight, lambda: executor.queued, stores.held)
    metrics.watch_push(lambda: deliverer.queued)
    metrics.watch_budget(lambda: budget.held, lambda: budget.kept, lambda: budget.waiting)
    return _TaskServices(executor, deliverer, push)


class _Shutdown:
    """From serving to stopped: the stop when told, the drain, the leases kept meanwhile,
    and what the stop line reports."""

    def __init__(self, settings: Settings, work: _TaskServices, trigger: ShutdownTrigger) -> None:
        self._settings = settings
        self._work = work
        self._trigger = trigger
        self._stopping = trio.Event()
        self._housekeeping = trio.CancelScope()
        self.reason = "the server stopped"
        self.drained = Drained(finished=0, cut=0)
        self.undelivered = 0

    async def stop_when_told(self) -> None:
        self.reason = await self._trigger() or "shutdown requested"
        self._work.executor.stop_accepting()
        self._stopping.set()

    def server_stopped(self) -> None:
        """The server stopped on its own: drain as after a signal."""
        self._stopping.set()

    async def drain_when_stopping(self) -> None:
        await self._stopping.wait()
        self.drained = await self._work.executor.drain(self._settings.shutdown_grace)
        # The updates of the tasks the drain ended get a grace of their own.
        self.undelivered = await self._work.deliverer.drain(self._settings.shutdown_grace)
        self._housekeeping.cancel()

    async def keep(self, leases: Leases) -> None:
        with self._housekeeping:
            work = self._work
            await keep_leases(leases, work.executor, self._settings.lease_seconds, work.push)


async def serve(
    settings: Settings,
    *,
    shutdown_trigger: ShutdownTrigger = wait_for_stop_signal,
    task_status: trio.TaskStatus[list[str]] = trio.TASK_STATUS_IGNORED,
) -> None:
    """Serve until `shutdown_trigger` returns; report the bound URLs through task_status."""
    config = hypercorn_config(settings)
    sockets = listen(config, settings)
    limits = fit_file_limit(settings)
    # Push lookups run in threads of their own, configs' and deliveries' alike.
    lookups = Lookups()
    metrics = Metrics()
    return_freed_payloads()
    budget = MemoryBudget(settings.memory_budget, settings.memory_wait, settings.memory_share)
    async with (
        WebhookClient(settings) as webhook,
        PushSender(
            settings.push_allow_hosts,
            resolve=lookups.resolve,
            max_concurrent=limits.push_posts,
            max_per_address=settings.push_max_per_address,
        ) as push_sender,
        _token_verifier(settings) as verifier,
        open_stores(_store_config(settings, metrics, budget)) as stores,
        trio.open_nursery() as calls,
    ):
        work = _open_task_services(
            settings, calls, stores, budget, webhook, push_sender, lookups, metrics
        )
        lifetime = _Shutdown(settings, work, shutdown_trigger)
        app = create_app(
            settings, work.executor, metrics, work.push, verifier, stores.problem, budget
        )

        async def run_http(task_status: trio.TaskStatus[list[str]]) -> None:
            # Hypercorn's connections, on the sockets bound above, while the executor
            # drains the webhook calls beside them.
            await serve_http(
                app,
                config,
                settings,
                limits,
                sockets,
                shutdown_trigger=lifetime.stop_when_told,
                task_status=task_status,
            )
            lifetime.server_stopped()

        await calls.start(work.deliverer.run, stores.events)
        await calls.start(work.executor.listen)
        if stores.leases is not None:
            calls.start_soon(lifetime.keep, stores.leases)
        calls.start_soon(lifetime.drain_when_stopping)
        listening = await calls.start(run_http)
        _log_start(settings, listening)
        task_status.started(listening)
    _log_stop(lifetime)


def _log_start(settings: Settings, listening: list[str]) -> None:
    # The message is short: text logs append the fields, JSON logs carry them.
    fields: dict[str, object] = {
        "event": "start",
        "version": __version__,
        "listening": listening,
        "public_url": settings.public_url,
        "a2a_versions": list(SUPPORTED),
    }
    if (signer := settings.card_signer) is not None:
        # Which key signs the card, by name: never the key.
        fields["card_signature"] = {"alg": signer.key.algorithm, "kid": signer.kid}
    logger.info("serving", extra={"fields": fields})


def _log_stop(lifetime: _Shutdown) -> None:
    fields = {
        "event": "stop",
        "reason": lifetime.reason,
        "calls_finished": lifetime.drained.finished,
        "calls_cut": lifetime.drained.cut,
        "push_undelivered": lifetime.undelivered,
    }
    logger.info("stopped", extra={"fields": fields})
