"""One large file each way, on a fresh server: the most memory it took over idle.

For each server target, a fresh server per figure (a process's high-water mark is its
whole life's): `upload`, a blocking v1.0 SendMessage carrying one file of BIG_BYTES
(20 MiB, 26.7 MiB of base64), which the stub answers with a short text; `reply`, a short
blocking send that the stub answers with one file of BIG_BYTES (the message asks it with
REPLY_MARKER), which the answer must carry whole by its digest. Each figure is the
server's peak RSS (VmHWM) once the send is answered, less its RSS at rest after a small
send first (None: the send did not come back whole).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from pathlib import Path

from figures import Sample
from file_trip import files_in, post, send_body
from procs import rss_kib, settle
from settings import Settings
from stub_webhook import REPLY_MARKER, big_file
from targets import Target, serving
from wire import A2A_HEADERS, send_message_body

BIG_BYTES = 20 * 1024 * 1024


def peaks(
    target: Target,
    settings: Settings,
    webhook_url: str,
    logs: Path,
    say: Callable[[str], None],
    store_url: str | None = None,
) -> Sample:
    """The upload's and the reply's peaks over idle, in MiB, each on a fresh server (with
    `store_url`, on the shared store)."""
    content = big_file(BIG_BYTES)
    digest = hashlib.sha256(content).hexdigest()

    def uploaded(answer: str) -> bool:
        return "TASK_STATE_COMPLETED" in answer

    def replied(answer: str) -> bool:
        return files_in(json.loads(answer)) == [digest]

    asks: dict[str, tuple[bytes, Callable[[str], bool]]] = {
        "upload_peak_mib": (send_body(content, text="hello"), uploaded),
        "reply_peak_mib": (send_message_body(f"{REPLY_MARKER.decode()}{BIG_BYTES}"), replied),
    }
    sample: Sample = {}
    for figure, (body, whole) in asks.items():
        with serving(target, settings, webhook_url, logs, store_url) as (process, port, _):
            post(port, "/", send_message_body("hello"), A2A_HEADERS)
            settle(process.pid, 5.0)
            idle = rss_kib(process.pid)
            answer = post(port, "/", body, A2A_HEADERS).decode(errors="replace")
            peak = rss_kib(process.pid, "VmHWM")
        came_whole = whole(answer)
        if not came_whole:
            say(f"      no {figure}: the answer was {answer[:200]!r}")
        sample[figure] = (peak - idle) / 1024 if came_whole else None
    return sample
