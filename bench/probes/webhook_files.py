"""What one file costs the webhook call, sent each way (ADAPTER_WEBHOOK_FILES).

Calls bench/stub_webhook.py (its own process, uncounted) through
n8n_a2a.webhook.WebhookClient with one file part of --mib MiB of random bytes, once as
`json` (base64 inside the JSON body) and once as `multipart` (n8n's binary data): per
way, the bytes sent and the most the call allocated beyond the file itself
(tracemalloc's peak, from building the body to the reply read), as a multiple of the
file, the median of --rounds calls. Measures whichever n8n_a2a is imported (PYTHONPATH
picks another tree).
"""

from __future__ import annotations

import argparse
import os
import statistics
import tracemalloc

import trio
from webhook_cpu import client_settings, stub_webhook

from n8n_a2a.auth.caller import Caller
from n8n_a2a.core.replies import HttpReply
from n8n_a2a.protocol.model import FileContent, Part
from n8n_a2a.webhook import WebhookClient, WebhookRequest

MIB = 1024 * 1024


async def _peak(url: str, way: str, request: WebhookRequest) -> tuple[int, int]:
    """The bytes sent and the peak allocated by one call sent `way`."""
    async with WebhookClient(client_settings(url, webhook_files=way)) as client:
        tracemalloc.start()
        try:
            reply = await client.call(request, Caller())
            peak = tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()
    if not isinstance(reply, HttpReply) or reply.status != 200:
        raise RuntimeError(f"the stub answered {reply!r}")
    return reply.request_bytes, peak


async def _measure(url: str, mib: int, rounds: int) -> None:
    content = os.urandom(mib * MIB)
    file = FileContent.of_bytes("big.bin", "application/octet-stream", content)
    request = WebhookRequest("", "t-1", "c-1", "m-1", "bench", (Part.of_file(file),))
    for way in ("json", "multipart"):
        samples = [await _peak(url, way, request) for _ in range(rounds)]
        sent = samples[0][0]
        peak = statistics.median(peak for _, peak in samples)
        print(
            f"{way:9} a {mib} MiB file: {sent / MIB:.2f} MiB sent, {peak / MIB:.2f} MiB "
            f"allocated at the peak ({peak / len(content):.2f} x the file)",
            flush=True,
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--mib", type=int, default=20)
    parser.add_argument("--rounds", type=int, default=3)
    arguments = parser.parse_args()
    with stub_webhook() as url:
        trio.run(_measure, url, arguments.mib, arguments.rounds)


if __name__ == "__main__":
    main()
