"""`python -m n8n_a2a.prebuilt`: it compiles all the code a start generates, so that a
start compiles none of it anew."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

BUILD = """
from n8n_a2a.prebuilt import __main__ as build, generated
generated.FILE = {path!r}
build.main()
"""

#: The command's imports and its store's, as a start makes them, with the file built.
START = """
from n8n_a2a.prebuilt import generated
made = {{}}
assert generated.install(generated.read({path!r}), made)
import n8n_a2a.__main__
import n8n_a2a.store.memory.backend
print(len(made))
"""


def python(code: str, seed: int) -> str:
    # attrs writes a number the hash seed makes into a frozen class's __hash__: the build
    # and the start each their own (whose numbers have the widths the file holds).
    environment = {**os.environ, "PYTHONHASHSEED": str(seed)}
    done = subprocess.run(
        [sys.executable, "-c", code], env=environment, capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_a_start_compiles_none_of_its_generated_code_anew(tmp_path: Path) -> None:
    path = str(tmp_path / "generated.bin")
    said = python(BUILD.format(path=path), seed=1)
    assert said.startswith("n8n-a2a: ") and path in said, said
    assert int(said.split()[1]) > 600, said  # n8n_a2a's, hypercorn's, h11's, trio's
    assert python(START.format(path=path), seed=2).split() == ["0"]
