"""The official a2a-sdk Python client as the interop tests name and drive it."""

from __future__ import annotations

from importlib.metadata import version

from a2a.compat.v0_3.versions import is_legacy_version
from a2a.types import AgentCard, TaskState

#: The client's name in the conformance table, and its version: the one installed.
SDK = "a2a-sdk (Python)"
SDK_VERSION = version("a2a-sdk")


def only_v03(card: AgentCard) -> AgentCard:
    """The card cut to its v0.3 interfaces, so that the SDK's v0.3 transport does the talking."""
    legacy = AgentCard()
    legacy.CopyFrom(card)
    keep = [i for i in legacy.supported_interfaces if is_legacy_version(i.protocol_version)]
    del legacy.supported_interfaces[:]
    legacy.supported_interfaces.extend(keep)
    return legacy


def state_name(state: TaskState) -> str:
    """A task state as v0.3 names it (`input-required`), the client matrix's common shape."""
    return str(TaskState.Name(state)).removeprefix("TASK_STATE_").lower().replace("_", "-")
