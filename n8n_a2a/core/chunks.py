"""A streamed reply, read as n8n writes it: JSON lines of begin, item, end, error, keepalive.

With ADAPTER_WEBHOOK_STREAMING the workflow's Webhook node answers in its `streaming`
response mode. The chunk format is n8n 2.41.1's own, read from its sources:

- `n8n-core/dist/execution-engine/node-execution-context/base-execute-context.js`,
  `sendChunk`: `{type, content, metadata: {nodeId, nodeName, itemIndex, runIndex,
  timestamp}}`, `content` always a string (an object is `JSON.stringify`'d); `begin` and
  `end` come without content.
- `n8n-core/dist/execution-engine/workflow-execute.js`, `handleNodeExecutionError`: a
  node that throws writes `{type: "error", content: <its description>, metadata}` (no
  timestamp).
- `n8n/dist/workflow-runner.js`: each chunk is written as `JSON.stringify(chunk) + "\\n"`
  (in queue mode `n8n/dist/active-executions.js`, `sendChunk`, the same), and
  `{"type":"keepalive"}` every 30 s; `finalizeExecution` in `active-executions.js` ends
  the response when the execution ends.
- `n8n-nodes-base/dist/nodes/RespondToWebhook/RespondToWebhook.node.js` (v1.5+,
  `enableStreaming`): `begin`, one `item` with the whole response body, `end`.

Text that starts with `{` is held back: it may be the contract's JSON object (a Respond
to Webhook node answering `{"answer", "escalate"}` in a streaming workflow), judged by
outcome.classify once whole; any other text is the answer, relayed as it comes.

Pure: bytes in, text to relay and a StreamedReply out; webhook/streamed_reply.py does the reading.
"""

from __future__ import annotations

import io
import json

from .replies import StreamedReply

#: The longest line taken is this many times the most text gathered (ADAPTER_MAX_REPLY_BYTES,
#: the bound of a reply read whole), and LINE_EXTRA_BYTES: one item may carry all the
#: text, JSON-escaped, and its metadata.
LINE_PER_TEXT = 2
LINE_EXTRA_BYTES = 4096
#: The most begins open at once: more is no workflow's, and each costs a little memory.
MAX_OPEN_BEGINS = 1024
#: The longest nodeId (or other text of a begin's key) taken: n8n's ids are UUIDs.
MAX_KEY_CHARACTERS = 256
#: The most lines one reply may have, each a parse of some microseconds: four times the
#: items of the longest answer a model writes (65,536 tokens, an item each); past it, the
#: reply is off contract.
MAX_STREAMED_LINES = 256 * 1024
# What of the stream as sent is kept to show, should the reply be off contract.
_RAW_KEPT_BYTES = 8192

_NO_DESCRIPTION = "(n8n gave no description)"
_KINDS = frozenset({"begin", "item", "end", "error", "keepalive"})


class ChunkReader:
    """Gathers a streamed reply's text from its bytes as they arrive; the first thing
    wrong with the stream stops it (`problem`), with what was read kept to show."""

    def __init__(self, max_text_bytes: int, max_lines: int = MAX_STREAMED_LINES) -> None:
        """`max_text_bytes`: the most text gathered, in UTF-8 (ADAPTER_MAX_REPLY_BYTES)."""
        self._max_text = max_text_bytes
        self.max_line_bytes = LINE_PER_TEXT * max_text_bytes + LINE_EXTRA_BYTES
        self._max_lines = max_lines
        self._pending = bytearray()
        # The text in one buffer, however many items brought it (a token each, maybe).
        self._text = io.StringIO(newline="")
        self._size = 0
        # The begins open, each with how many times it is open: a key goes when it closes.
        self._open: dict[tuple[object, ...], int] = {}
        self._lines = 0
        self._raw = bytearray()
        self._culprit = b""  # the line that stopped the stream, to show it
        self._relayed = 0  # characters of the text looked at: relayed, held or blank
        self._started = False  # a character that is not blank came: relayed or held
        self._held = False  # the text starts with `{`: nothing is relayed
        self.problem = ""
        self.error = ""
        self.truncated = False

    @property
    def held_bytes(self) -> int:
        """The bytes the reader holds: the text gathered (UTF-8) and a line not ended yet,
        what ADAPTER_MEMORY_BUDGET counts of a streamed reply."""
        return self._size + len(self._pending)

    @property
    def stopped(self) -> bool:
        """Whether nothing more need be read: the stream went wrong or past its bound."""
        return bool(self.problem or self.error) or self.truncated

    def feed(self, data: bytes) -> None:
        """Take the next bytes of the stream, as they came.

        Only the new bytes are searched for a line's end, and a line's bound is checked
        before its bytes are kept: a long line in many small pieces costs what its bytes
        do, not their square."""
        if self.stopped:
            return
        self._raw += data[: max(0, _RAW_KEPT_BYTES - len(self._raw))]
        start = 0
        while (end := data.find(b"\n", start)) >= 0:
            piece = data[start:end]
            if self._too_long(piece):
                return
            line = bytes(self._pending) + piece if self._pending else piece
            self._pending.clear()
            self._take(line)
            if self.stopped:
                return
            start = end + 1
        if not self._too_long(data[start:]):
            self._pending += data[start:]

    def relayable(self) -> str:
        """The text gathered since the last call that may be relayed now: none while the
        text is blank or held back, none once the stream went wrong."""
        if self._held or self.problem or self.error:
            return ""
        self._text.seek(self._relayed)
        fresh = self._text.read()
        self._relayed = self._text.tell()  # and writes go on at the end
        if self._started:
            return fresh
        if not fresh.strip():
            return ""  # blanks wait: they go with the first word, or are held with it
        self._started = True
        self._held = fresh.lstrip().startswith("{")
        return "" if self._held else self._text.getvalue()

    def reply(self, status: int, subject_token: str | None) -> StreamedReply:
        """What the stream came to, once it has ended (or stopped)."""
        if not self.stopped and self._pending.strip():
            self._take(bytes(self._pending))  # a last line without its newline
        if not self.stopped and self._open:
            self.problem = "it ended without ending what it began (a begin without its end)"
        text = self._text.getvalue()
        return StreamedReply(
            status=status,
            # A character cut between two items (an emoji's surrogate halves) is whole again.
            text=text.encode("utf-16", "surrogatepass").decode("utf-16", "replace"),
            problem=self.problem,
            error=self.error,
            raw=(self._culprit or self._raw).decode("utf-8", errors="replace"),
            truncated=self.truncated,
            read_limit=self._max_text,
            subject_token=subject_token,
        )

    def _too_long(self, piece: bytes) -> bool:
        """Whether the line under way, with `piece`, is past its bound (and so the problem)."""
        if len(self._pending) + len(piece) <= self.max_line_bytes:
            return False
        self.problem = (
            f"a line is longer than {self.max_line_bytes:,} bytes (twice "
            "ADAPTER_MAX_REPLY_BYTES and 4 KiB)"
        )
        self._culprit = (bytes(self._pending[:_RAW_KEPT_BYTES]) or piece)[:_RAW_KEPT_BYTES]
        return True

    def _take(self, line: bytes) -> None:
        self._lines += 1
        if self._lines > self._max_lines:
            self.problem = f"it is longer than {self._max_lines} lines"
            return
        if not line.strip():
            return
        self._judge(line)
        if self.problem:
            self._culprit = line[:_RAW_KEPT_BYTES]

    def _judge(self, line: bytes) -> None:
        try:
            chunk = json.loads(line)
        except (ValueError, RecursionError):
            self.problem = "a line is not JSON"
            return
        kind = chunk.get("type") if isinstance(chunk, dict) else None
        if kind not in _KINDS:
            self.problem = f"a line is not one of n8n's stream chunks (type {kind!r})"
            return
        content = chunk.get("content")
        if kind == "item" and not isinstance(content, str):
            self.problem = "an item chunk's content is not a string"
            return
        if kind in ("begin", "end"):
            self._pair(kind, chunk.get("metadata"))
        elif kind == "error":
            # n8n writes the error's description, which may be null or missing.
            self.error = content if isinstance(content, str) and content else _NO_DESCRIPTION
        elif kind == "item":
            self._gather(content)

    def _pair(self, kind: str, metadata: object) -> None:
        """A begin opens its node's run and item, its end closes them (and is forgotten)."""
        key = _key(metadata)
        opened = self._open.get(key, 0)
        if any(isinstance(value, str) and len(value) > MAX_KEY_CHARACTERS for value in key):
            self.problem = (
                f"a {kind} chunk names its node in more than {MAX_KEY_CHARACTERS} characters"
            )
        elif kind == "begin":
            self._open[key] = opened + 1
            if len(self._open) > MAX_OPEN_BEGINS:
                self.problem = f"more than {MAX_OPEN_BEGINS} begins are open at once"
        elif not opened:
            self.problem = f"an end came without its begin (nodeId {_shown(key)})"
        elif opened == 1:
            del self._open[key]
        else:
            self._open[key] = opened - 1

    def _gather(self, content: str) -> None:
        size = len(content.encode("utf-8", errors="surrogatepass"))
        if self._size + size > self._max_text:
            self.truncated = True
            return
        self._size += size
        self._text.write(content)


def _key(metadata: object) -> tuple[object, ...]:
    """Which begin an end ends: the same node, run and item."""
    if not isinstance(metadata, dict):
        return ()
    # Scalars only: a key is hashed, and a nested value (never n8n's) is just "other".
    return tuple(
        value if isinstance(value, str | int | float | bool | None) else "other"
        for value in (metadata.get(name) for name in ("nodeId", "runIndex", "itemIndex"))
    )


def _shown(key: tuple[object, ...]) -> str:
    """An end's nodeId, as a reason may show it."""
    return repr(key[0]) if key else "none"
