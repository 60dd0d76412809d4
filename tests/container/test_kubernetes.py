"""container/kubernetes/supply-agent.yaml: valid for Kubernetes, and consistent with the
image and the adapter it runs (the public URL, the variables, the grace period, the probes)."""

from __future__ import annotations

import subprocess
from pathlib import Path, PurePosixPath
from typing import Any

import pytest
import trustme

from n8n_a2a.config import load_settings
from tests.container import tools
from tests.container.files import (
    KUBERNETES,
    adapter_container,
    configmap_environment,
    final_stage,
    kubernetes_object,
    load_yaml_documents,
)

# The design note's seven: the card's agent and skill, the webhook, the public URL and
# the CA bundle (ADAPTER_SKILL_EXAMPLES is optional but belongs with the skill).
SEVEN = {
    "ADAPTER_AGENT_NAME",
    "ADAPTER_AGENT_DESCRIPTION",
    "ADAPTER_SKILL_ID",
    "ADAPTER_SKILL_NAME",
    "ADAPTER_SKILL_DESCRIPTION",
    "ADAPTER_SKILL_EXAMPLES",
    "ADAPTER_WEBHOOK_URL",
    "ADAPTER_PUBLIC_URL",
    "ADAPTER_CA_BUNDLE",
}


def _pod_spec() -> dict[str, Any]:
    spec: dict[str, Any] = kubernetes_object("Deployment")["spec"]["template"]["spec"]
    return spec


def _container_port(name: str) -> int:
    ports = {p["name"]: p["containerPort"] for p in adapter_container()["ports"]}
    assert name in ports, f"no container port named {name!r}: {ports}"
    port: int = ports[name]
    return port


def _assert_valid(manifests: Path) -> None:
    """kubernetes-validate --strict finds nothing wrong in `manifests`."""
    command, environment = tools.kubernetes_validate()
    done = subprocess.run(
        [*command, "--strict", "--quiet", str(manifests)],
        capture_output=True,
        text=True,
        env=environment,
        timeout=300,
    )
    assert done.returncode == 0, done.stdout + done.stderr


def test_the_manifests_pass_the_kubernetes_schemas() -> None:
    _assert_valid(KUBERNETES)


KUSTOMIZATIONS = sorted(path.parent for path in KUBERNETES.parents[1].glob("*/kustomization.yaml"))


@pytest.mark.parametrize("folder", KUSTOMIZATIONS, ids=lambda folder: folder.name)
def test_every_kustomization_renders_and_passes_the_schemas(folder: Path, tmp_path: Path) -> None:
    rendered = subprocess.run(
        [*tools.kubectl(), "kustomize", str(folder)], capture_output=True, text=True, timeout=120
    )
    assert rendered.returncode == 0, rendered.stderr
    manifests = tmp_path / f"{folder.name}.yaml"
    manifests.write_text(rendered.stdout)
    _assert_valid(manifests)
    kinds = [line for line in rendered.stdout.splitlines() if line.startswith("kind: ")]
    assert sorted(kinds) == ["kind: ConfigMap", "kind: Deployment", "kind: Service"], kinds


def test_both_kustomizations_are_found() -> None:
    assert [folder.name for folder in KUSTOMIZATIONS] == ["kubernetes", "replicas"]


# docs/operating.md, "Memory": what each bounded thing can hold at most. The inputs are
# the settings the ConfigMap gives the adapter (its defaults where it says nothing).
TASK_OVERHEAD_BYTES = 2 * 1024  # a task past its two stored texts (18 KiB less 2 x 8 KiB)
# The texts the sums were made with: a task now keeps them whole, and what kept tasks
# hold is ADAPTER_MEMORY_BUDGET's to bound (its formula replaces this one).
STORED_TEXT_CHARACTERS = 8192
BYTES_PER_CHARACTER = 4  # a stored text's characters take 1 to 4 bytes each
PUSH_CONFIG_BYTES = 12 * 1024  # a push config with every field at its bound
# A send in flight holds 3.5 x ADAPTER_MAX_BODY_BYTES (the body, its decoded text, the
# webhook's body) and up to 32,768 JSON values of about 150 bytes each as Python objects.
REQUEST_BODY_COPIES = 3.5
REQUEST_VALUES_BYTES = 32_768 * 150
IDLE_BYTES = 64 * 1024 * 1024  # the process before any call (tests/container measures ~50 MiB)


def worst_case_bytes(environment: dict[str, str], tmp_path: Path) -> int:
    """The adapter's documented worst case for the settings `environment` gives."""
    bundle = tmp_path / "ca.crt"
    trustme.CA().cert_pem.write_to_path(str(bundle))
    s = load_settings({**environment, "ADAPTER_CA_BUNDLE": str(bundle)})
    task = 2 * STORED_TEXT_CHARACTERS * BYTES_PER_CHARACTER + TASK_OVERHEAD_BYTES
    tasks = s.max_tasks * (task + s.push_max_configs * PUSH_CONFIG_BYTES)
    send = REQUEST_BODY_COPIES * s.max_body_bytes + REQUEST_VALUES_BYTES
    calls = (s.max_concurrent_calls + s.max_queued_calls) * send
    return int(IDLE_BYTES + tasks + calls)


def _mebibytes(quantity: str) -> float:
    units = {"Ki": 1 / 1024, "Mi": 1, "Gi": 1024}
    assert quantity[-2:] in units, f"write memory in Ki, Mi or Gi: {quantity}"
    return float(quantity[:-2]) * units[quantity[-2:]]


def test_the_memory_limit_holds_the_adapters_worst_case(tmp_path: Path) -> None:
    limit = _mebibytes(adapter_container()["resources"]["limits"]["memory"])
    worst = worst_case_bytes(configmap_environment(), tmp_path) / 2**20
    assert worst <= limit, f"the worst case is {worst:.0f} MiB against a {limit:.0f} MiB limit"


def test_the_defaults_would_not_fit_the_limit(tmp_path: Path) -> None:
    """Why the ConfigMap sets the bounds: without them the limit is a kill waiting."""
    bounds = ("MAX_TASKS", "PUSH_MAX_CONFIGS", "MAX_CONCURRENT_CALLS", "MAX_QUEUED_CALLS")
    environment = configmap_environment()
    assert {f"ADAPTER_{bound}" for bound in bounds} <= environment.keys()
    defaults = {k: v for k, v in environment.items() if k.removeprefix("ADAPTER_") not in bounds}
    limit = _mebibytes(adapter_container()["resources"]["limits"]["memory"])
    assert worst_case_bytes(defaults, tmp_path) / 2**20 > limit


def test_the_public_url_is_the_services_dns_name() -> None:
    service = kubernetes_object("Service")
    deployment = kubernetes_object("Deployment")
    namespace = service["metadata"]["namespace"]
    assert deployment["metadata"]["namespace"] == namespace
    assert kubernetes_object("ConfigMap")["metadata"]["namespace"] == namespace
    labels = deployment["spec"]["template"]["metadata"]["labels"]
    assert service["spec"]["selector"].items() <= labels.items(), "the Service selects the pod"
    [port] = service["spec"]["ports"]
    assert _container_port(port["targetPort"]) == 8080
    dns_name = f"http://{service['metadata']['name']}.{namespace}.svc.cluster.local:{port['port']}/"
    assert dns_name == "http://supply-agent.agents.svc.cluster.local:8080/"
    assert configmap_environment()["ADAPTER_PUBLIC_URL"] == dns_name


def test_the_configmap_is_a_configuration_the_adapter_accepts(tmp_path: Path) -> None:
    environment = configmap_environment()
    assert environment.keys() >= SEVEN, SEVEN - environment.keys()
    # The CA file is the only thing here that lives outside the ConfigMap.
    bundle = tmp_path / "ca.crt"
    trustme.CA().cert_pem.write_to_path(str(bundle))
    settings = load_settings({**environment, "ADAPTER_CA_BUNDLE": str(bundle)})
    assert settings.public_url == environment["ADAPTER_PUBLIC_URL"]
    assert settings.skill_examples and settings.webhook_url.startswith("https://")


def test_the_ca_bundle_is_a_file_mounted_read_only_from_a_configmap_or_secret() -> None:
    path = PurePosixPath(configmap_environment()["ADAPTER_CA_BUNDLE"])
    mounts = {m["mountPath"]: m for m in adapter_container()["volumeMounts"]}
    mount = mounts[str(path.parent)]
    assert mount.get("readOnly") is True
    [volume] = [v for v in _pod_spec()["volumes"] if v["name"] == mount["name"]]
    source = volume.get("configMap") or volume.get("secret")
    assert source is not None, volume
    assert path.name in [item["path"] for item in source["items"]]


def test_the_kubelet_waits_longer_than_the_drain() -> None:
    grace = float(configmap_environment().get("ADAPTER_SHUTDOWN_GRACE", "30"))
    command = adapter_container()["lifecycle"]["preStop"]["exec"]["command"]
    assert command[0] == "sleep"
    # The pause before SIGTERM and the drains after it (the webhook calls', then the push
    # deliveries', each up to the grace) all count against the period.
    assert _pod_spec()["terminationGracePeriodSeconds"] > float(command[1]) + 2 * grace


def test_the_probes_ask_readyz_and_healthz_on_the_adapters_port() -> None:
    container = adapter_container()
    port = int(configmap_environment().get("ADAPTER_PORT", "8080"))
    expose = [i.arguments for i in final_stage() if i.keyword == "EXPOSE"]
    assert expose == [str(port)]
    for probe, path in (("readinessProbe", "/readyz"), ("livenessProbe", "/healthz")):
        action = container[probe]["httpGet"]
        assert action["path"] == path
        assert _container_port(action["port"]) == port


def test_the_pod_runs_locked_down_as_the_images_user() -> None:
    pod, container = _pod_spec(), adapter_container()
    user = [i.arguments for i in final_stage() if i.keyword == "USER"][-1]
    assert pod["securityContext"]["runAsNonRoot"] is True
    assert f"{pod['securityContext']['runAsUser']}:{pod['securityContext']['runAsGroup']}" == user
    assert pod["automountServiceAccountToken"] is False
    security = container["securityContext"]
    assert security["readOnlyRootFilesystem"] is True
    assert security["allowPrivilegeEscalation"] is False
    assert security["capabilities"]["drop"] == ["ALL"]
    assert {"cpu", "memory"} <= container["resources"]["requests"].keys()
    assert "memory" in container["resources"]["limits"]
    assert not container["image"].endswith(":latest") and ":" in container["image"]


def test_one_replica_because_tasks_live_in_its_memory() -> None:
    assert kubernetes_object("Deployment")["spec"]["replicas"] == 1


def test_the_replicas_variant_runs_two_on_the_shared_store_from_a_secret() -> None:
    """container/replicas/: a kustomize overlay of the example, two replicas, the store's
    URL (which holds a password) from a Secret."""
    overlay = KUBERNETES.parent.parent / "replicas"
    [base] = load_yaml_documents((KUBERNETES.parent / "kustomization.yaml").read_text())
    assert base["resources"] == [KUBERNETES.name]
    [kustomization] = load_yaml_documents((overlay / "kustomization.yaml").read_text())
    assert kustomization["resources"] == ["../kubernetes"]
    [path] = [patch["path"] for patch in kustomization["patches"]]
    [patch] = load_yaml_documents((overlay / path).read_text())
    deployment = kubernetes_object("Deployment")
    assert patch["kind"] == deployment["kind"]
    assert patch["metadata"] == {key: deployment["metadata"][key] for key in ("name", "namespace")}
    assert patch["spec"]["replicas"] == 2
    [container] = patch["spec"]["template"]["spec"]["containers"]
    assert container["name"] == adapter_container()["name"]
    [variable] = container["env"]
    assert variable["name"] == "ADAPTER_STORE_URL"
    assert variable["valueFrom"]["secretKeyRef"]["key"] == "url"
    assert "ADAPTER_STORE_URL" not in configmap_environment()


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("a: 1\nb: x y # note\n", {"a": 1, "b": "x y"}),
        ("a:\n- b: '5'\n  c: \"x\"\n- - d\n", {"a": [{"b": "5", "c": "x"}, ["d"]]}),
        ("a: |\n  one\n\n  two\nb: |-\n  three\n", {"a": "one\n\ntwo\n", "b": "three"}),
        ("k: []\nv: true\n---\n# only a comment\n", {"k": [], "v": True}),
    ],
)
def test_the_yaml_reader(text: str, expected: Any) -> None:
    assert load_yaml_documents(text) == [expected]


@pytest.mark.parametrize("text", ["a: [1, 2]\n", "a: 1\n  b: 2\n", "a: &x 1\n", "a: 1\na: 2\n"])
def test_the_yaml_reader_refuses_what_it_does_not_read(text: str) -> None:
    with pytest.raises(ValueError):
        load_yaml_documents(text)
