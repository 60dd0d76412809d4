"""container/Containerfile and .dockerignore, read without a container engine: hadolint,
and the properties the image promises, each of which fails here if it is dropped."""

from __future__ import annotations

import re
import subprocess
import tomllib
from importlib import metadata

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

from n8n_a2a.config import doubts, load_settings
from tests.container import files, tools
from tests.container.files import (
    CONTAINERFILE,
    DOCKERIGNORE,
    REQUIREMENTS,
    ROOT,
    exec_form,
    final_stage,
    healthcheck,
    instructions,
    only,
)

PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())

# A name that says it holds a secret; none may be set by the image.
SECRET_NAME = re.compile(r"SECRET|TOKEN|PASSW|CREDENTIAL|API_?KEY|PRIVATE|AUTH", re.IGNORECASE)


def test_hadolint_finds_nothing() -> None:
    done = subprocess.run(
        [*tools.hadolint(), "--no-color", "--failure-threshold", "style", str(CONTAINERFILE)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert (done.returncode, done.stdout + done.stderr) == (0, "")


def test_the_image_is_built_in_stages_on_debians_bookworm_and_its_python3() -> None:
    every = instructions()
    [base] = [i.arguments for i in every if i.keyword == "ARG" and i.stage == -1]
    # Debian's own image by default; container/build passes the copy it made with
    # mmdebstrap when no registry answers. Bookworm's python3 is the 3.11 of the pins.
    assert base == "BASE=docker.io/library/debian:bookworm-slim", base
    froms = [i.arguments.split() for i in every if i.keyword == "FROM"]
    assert froms[0] == ["${BASE}", "AS", "python"], froms
    # Every later stage grows from that one: one Python, Debian's, under all of them.
    assert [f[0] for f in froms[1:]] == ["python"] * (len(froms) - 1), froms
    assert len(froms) >= 3, "the wheel is built in a stage of its own"
    installs = [i.arguments for i in every if i.stage == 0 and "apt-get install" in i.arguments]
    assert len(installs) == 1 and " python3 " in f"{installs[0]} ", installs
    # The final stage takes only what the builder made: no source, no build tools.
    copies = [i.arguments for i in final_stage() if i.keyword in ("COPY", "ADD")]
    assert copies and all(c.startswith("--from=builder ") for c in copies), copies


def test_no_package_lists_stay_in_the_python_stage() -> None:
    [install] = [i.arguments for i in instructions() if i.stage == 0 and i.keyword == "RUN"]
    assert "--no-install-recommends" in install
    assert "rm -rf /var/lib/apt/lists/*" in install, "apt's lists would ship in every image"


def test_it_runs_as_a_fixed_non_root_user() -> None:
    users = [i.arguments for i in final_stage() if i.keyword == "USER"]
    assert users, "the image must not run as root"
    # Numeric, so Kubernetes' runAsNonRoot can check it without reading /etc/passwd.
    uid, _, gid = users[-1].partition(":")
    assert uid.isdigit() and int(uid) > 0, users[-1]
    assert gid.isdigit() and int(gid) > 0, users[-1]


def test_the_stop_signal_is_the_one_the_adapter_drains_on() -> None:
    assert only("STOPSIGNAL", final_stage()).arguments == "SIGTERM"


def test_the_healthcheck_asks_healthz_on_adapter_port_with_the_stdlib() -> None:
    options, command = healthcheck(final_stage())
    assert {"interval", "timeout", "retries"} <= options.keys(), options
    assert command[:2] == ["python", "-c"], "the image has no curl: the stdlib does the request"
    assert "/healthz" in command[2] and "ADAPTER_PORT" in command[2]


def test_the_entrypoint_is_the_console_script_and_takes_arguments() -> None:
    stage = final_stage()
    entrypoint = exec_form(only("ENTRYPOINT", stage).arguments)
    assert entrypoint == ["n8n-a2a"]
    assert entrypoint[0] in PYPROJECT["project"]["scripts"]
    # Without a CMD, `docker run IMAGE --check` passes --check to n8n-a2a.
    assert not [i for i in stage if i.keyword == "CMD"]


def test_no_setting_and_no_secret_is_baked_in() -> None:
    every = instructions()
    names = [
        word.split("=", 1)[0]
        for i in every
        if i.keyword in ("ENV", "ARG")
        for word in i.arguments.split()
    ]
    assert not [n for n in names if SECRET_NAME.search(n)], names
    # Configured only by the environment at run time: the image sets no ADAPTER_*
    # beyond the bind address and port.
    adapter = {n for n in names if n.startswith("ADAPTER_")}
    assert adapter <= {"ADAPTER_HOST", "ADAPTER_PORT"}, adapter
    sources = [w for i in every if i.keyword in ("COPY", "ADD") for w in i.arguments.split()[:-1]]
    assert not [s for s in sources if re.search(r"\.env|\.pem|\.key|secret", s)], sources


def _pins() -> dict[str, str]:
    pins: dict[str, str] = {}
    for line in REQUIREMENTS.read_text().splitlines():
        if line.strip() and not line.startswith("#"):
            name, equals, version = line.partition("==")
            assert equals and version.strip(), f"not an exact pin: {line!r}"
            pins[canonicalize_name(name)] = version.strip()
    return pins


def test_the_runtime_pins_satisfy_pyproject_and_leave_out_the_test_extra() -> None:
    pins = _pins()
    for dependency in map(Requirement, PYPROJECT["project"]["dependencies"]):
        name = canonicalize_name(dependency.name)
        assert name in pins, f"{dependency.name} is a dependency but not in {REQUIREMENTS.name}"
        assert dependency.specifier.contains(pins[name]), f"{name}=={pins[name]} vs {dependency}"
    extras = PYPROJECT["project"].get("optional-dependencies", {})
    # The runtime extras are in the image: ADAPTER_STORE_URL, ADAPTER_OIDC_ISSUER and an
    # OTEL_EXPORTER_OTLP_ENDPOINT need no other image.
    for dependency in map(Requirement, extras["postgres"] + extras["oidc"] + extras["otel"]):
        name = canonicalize_name(dependency.name)
        assert name in pins and dependency.specifier.contains(pins[name]), dependency
    shipped = _closure(pins)
    for tool in map(Requirement, extras["test"]):
        name = canonicalize_name(tool.name)
        assert name in shipped or name not in pins, f"{tool.name} is no runtime dependency"
    assert "[test]" not in CONTAINERFILE.read_text()


def test_the_runtime_pins_hold_the_whole_closure() -> None:
    """Walk the installed dependency graph from n8n-a2a: every requirement is pinned.

    Only distributions installed at their pinned version are walked: another version's
    requirements say nothing about the pinned one (the image build's `pip check` is the
    guard there), and an upstream release must not turn this test red.
    """
    _closure(_pins())


def _closure(pins: dict[str, str]) -> set[str]:
    """The distributions n8n-a2a with its runtime extras needs, each found among the pins."""
    runtime = frozenset({"postgres", "oidc", "otel"})
    pending: list[tuple[str, frozenset[str]]] = [("n8n-a2a", runtime)]
    walked: set[tuple[str, frozenset[str]]] = set()
    while pending:
        name, extras = pending.pop()
        if (name, extras) in walked:
            continue
        walked.add((name, extras))
        try:
            distribution = metadata.distribution(name)
        except metadata.PackageNotFoundError:
            continue  # required only by a version that is not the pinned one
        if name != "n8n-a2a" and distribution.version != pins[name]:
            continue
        for requirement in map(Requirement, distribution.requires or []):
            wanted = requirement.marker is None or any(
                requirement.marker.evaluate({"extra": extra}) for extra in extras | {""}
            )
            if wanted:
                needed = canonicalize_name(requirement.name)
                assert needed in pins, f"{name} needs {requirement}, not in {REQUIREMENTS.name}"
                pending.append((needed, frozenset(requirement.extras)))
    return {name for name, _ in walked}


def test_the_dockerignore_admits_exactly_what_the_build_copies() -> None:
    rules = [
        line.strip()
        for line in DOCKERIGNORE.read_text().splitlines()
        if line.strip() and not line.startswith("#")
    ]
    assert rules[0] == "*", "an allow-list: everything else (.git, .venv, .env) stays out"
    allowed = {rule[1:].rstrip("/") for rule in rules if rule.startswith("!")}
    copied = {
        source.removeprefix("./").rstrip("/")
        for i in instructions()
        if i.keyword in ("COPY", "ADD") and "--from=" not in i.arguments
        for source in i.arguments.split()[:-1]
    }
    assert allowed == copied


def test_the_env_file_loads_as_an_engine_reads_it_and_names_the_agent_plainly() -> None:
    """docs/container.md's `--env-file container/adapter.env`: what docker and podman pass
    is what the adapter reads, quotes and all, so the file has none."""
    variables = files.env_file(files.ENV_FILE.read_text())
    settings = load_settings(variables)
    assert settings.agent_name == "Supply agent"
    assert not [value for value in variables.values() if value[:1] in "\"'"]
    assert doubts(settings, variables) == ()
    # The README's export block, pasted as an env file, would keep its quotes: the test
    # reads the file as the engines do.
    assert files.env_file('ADAPTER_AGENT_NAME="Supply agent"') == {
        "ADAPTER_AGENT_NAME": '"Supply agent"'
    }


def test_the_build_compiles_the_code_a_start_generates() -> None:
    """Beside the bytecode pip compiled: a start reads it instead (n8n_a2a/prebuilt/)."""
    runs = [i.arguments for i in instructions() if i.keyword == "RUN"]
    # -P: the installed package's, not the source tree's in the working directory.
    built = [r for r in runs if "/opt/n8n-a2a/bin/python -P -m n8n_a2a.prebuilt" in r]
    assert built and "install --no-deps /dist/n8n_a2a-" in built[0], runs
