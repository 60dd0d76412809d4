"""The push config methods and inline configs: check a config, store it, deliver to it.

The caller's right to see the task is judged before any of this, where GetTask judges
it: a task the caller may not see is an unknown task here too.
"""

from __future__ import annotations

import base64
import binascii

import trio

from ..core.errors import AtCapacity, StoreUnavailable
from ..core.lifecycle import is_terminal
from ..core.owners import Owner
from ..protocol.errors import A2AError, ErrorCode, quoted_id
from ..protocol.model import Task
from ..protocol.push import (
    AllowList,
    CreatePushConfig,
    DeletePushConfig,
    GetPushConfig,
    ListPushConfigs,
    PushConfig,
    PushConfigPage,
)
from ..store import PushConfigStore, TaskStore
from ..webhook.errors import PushRefused
from .deliverer import Deliverer
from .guard import destination
from .lookups import CallerLookup, Lookups

#: Seconds a config's host may take to resolve when the config is made, its wait for a
#: lookup thread included. A name that has no answer by then is refused; one the DNS says
#: does not exist is taken: every delivery looks it up, and judges it, again.
LOOKUP_TIMEOUT = 5.0


class PushNotifications:
    def __init__(
        self,
        configs: PushConfigStore,
        deliverer: Deliverer,
        tasks: TaskStore,
        allow: AllowList,
        *,
        max_configs: int = 8,
        lookups: Lookups | None = None,
    ) -> None:
        """`lookups`: the ones deliveries share (server.py); by default, its own."""
        self._configs = configs
        self._deliverer = deliverer
        self._tasks = tasks
        self._allow = allow
        self._max_configs = max_configs
        self._lookups = lookups or Lookups()

    async def check(self, config: PushConfig, owner: Owner) -> None:
        """-32602 when the policy refuses where the config's URL leads (after a lookup), or
        its host has no answer in time; -32000 when the lookup got no thread in time."""
        lookup = self._lookups.for_caller(owner)
        with trio.move_on_after(LOOKUP_TIMEOUT):
            try:
                await destination(config.url, self._allow, lookup)
            except PushRefused as refused:
                raise A2AError.invalid_params(
                    f"The push notification URL is refused: {refused}"
                ) from None
            except OSError:
                pass  # no such name now: each delivery looks again
            return
        raise self._late(lookup, owner)

    def _late(self, lookup: CallerLookup, owner: Owner) -> A2AError | AtCapacity:
        if lookup.started:
            return A2AError.invalid_params(
                "The push notification URL is refused: its host did not resolve within "
                f"{LOOKUP_TIMEOUT:g} s"
            )
        who = "anonymous callers'" if owner is None else "this caller's"
        taken = (
            f"the adapter's {self._lookups.threads.total_tokens} push lookup threads"
            if lookup.has_share
            else f"{who} {self._lookups.shares.tokens} lookups at once (one caller's most)"
        )
        return AtCapacity(
            f"The push notification URL's host could not be looked up within "
            f"{LOOKUP_TIMEOUT:g} s: {taken} are all taken by names that have not answered "
            "yet; try again later",
        )

    async def register(self, task: Task, config: PushConfig) -> PushConfig:
        """An inline config, checked already, for a new task that has had no event yet."""
        registered = config.for_task(task.id)
        await self._hold(registered)
        self._deliverer.deliver_to(registered)
        return registered

    async def create(self, operation: CreatePushConfig, owner: Owner) -> PushConfig:
        config = operation.config
        await self.check(config, owner)
        await self._hold(config)
        self._deliverer.deliver_to(config)
        # Look after delivering to it, so that an end in between is not missed: on a task that
        # has ended, the route ends at once and the config stays to be read.
        try:
            ended = is_terminal((await self._tasks.get(config.task_id)).status.state)
        except (A2AError, StoreUnavailable):
            ended = True  # no longer held (it ended a while ago), or not to be known now
        if ended:
            self._deliverer.task_ended(config.task_id)
        return config

    async def get(self, operation: GetPushConfig) -> PushConfig:
        config = await self._configs.get(operation.task_id, operation.config_id)
        if config is None:
            raise A2AError(
                ErrorCode.TASK_NOT_FOUND,
                f"Push notification config {quoted_id(operation.config_id)!r} not found for "
                f"task {quoted_id(operation.task_id)}",
            )
        return config

    async def list(self, operation: ListPushConfigs) -> PushConfigPage:
        configs = await self._configs.list(operation.task_id)
        start = _offset(operation.page_token) if operation.page_token else 0
        end = len(configs) if operation.page_size is None else start + operation.page_size
        more = end < len(configs)
        return PushConfigPage(configs[start:end], _page_token(end) if more else "")

    async def delete(self, operation: DeletePushConfig) -> None:
        """Idempotent: deleting a config that is not there is no error."""
        self._deliverer.stop_delivering_to(operation.task_id, operation.config_id)
        await self._configs.delete(operation.task_id, operation.config_id)

    async def take_over(self, task_id: str) -> None:
        """Deliver the task's updates from here on, to every config it has: its replica
        died, and the task's end is made here (executor.reaper.Takeover)."""
        for config in await self._configs.list(task_id):
            self._deliverer.deliver_to(config)

    def stand_down(self, task_id: str) -> None:
        """The task taken over had ended already: its routes end with nothing to deliver."""
        self._deliverer.task_ended(task_id)

    async def _hold(self, config: PushConfig) -> None:
        if not await self._configs.put(config, self._max_configs):
            raise A2AError.invalid_params(
                f"Task {config.task_id} has {self._max_configs} push notification configs "
                "already (ADAPTER_PUSH_MAX_CONFIGS); delete one, or give the id of one to "
                "replace it"
            )


def _page_token(offset: int) -> str:
    return base64.urlsafe_b64encode(f"push-configs:{offset}".encode()).decode()


def _offset(token: str) -> int:
    try:
        prefix, _, offset = base64.urlsafe_b64decode(token.encode()).decode().partition(":")
    except (binascii.Error, UnicodeError, ValueError):
        prefix, offset = "", ""
    if prefix != "push-configs" or not offset.isascii() or not offset.isdigit():
        raise A2AError.invalid_params("params.pageToken is not a token this agent gave")
    return int(offset)
