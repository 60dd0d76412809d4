"""Media types: which kinds of part the agent takes in and gives out (its card's modes).

`text/plain` is a text part, `application/json` a data part, any other type (or `*/*`)
a file part of that type. Pure: the modes come in as plain values.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

TEXT = "text/plain"
JSON = "application/json"
ANY = "*/*"
#: The type of a file part that names none (RFC 9110 §8.3: unknown bytes).
UNKNOWN = "application/octet-stream"
#: The most media types a mode list may name.
MAX_MODES = 32
# RFC 6838 §4.2: type and subtype, each at most 127 restricted-name characters.
_NAME = r"[A-Za-z0-9][A-Za-z0-9!#$&^_.+-]{0,126}"
# A caller's acceptedOutputModes may also name a range, `type/*`.
_MEDIA_TYPE = re.compile(rf"{_NAME}/(?:{_NAME}|\*)|\*/\*")


def media_type(raw: str) -> str | None:
    """A media type (or range) without its parameters, lower case; None if it is malformed."""
    essence = raw.partition(";")[0].strip().lower()
    return essence if _MEDIA_TYPE.fullmatch(essence) else None


@dataclass(frozen=True, slots=True)
class Modes:
    """The media types the agent accepts (`inputs`) and its workflow may answer (`outputs`):
    ADAPTER_INPUT_MODES and ADAPTER_OUTPUT_MODES. The default is text in, text out."""

    inputs: tuple[str, ...] = (TEXT,)
    outputs: tuple[str, ...] = (TEXT,)

    def takes(self, media: str) -> bool:
        """Whether a part of type `media` may come in."""
        return listed(self.inputs, media)

    def gives(self, media: str) -> bool:
        """Whether the workflow may answer a part of type `media`."""
        return listed(self.outputs, media)

    def answers_any_of(self, accepted: list[str]) -> bool:
        """Whether a caller's acceptedOutputModes meet the outputs (`type/*` and `*/*` count)."""
        return any(
            _meets(caller, ours)
            for caller in (media_type(mode) for mode in accepted)
            if caller is not None
            for ours in self.outputs
        )


#: Text in, text out: the agent without ADAPTER_INPUT_MODES and ADAPTER_OUTPUT_MODES.
TEXT_ONLY = Modes()


def listed(modes: tuple[str, ...], media: str) -> bool:
    return ANY in modes or media in modes


def _meets(caller: str, ours: str) -> bool:
    if ANY in (caller, ours) or caller == ours:
        return True
    kind, _, subtype = caller.partition("/")
    return subtype == "*" and ours.startswith(kind + "/")
