from __future__ import annotations

import trio

from n8n_a2a.app.health import webhook_host_problem
from tests.support.adapter import free_port


async def test_a_host_that_takes_connections_is_no_problem() -> None:
    listeners = await trio.open_tcp_listeners(0, host="127.0.0.1")
    port = listeners[0].socket.getsockname()[1]
    async with listeners[0]:
        assert await webhook_host_problem(f"http://127.0.0.1:{port}/webhook/supply") is None


async def test_a_host_that_refuses_connections_is_the_problem_named() -> None:
    problem = await webhook_host_problem(f"http://127.0.0.1:{free_port()}/webhook/supply")
    assert problem is not None
    assert problem.startswith("the webhook's host does not take connections: ")
