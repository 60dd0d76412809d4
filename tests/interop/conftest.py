"""The `client` marker: which client, version and mode a test drives, for the report;
and the adapter the clients drive.

The marker's values go into the JUnit XML report as the test's properties, from which
conformance/table.py builds the conformance table of docs/conformance.md.
"""

from __future__ import annotations

import pytest

# The shared checks live in matrix.py: let pytest explain their failed asserts too.
pytest.register_assert_rewrite("tests.interop.matrix")

import trio  # noqa: E402

from tests.interop import matrix  # noqa: E402
from tests.support.adapter import AdapterFactory  # noqa: E402
from tests.support.push_receiver import PushReceiver, start_push_receiver  # noqa: E402
from tests.support.stub_webhook import StubWebhook  # noqa: E402

#: Seconds of silence after which the clients' adapter sends a keep-alive comment: short,
#: so that a stream of a slow task carries some between its events (matrix.QUIET).
KEEPALIVE = 0.05


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers", "client(name, version, mode): the official client a test drives, and how"
    )
    config.addinivalue_line(
        "markers", "not_a_client: an interop test that drives no client (no row in the table)"
    )


@pytest.fixture(autouse=True)
def _client_properties(request: pytest.FixtureRequest) -> None:
    """Copy the test's `client` marker into its JUnit properties.

    user_properties directly, not the record_property fixture: that one warns under
    pytest's default junit_family (xunit2), though the properties are written the same.
    """
    marker = request.node.get_closest_marker("client")
    if marker is not None:
        name, version, mode = marker.args
        request.node.user_properties.extend(
            [("client", name), ("client_version", version), ("client_mode", mode)]
        )
    elif request.node.get_closest_marker("not_a_client") is not None:
        request.node.user_properties.append(("not_a_client", "true"))


@pytest.fixture
async def adapter(stub: StubWebhook, start_adapter: AdapterFactory) -> str:
    """The adapter in front of the stub, with keep-alive comments after a short silence."""
    url: str = await start_adapter(stub.url, stream_keepalive=KEEPALIVE)
    return url


@pytest.fixture
async def parts_adapter(stub: StubWebhook, start_adapter: AdapterFactory) -> str:
    """The adapter in front of the stub, taking and giving the parts the clients send."""
    modes = matrix.PARTS_MODES
    url: str = await start_adapter(stub.url, input_modes=modes, output_modes=modes)
    return url


@pytest.fixture
async def receiver(nursery: trio.Nursery) -> PushReceiver:
    """A push receiver on loopback, for the payload suites' push path."""
    return await start_push_receiver(nursery)
