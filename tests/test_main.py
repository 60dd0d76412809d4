"""The `n8n-a2a` command's exits: what a person starting it sees when it cannot start."""

from __future__ import annotations

import socket
import subprocess
import sys

from tests.test_config import GOOD


def test_an_address_in_use_is_one_line_and_exit_code_3() -> None:
    with socket.socket() as holder:
        holder.bind(("127.0.0.1", 0))
        holder.listen()
        port = holder.getsockname()[1]
        done = subprocess.run(
            [sys.executable, "-m", "n8n_a2a"],
            env={
                "PATH": "/usr/bin:/bin",
                **GOOD,
                "ADAPTER_HOST": "127.0.0.1",
                "ADAPTER_PORT": str(port),
                "ADAPTER_LOG_FORMAT": "text",
            },
            capture_output=True,
            text=True,
            timeout=60,
        )
    assert done.returncode == 3
    assert done.stderr.strip().splitlines() == [
        f"n8n-a2a: cannot listen on 127.0.0.1:{port} (ADAPTER_HOST, ADAPTER_PORT): "
        "address already in use"
    ]


def test_an_address_not_on_this_machine_is_one_line_and_exit_code_3() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "n8n_a2a"],
        # TEST-NET-1 (RFC 5737): assigned to no interface here.
        env={"PATH": "/usr/bin:/bin", **GOOD, "ADAPTER_HOST": "192.0.2.1", "ADAPTER_PORT": "0"},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 3
    [line] = done.stderr.strip().splitlines()
    assert line.startswith("n8n-a2a: cannot listen on 192.0.2.1:0 (ADAPTER_HOST, ADAPTER_PORT): ")
    assert "Traceback" not in done.stderr
