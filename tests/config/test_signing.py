"""ADAPTER_CARD_SIGNING_KEY and its companions: keys made with the OpenSSL commands of
docs/identity.md, and every kind of bad file, each one line naming the variable and
never what the file holds."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from n8n_a2a.config import ConfigError, load_settings
from tests.support.card_keys import private_pem, public_pem

GOOD = {
    "ADAPTER_AGENT_NAME": "Supply agent",
    "ADAPTER_AGENT_DESCRIPTION": "Checks availability of supplies.",
    "ADAPTER_SKILL_ID": "check_availability",
    "ADAPTER_SKILL_NAME": "Check availability",
    "ADAPTER_SKILL_DESCRIPTION": "Says whether an item is in stock.",
    "ADAPTER_WEBHOOK_URL": "http://n8n:5678/webhook/supply",
    "ADAPTER_PUBLIC_URL": "https://agents.example/supply",
}
KID = {"ADAPTER_CARD_SIGNING_KID": "supply-2026-12"}

# docs/identity.md's commands, key kind -> (openssl arguments, the algorithm).
OPENSSL_KEYS = {
    "P-256": (["-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-256"], "ES256"),
    "Ed25519": (["-algorithm", "ed25519"], "EdDSA"),
    "RSA 3072": (["-algorithm", "RSA", "-pkeyopt", "rsa_keygen_bits:3072"], "RS256"),
}
needs_openssl = pytest.mark.skipif(shutil.which("openssl") is None, reason="no openssl here")


def openssl(*arguments: str | Path) -> None:
    subprocess.run(["openssl", *map(str, arguments)], check=True, capture_output=True)


def genpkey(path: Path, *arguments: str) -> Path:
    openssl("genpkey", *arguments, "-out", path)
    return path


def refusal(environ: dict[str, str]) -> str:
    """The one problem load_settings has with `environ`, as the start prints it."""
    with pytest.raises(ConfigError) as raised:
        load_settings({**GOOD, **environ})
    [problem] = raised.value.problems
    return str(problem)


@pytest.mark.slow  # openssl runs: a process
@needs_openssl
@pytest.mark.parametrize(("arguments", "algorithm"), OPENSSL_KEYS.values(), ids=OPENSSL_KEYS)
def test_keys_made_as_the_docs_say_sign_with_their_algorithm(
    tmp_path: Path, arguments: list[str], algorithm: str
) -> None:
    key = genpkey(tmp_path / "card-key.pem", *arguments)
    settings = load_settings({**GOOD, **KID, "ADAPTER_CARD_SIGNING_KEY": str(key)})
    signer = settings.card_signer
    assert signer is not None
    assert (signer.key.algorithm, signer.kid, signer.jku) == (algorithm, "supply-2026-12", None)
    assert "PRIVATE" not in repr(settings) and "key=" not in repr(signer.key)


def test_no_key_no_signer() -> None:
    assert load_settings(GOOD).card_signer is None


def test_a_jku_is_put_in_the_header(tmp_path: Path) -> None:
    key = tmp_path / "key.pem"
    key.write_bytes(private_pem("EdDSA"))
    jku = "https://agents.example/.well-known/jwks.json"
    settings = load_settings(
        {**GOOD, **KID, "ADAPTER_CARD_SIGNING_KEY": str(key), "ADAPTER_CARD_SIGNING_JKU": jku}
    )
    assert settings.card_signer is not None and settings.card_signer.protected_header["jku"] == jku


def bad_files(tmp_path: Path) -> dict[str, tuple[Path, str]]:
    """Bad key files -> (the file, what the refusal says after the variable's name)."""
    text = tmp_path / "text.pem"
    text.write_text("not a key at all\n")
    public = tmp_path / "public.pem"
    public.write_bytes(public_pem("ES256"))
    garbled = tmp_path / "garbled.pem"
    garbled.write_text("-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n")
    huge = tmp_path / "huge.pem"
    huge.write_bytes(b"-----BEGIN PRIVATE KEY-----\n" + b"A" * 70_000)
    return {
        "missing": (tmp_path / "nowhere.pem", "no such file"),
        "a directory": (tmp_path, "cannot be read"),
        "not PEM": (text, "is not a PEM file"),
        "a public key": (public, "holds no private key"),
        "garbled PEM": (garbled, "is not a PEM private key the adapter can read"),
        "too big": (huge, "is over 64 KiB"),
    }


@pytest.mark.parametrize(
    "kind", ["missing", "a directory", "not PEM", "a public key", "garbled PEM", "too big"]
)
def test_a_bad_file_is_one_line_naming_the_variable_and_the_path(tmp_path: Path, kind: str) -> None:
    path, said = bad_files(tmp_path)[kind]
    line = refusal({**KID, "ADAPTER_CARD_SIGNING_KEY": str(path)})
    assert line.startswith(f"ADAPTER_CARD_SIGNING_KEY: {said}"), line
    assert line.endswith(str(path)) or f"{path} (" in line
    assert "\n" not in line


@pytest.mark.slow  # openssl runs: a process
@needs_openssl
@pytest.mark.parametrize(
    ("arguments", "said"),
    [
        (["-algorithm", "RSA", "-pkeyopt", "rsa_keygen_bits:1024"], "is an RSA key of 1024 bits"),
        (["-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-384"], "is an EC key on secp384r1"),
        (["-algorithm", "ed448"], "holds a key of a kind the card is not signed with (Ed448"),
        (["-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-256", "-aes256", "-pass",
          "pass:hunter2"], "is an encrypted private key"),
    ],
    ids=["RSA 1024", "P-384", "Ed448", "encrypted"],
)  # fmt: skip
def test_a_key_of_another_kind_is_refused_without_its_material(
    tmp_path: Path, arguments: list[str], said: str
) -> None:
    key = genpkey(tmp_path / "card-key.pem", *arguments)
    line = refusal({**KID, "ADAPTER_CARD_SIGNING_KEY": str(key)})
    assert line.startswith(f"ADAPTER_CARD_SIGNING_KEY: {said}"), line
    assert str(key) in line
    material = [row for row in key.read_text().splitlines() if row and not row.startswith("---")]
    assert not [row for row in material if row in line or row[:16] in line]


@pytest.mark.slow  # openssl runs: a process
@needs_openssl
def test_a_dsa_key_is_an_algorithm_the_card_is_not_signed_with(tmp_path: Path) -> None:
    params = tmp_path / "dsa.params"
    openssl("genpkey", "-genparam", "-algorithm", "DSA", "-pkeyopt", "dsa_paramgen_bits:2048",
            "-out", params)  # fmt: skip
    key = genpkey(tmp_path / "dsa.pem", "-paramfile", str(params))
    line = refusal({**KID, "ADAPTER_CARD_SIGNING_KEY": str(key)})
    assert line.startswith(
        "ADAPTER_CARD_SIGNING_KEY: holds a key of a kind the card is not signed with (DSA"
    )


def test_the_key_needs_its_kid(tmp_path: Path) -> None:
    key = tmp_path / "key.pem"
    key.write_bytes(private_pem("ES256"))
    line = refusal({"ADAPTER_CARD_SIGNING_KEY": str(key)})
    assert line.startswith("ADAPTER_CARD_SIGNING_KID: is required with ADAPTER_CARD_SIGNING_KEY")


@pytest.mark.parametrize(
    ("environ", "said"),
    [
        (KID, "ADAPTER_CARD_SIGNING_KID: is only used with ADAPTER_CARD_SIGNING_KEY"),
        (
            {"ADAPTER_CARD_SIGNING_JKU": "https://agents.example/jwks.json"},
            "ADAPTER_CARD_SIGNING_JKU: is only used with ADAPTER_CARD_SIGNING_KEY",
        ),
    ],
)
def test_a_kid_or_jku_without_a_key_is_refused(environ: dict[str, str], said: str) -> None:
    assert refusal(environ) == said


@pytest.mark.parametrize(
    ("environ", "said"),
    [
        (
            {"ADAPTER_CARD_SIGNING_JKU": "http://agents.example/jwks.json"},
            "ADAPTER_CARD_SIGNING_JKU: must be an https:// URL",
        ),
        (
            {"ADAPTER_CARD_SIGNING_KID": "two words"},
            "ADAPTER_CARD_SIGNING_KID: must be at most 128 printable ASCII characters",
        ),
        (
            {"ADAPTER_CARD_SIGNING_KID": "k" * 129},
            "ADAPTER_CARD_SIGNING_KID: must be at most 128 printable ASCII characters",
        ),
    ],
)
def test_a_malformed_kid_or_jku_is_refused(
    tmp_path: Path, environ: dict[str, str], said: str
) -> None:
    key = tmp_path / "key.pem"
    key.write_bytes(private_pem("ES256"))
    assert refusal({**KID, "ADAPTER_CARD_SIGNING_KEY": str(key), **environ}).startswith(said)


def test_a_key_without_the_oidc_extra_says_to_install_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    key = tmp_path / "key.pem"
    key.write_bytes(private_pem("ES256"))
    monkeypatch.setitem(sys.modules, "jwt", None)
    assert refusal({**KID, "ADAPTER_CARD_SIGNING_KEY": str(key)}) == (
        "ADAPTER_CARD_SIGNING_KEY: signing the card needs the oidc extra: "
        "pip install 'n8n-a2a[oidc]'"
    )
    assert load_settings(GOOD).card_signer is None  # the base install needs no extra


def _material(pem: bytes) -> list[str]:
    return [row for row in pem.decode().splitlines() if row and not row.startswith("---")]


@pytest.mark.slow  # a Python process of its own
def test_check_prints_the_signed_card_and_never_the_key(tmp_path: Path) -> None:
    pem = private_pem("ES256")
    key = tmp_path / "key.pem"
    key.write_bytes(pem)
    environ: dict[str, Any] = {"PATH": "/usr/bin:/bin", **GOOD, **KID}
    checked = subprocess.run(
        [sys.executable, "-m", "n8n_a2a", "--check"],
        env=environ | {"ADAPTER_CARD_SIGNING_KEY": str(key)},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert checked.returncode == 0, checked.stderr
    assert '"signatures": [' in checked.stdout
    assert not [row for row in _material(pem) if row in checked.stdout + checked.stderr]
