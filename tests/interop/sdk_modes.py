"""The ways the official a2a-sdk 1.3.0 client reaches the adapter, each a row of its own in
the conformance table: JSON-RPC v1.0 (its defaults), JSON-RPC v0.3 (the card cut to its
v0.3 interface, so that the compat transport talks) and the HTTP+JSON binding v1.0 (the
client told to support that binding alone, so that it picks the card's HTTP+JSON
interface, not the JSON-RPC one listed first)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pytest
from a2a.client import Client, ClientCallInterceptor, ClientConfig, ClientFactory
from a2a.types import AgentCard
from a2a.utils.constants import TransportProtocol

from tests.support.sdk import SDK, SDK_VERSION, only_v03


@dataclass(frozen=True)
class SdkMode:
    """One way: the test id, the table's mode, and the transport class the SDK must pick."""

    id: str
    row: str
    transport: str
    v03: bool = False
    bindings: tuple[str, ...] = ()  # ClientConfig.supported_protocol_bindings; none: JSON-RPC

    def client(
        self,
        card: AgentCard,
        interceptors: list[ClientCallInterceptor] | None = None,
        **options: Any,
    ) -> Client:
        """A client of `card` in this mode, with ClientConfig's `options`; the transport it
        picked checked, so that a mode cannot fall back to another binding unseen."""
        config = ClientConfig(supported_protocol_bindings=list(self.bindings), **options)
        client = ClientFactory(config).create(only_v03(card) if self.v03 else card, interceptors)
        picked = type(getattr(client, "_transport")).__name__  # noqa: B009
        assert picked == self.transport, f"{self.row}: the SDK picked {picked}"
        return client

    def param(self, row: str = "") -> pytest.ParameterSet:
        """This mode as a pytest parameter, marked with its client mode and `row` after it."""
        return pytest.param(
            self, marks=pytest.mark.client(SDK, SDK_VERSION, self.row + row), id=self.id
        )


V1 = SdkMode("v1.0", "v1.0", "JsonRpcTransport")
V03 = SdkMode("v0.3-compat", "v0.3 compat", "CompatJsonRpcTransport", v03=True)
REST = SdkMode("v1.0-rest", "v1.0 REST", "RestTransport", bindings=(TransportProtocol.HTTP_JSON,))
MODES = (V1, V03, REST)


def parametrize(row: str = "") -> pytest.MarkDecorator:
    """Every mode as the test's `mode`, each marked with its client mode and `row` after it."""
    return pytest.mark.parametrize("mode", [mode.param(row) for mode in MODES])
