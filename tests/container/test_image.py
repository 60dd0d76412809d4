"""The image itself, built by container/build and run by a real engine (podman or docker).

Each container runs as the Kubernetes example runs it: read-only root, every capability
dropped, the image's own user, the ConfigMap's variables, the CA bundle mounted where
the pod mounts it. What a cluster provides is replaced by the host: the network (the
adapter, the stub webhook, PostgreSQL and the issuer all on 127.0.0.1). The figures
(build time, size, layers, run-to-card, idle RSS) are printed as the tests go.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import os
import time
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from urllib.parse import urlsplit

import httpx
import pip
import psycopg
import pytest
import trio
from a2a.client import A2ACardResolver, ClientConfig, ClientFactory
from a2a.types import Message, Part, Role, SendMessageRequest, TaskState

from tests.container.engine import (
    FIGURES,
    HOST_OPTIONS,
    LOCKED_DOWN,
    Built,
    Engine,
    build_image,
    engine_or_reason,
)
from tests.container.files import ENV_FILE, configmap_environment, final_stage
from tests.container.host import moved, start_tls_stub, stopped_during_a_send
from tests.support.adapter import free_port
from tests.support.jsonrpc import V1, rpc, send_v1
from tests.support.oidc_issuer import AUDIENCE, start_issuer
from tests.support.postgres_server import PostgresServer
from tests.support.stub_webhook import StubWebhook

pytestmark = pytest.mark.container

STARTUP_SECONDS = 60.0
GRACE_SECONDS = 10
#: Where the Kubernetes example mounts the CA bundle (ADAPTER_CA_BUNDLE).
CA_IN_CONTAINER = configmap_environment()["ADAPTER_CA_BUNDLE"]


def _figure(name: str, value: str) -> None:
    # Printed at the end of the run (tests/container/conftest.py), past pytest's capture.
    FIGURES.append(f"{name}: {value}")


@pytest.fixture(scope="session")
def engine() -> Engine:
    name, reason = engine_or_reason()
    if name is None:
        if os.environ.get("CI"):
            pytest.fail(f"CI must run the image: {reason}")
        pytest.skip(reason)
    return Engine(name)


@pytest.fixture(scope="session")
def image(engine: Engine) -> Iterator[str]:
    built: Built = build_image()
    _figure("build (container/build)", f"{built.seconds:.0f} s")
    yield built.tag


@dataclass
class Running:
    """One container of the image, and the host side of it."""

    engine: Engine
    container: str
    port: int
    url: str
    stub: StubWebhook
    seconds_to_card: float

    async def output(self) -> str:
        return (await self.engine.logs(self.container))[-4000:]


@pytest.fixture
async def tls_stub(nursery: trio.Nursery, tmp_path: Path) -> tuple[StubWebhook, Path]:
    """The stub webhook over TLS on the host, and the CA file that verifies it."""
    return await start_tls_stub(nursery, tmp_path)


Launch = Callable[..., Awaitable[Running]]


@pytest.fixture
async def launch(
    engine: Engine, image: str, tls_stub: tuple[StubWebhook, Path]
) -> AsyncIterator[Launch]:
    """Start the image with the ConfigMap's variables, moved to the host, and these; once
    it serves its card, the container (removed after the test)."""
    stub, bundle = tls_stub
    containers: list[str] = []

    async def start(**extra: str) -> Running:
        configmap, port = configmap_environment(), free_port()
        public = moved(configmap["ADAPTER_PUBLIC_URL"], "http", f"127.0.0.1:{port}")
        webhook = moved(configmap["ADAPTER_WEBHOOK_URL"], "https", urlsplit(stub.base_url).netloc)
        variables = {
            **configmap,
            "ADAPTER_HOST": "127.0.0.1",
            "ADAPTER_PORT": str(port),
            "ADAPTER_PUBLIC_URL": public,
            "ADAPTER_WEBHOOK_URL": webhook,
            "ADAPTER_SHUTDOWN_GRACE": str(GRACE_SECONDS),
            **extra,
        }
        mount = f"--volume={bundle}:{CA_IN_CONTAINER}:ro"
        started = time.monotonic()
        container = await engine.start(image, variables, *LOCKED_DOWN, mount)
        containers.append(container)
        seconds = await _until_the_card_is_served(engine, container, port, started)
        return Running(engine, container, port, public, stub, seconds)

    try:
        yield start
    finally:
        for container in containers:
            await engine.remove(container)


@pytest.fixture
async def running(launch: Launch) -> Running:
    return await launch()


async def _until_the_card_is_served(
    engine: Engine, container: str, port: int, started: float
) -> float:
    card = f"http://127.0.0.1:{port}/.well-known/agent-card.json"
    with trio.move_on_after(STARTUP_SECONDS):
        async with httpx.AsyncClient() as client:
            while True:
                try:
                    if (await client.get(card)).status_code == 200:
                        return time.monotonic() - started
                except httpx.TransportError:
                    pass  # not listening yet
                await trio.sleep(0.05)
    pytest.fail(f"the image did not serve:\n{await engine.logs(container)}", pytrace=False)


# ---- serving


async def _sdk_send(base_url: str, text: str) -> tuple[str, str, list[str]]:
    """The official a2a-sdk client: the card, then one SendMessage; the card's name, the
    task's state and its artifact's texts."""
    async with httpx.AsyncClient(timeout=30) as http:
        card = await A2ACardResolver(http, base_url).get_agent_card()
        client = ClientFactory(ClientConfig(streaming=False, httpx_client=http)).create(card)
        message = Message(
            role=Role.ROLE_USER, message_id=str(uuid.uuid4()), parts=[Part(text=text)]
        )
        [event] = [e async for e in client.send_message(SendMessageRequest(message=message))]
        await client.close()
    task = event.task
    texts = [part.text for artifact in task.artifacts for part in artifact.parts]
    return card.name, TaskState.Name(task.status.state), texts


async def test_the_sdk_reads_the_card_and_completes_a_send(running: Running) -> None:
    _figure("run to a served card", f"{running.seconds_to_card:.1f} s")
    # The SDK runs on asyncio: in a thread with its own loop, as in another process.
    name, state, texts = await trio.to_thread.run_sync(
        partial(asyncio.run, _sdk_send(running.url, "answer:12 pallets of flour in stock"))
    )
    assert name == configmap_environment()["ADAPTER_AGENT_NAME"]
    assert (state, texts) == ("TASK_STATE_COMPLETED", ["12 pallets of flour in stock"]), (
        await running.output()
    )
    # Over TLS to the host, verified with the CA bundle mounted where the pod has it.
    [call] = running.stub.received
    assert call.json["skillId"] == configmap_environment()["ADAPTER_SKILL_ID"]


async def test_it_runs_as_the_images_numeric_user_read_only_with_no_capability(
    running: Running,
) -> None:
    # The adapter is PID 1 (ENTRYPOINT's exec form): its own view of itself.
    status = await running.engine.run(
        "exec", running.container, "python", "-c", "print(open('/proc/1/status').read())"
    )
    fields = dict(line.split(":", 1) for line in status.splitlines() if ":" in line)
    user = [i.arguments for i in final_stage() if i.keyword == "USER"][-1]
    uid, gid = user.split(":")
    assert fields["Uid"].split() == [uid] * 4 and fields["Gid"].split() == [gid] * 4, fields
    assert int(fields["CapEff"], 16) == int(fields["CapPrm"], 16) == 0, fields
    assert "n8n-a2a" in fields["Name"] or "python" in fields["Name"], fields
    refused = await trio.run_process(
        [running.engine.name, "exec", running.container, "python", "-c",
         "open('/opt/n8n-a2a/written', 'w')"],
        capture_stdout=True, capture_stderr=True, check=False,
    )  # fmt: skip
    assert refused.returncode != 0 and b"Read-only file system" in refused.stderr, refused


async def test_the_healthcheck_passes_while_it_serves(running: Running) -> None:
    assert await running.engine.healthcheck(running.container) == 0, await running.output()


async def test_sigterm_drains_the_call_under_way_and_exits_zero_within_the_grace(
    running: Running,
) -> None:
    async def stop() -> int:
        await running.engine.run("kill", "--signal", "TERM", running.container)
        return await running.engine.wait(running.container)

    outcome = await stopped_during_a_send(running.url, running.stub, stop, GRACE_SECONDS)
    assert outcome == (0, "TASK_STATE_COMPLETED"), await running.output()


async def test_the_docs_env_file_checks_and_names_the_agent_plainly(
    engine: Engine, image: str
) -> None:
    """docs/container.md's recipe as pasted: `--env-file container/adapter.env`, then
    `--check`: the card, the agent's name without quotes."""
    printed = await engine.run(
        "run", "--rm", *HOST_OPTIONS, "--env-file", str(ENV_FILE), image, "--check"
    )
    card = json.loads(printed)
    assert (card["name"], card["url"]) == ("Supply agent", "http://127.0.0.1:8080/")


async def test_a_missing_variable_exits_2_with_its_one_line(engine: Engine, image: str) -> None:
    variables = {**configmap_environment(), "ADAPTER_PUBLIC_URL": "http://127.0.0.1:9/"}
    del variables["ADAPTER_WEBHOOK_URL"]
    del variables["ADAPTER_CA_BUNDLE"]  # not mounted here
    container = await engine.start(image, variables, *LOCKED_DOWN)
    try:
        with trio.fail_after(STARTUP_SECONDS):
            code = await engine.wait(container)
        output = await engine.logs(container)
    finally:
        await engine.remove(container)
    assert (code, output.splitlines()) == (
        2,
        ["n8n-a2a: configuration error: ADAPTER_WEBHOOK_URL: is required and must not be empty"],
    )


# ---- both extras are in the image


async def test_the_shared_store_keeps_the_task_in_postgresql(
    launch: Launch, postgres: PostgresServer
) -> None:
    database = postgres.create_database()
    # The schema is the adapter's to make: from inside the image, with its psycopg.
    running = await launch(ADAPTER_STORE_URL=database)
    # The card is served before the store is ready (its schema made, its pool open): a send
    # meanwhile is -32000 "not ready", as Kubernetes' readiness probe keeps traffic away.
    async with httpx.AsyncClient() as client:
        with trio.fail_after(STARTUP_SECONDS):
            for _ in itertools.count():
                ready = await client.get(f"http://127.0.0.1:{running.port}/readyz")
                if not ready.is_error:
                    break
                await trio.sleep(0.1)
    assert ready.status_code == 200, ready.text
    answer = await rpc(running.url, send_v1("answer:kept"), V1)
    assert "result" in answer, answer
    task = answer["result"]["task"]
    assert task["status"]["state"] == "TASK_STATE_COMPLETED", answer
    with psycopg.connect(database) as connection:
        found = connection.execute("SELECT state FROM a2a_tasks WHERE id = %s", (task["id"],))
        assert found.fetchone() is not None, "the task is not in PostgreSQL"


async def test_tokens_are_verified_against_a_local_issuer(
    launch: Launch, nursery: trio.Nursery
) -> None:
    issuer = await start_issuer(nursery)
    running = await launch(
        ADAPTER_OIDC_ISSUER=issuer.issuer,
        ADAPTER_OIDC_AUDIENCE=AUDIENCE,
        ADAPTER_OIDC_ALLOW_HTTP="true",
    )
    async with httpx.AsyncClient() as client:
        refused = await client.post(running.url, json=send_v1("answer:no"), headers=V1)
    assert refused.status_code == 401, refused.text
    # RS256: PyJWT with cryptography, inside the image, fetching the issuer's keys.
    signed = {**V1, "Authorization": f"Bearer {issuer.mint()}"}
    answer = await rpc(running.url, send_v1("answer:signed in"), signed)
    assert answer["result"]["task"]["status"]["state"] == "TASK_STATE_COMPLETED", answer
    assert issuer.key_fetches >= 1


# ---- what is installed, and the figures


async def test_pip_check_from_outside_finds_the_environment_consistent(
    engine: Engine, image: str
) -> None:
    """The image has no pip: this host's pip, mounted read-only, checks the image's venv."""
    outside = Path(pip.__file__).parent
    run = ("run", "--rm", *HOST_OPTIONS, *LOCKED_DOWN, "--entrypoint", "python")
    checked = await engine.run(
        *run,
        f"--volume={outside}:/opt/pip-from-outside/pip:ro",
        "-e", "PYTHONPATH=/opt/pip-from-outside",
        "-e", "PIP_DISABLE_PIP_VERSION_CHECK=1",
        image, "-m", "pip", "check",
    )  # fmt: skip
    assert checked.strip() == "No broken requirements found.", checked
    probe = (
        "import importlib.util as u, shutil, pathlib as p; "
        "print(u.find_spec('pip'), [c for c in ('gcc', 'cc', 'c++', 'make') if shutil.which(c)], "
        "sorted(x.name for x in p.Path('/var/lib/apt/lists').glob('*') if x.name != 'lock'), "
        "list(p.Path('/var/cache/apt/archives').glob('*.deb')), "
        "p.Path('/run/secrets/ca').exists())"
    )
    found = await engine.run(*run, image, "-c", probe)
    assert found.strip() == "None [] [] [] False", "pip, a compiler, apt's caches or the CA"
    # The build's CA was a secret: no layer and no variable keeps it.
    facts = await engine.inspect("--type=image", image)
    assert not [v for v in facts["Config"]["Env"] if v.startswith(("PIP_", "SSL_", "REQUESTS_"))]


async def test_the_figures(engine: Engine, image: str, running: Running) -> None:
    facts = await engine.inspect("--type=image", image)
    size, layers = facts["Size"], len(facts["RootFS"]["Layers"])
    await trio.sleep(3)  # idle: started, served one card
    status = await engine.run(
        "exec", running.container, "python", "-c", "print(open('/proc/1/status').read())"
    )
    [rss] = [line.split()[1] for line in status.splitlines() if line.startswith("VmRSS:")]
    _figure("size", f"{size / 1e6:.0f} MB")
    _figure("layers", str(layers))
    _figure("idle RSS inside", f"{int(rss) / 1024:.0f} MiB")
    # Loose bounds: what would mean that something big slipped in.
    assert size < 250e6 and layers <= 6 and int(rss) < 128 * 1024, (size, layers, rss)
