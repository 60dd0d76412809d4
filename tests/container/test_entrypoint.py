"""The image's entrypoint, run on this host as the container would run it.

test_image.py runs the image itself where an engine can be had; this runs everywhere,
and checks the Containerfile's own ENTRYPOINT (and CMD), HEALTHCHECK and STOPSIGNAL as
a real process with the image's ENV and the Kubernetes example's ConfigMap. Only what a
cluster provides is replaced: the bind address and port, the public URL (the Service
name resolves nowhere here), the webhook (a TLS stub on 127.0.0.1) and the CA file
(mounted in the pod; here the stub's CA).
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

import httpx
import pytest
import trio

from tests.container.files import (
    adapter_container,
    configmap_environment,
    env_variables,
    exec_form,
    final_stage,
    healthcheck,
    kubernetes_object,
    seconds,
)
from tests.container.host import moved, start_tls_stub, stopped_during_a_send
from tests.support.adapter import free_port
from tests.support.jsonrpc import V1, rpc, send_v1
from tests.support.stub_webhook import StubWebhook

STARTUP_SECONDS = 20.0


def image_command() -> list[str]:
    """ENTRYPOINT followed by CMD, both exec form: what the engine runs."""
    stage = final_stage()
    command: list[str] = []
    for keyword in ("ENTRYPOINT", "CMD"):
        found = [i for i in stage if i.keyword == keyword]
        if found:
            command += exec_form(found[-1].arguments)
    assert command, "the image names no command"
    return command


def image_environment() -> dict[str, str]:
    """The image's ENV, with its venv's bin on PATH standing for this venv's bin."""
    stage = final_stage()
    [venv] = [i.arguments.split()[-1] for i in stage if i.arguments.startswith("--from=builder")]
    variables = env_variables(stage)
    path = variables.get("PATH", "$PATH").replace(f"{venv}/bin", str(Path(sys.executable).parent))
    variables["PATH"] = path.replace("${PATH}", "$PATH").replace("$PATH", os.environ["PATH"])
    return variables


def stop_signal() -> signal.Signals:
    [stop] = [i.arguments for i in final_stage() if i.keyword == "STOPSIGNAL"]
    return signal.Signals[stop]


def seconds_the_kubelet_gives_after_the_stop_signal() -> float:
    pod = kubernetes_object("Deployment")["spec"]["template"]["spec"]
    pause = float(adapter_container()["lifecycle"]["preStop"]["exec"]["command"][1])
    total: float = pod["terminationGracePeriodSeconds"]
    return total - pause


@dataclass
class Served:
    """The entrypoint running on the host, and what it was given."""

    process: trio.Process
    port: int
    url: str
    environment: dict[str, str]
    stub: StubWebhook
    log: Path

    def output(self) -> str:
        return self.log.read_text(errors="replace")[-4000:]


@pytest.fixture
async def served(nursery: trio.Nursery, tmp_path: Path) -> AsyncIterator[Served]:
    stub, bundle = await start_tls_stub(nursery, tmp_path)

    configmap = configmap_environment()
    port = free_port()
    environment = {
        **image_environment(),
        **configmap,
        "ADAPTER_HOST": "127.0.0.1",
        "ADAPTER_PORT": str(port),
        "ADAPTER_PUBLIC_URL": moved(configmap["ADAPTER_PUBLIC_URL"], "http", f"127.0.0.1:{port}"),
        "ADAPTER_WEBHOOK_URL": moved(
            configmap["ADAPTER_WEBHOOK_URL"], "https", urlsplit(stub.base_url).netloc
        ),
        "ADAPTER_CA_BUNDLE": str(bundle),
    }
    command = image_command()
    # The engine looks the entrypoint up on the image's PATH: here, this venv's bin.
    found = shutil.which(command[0], path=environment["PATH"])
    assert found and Path(found).parent == Path(sys.executable).parent, found

    log = tmp_path / "adapter.log"
    with log.open("wb") as output:
        # A clean environment, as in a container: nothing of the test run's leaks in.
        process = await trio.lowlevel.open_process(
            command, env=environment, stdout=output, stderr=subprocess.STDOUT
        )
    served = Served(process, port, environment["ADAPTER_PUBLIC_URL"], environment, stub, log)
    try:
        await _wait_until_serving(served)
        yield served
    finally:
        if process.returncode is None:
            process.kill()
        with trio.move_on_after(10):
            await process.wait()


async def _wait_until_serving(served: Served) -> None:
    card = f"http://127.0.0.1:{served.port}/.well-known/agent-card.json"
    with trio.move_on_after(STARTUP_SECONDS) as waited:
        async with httpx.AsyncClient() as client:
            while served.process.poll() is None:
                try:
                    if (await client.get(card)).status_code == 200:
                        return
                except httpx.TransportError:
                    pass  # not listening yet
                await trio.sleep(0.05)
    reason = f"timed out after {STARTUP_SECONDS:g} s" if waited.cancelled_caught else "exited"
    pytest.fail(f"the entrypoint did not serve ({reason}):\n{served.output()}", pytrace=False)


async def _run_healthcheck(served: Served) -> int:
    options, command = healthcheck(final_stage())
    # The engine runs it inside the container: the same environment, its own timeout.
    with trio.fail_after(seconds(options.get("timeout", "30s"))):
        done = await trio.run_process(
            command, env=served.environment, check=False, capture_stdout=True, capture_stderr=True
        )
    return done.returncode


async def test_the_entrypoint_serves_the_card_and_answers(served: Served) -> None:
    configmap = configmap_environment()
    async with httpx.AsyncClient() as client:
        reply = await client.get(f"{served.url}.well-known/agent-card.json", headers=V1)
    assert reply.status_code == 200, served.output()
    card = reply.json()
    assert card["name"] == configmap["ADAPTER_AGENT_NAME"]
    assert card["supportedInterfaces"][0]["url"] == served.url
    [skill] = card["skills"]
    assert skill["id"] == configmap["ADAPTER_SKILL_ID"]
    assert skill["examples"] == configmap["ADAPTER_SKILL_EXAMPLES"].splitlines()

    answer = await rpc(served.url, send_v1("answer:12 pallets of flour in stock"), V1)
    task = answer["result"]["task"]
    assert task["status"]["state"] == "TASK_STATE_COMPLETED", (task, served.output())
    assert task["artifacts"][0]["parts"] == [{"text": "12 pallets of flour in stock"}]
    # Over TLS, verified with ADAPTER_CA_BUNDLE, and with the ConfigMap's skill.
    [call] = served.stub.received
    assert call.json["skillId"] == configmap["ADAPTER_SKILL_ID"]


async def test_the_healthcheck_and_the_probes_pass(served: Served) -> None:
    assert await _run_healthcheck(served) == 0, served.output()
    container = adapter_container()
    async with httpx.AsyncClient() as client:
        for probe in ("readinessProbe", "livenessProbe"):
            path = container[probe]["httpGet"]["path"]
            reply = await client.get(f"http://127.0.0.1:{served.port}{path}")
            assert reply.status_code == 200, (probe, reply.text)


async def test_the_stop_signal_drains_the_call_under_way_then_exits_zero(served: Served) -> None:
    async def stop() -> int:
        served.process.send_signal(stop_signal())
        return await served.process.wait()

    # What the kubelet allows between the signal and SIGKILL.
    seconds = seconds_the_kubelet_gives_after_the_stop_signal()
    outcome = await stopped_during_a_send(served.url, served.stub, stop, seconds)
    assert outcome == (0, "TASK_STATE_COMPLETED"), served.output()
    # And the healthcheck notices that nothing serves any more.
    assert await _run_healthcheck(served) != 0
