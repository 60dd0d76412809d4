"""What the two versions lay out differently, as one interface: v1.py and v03.py each
implement it; the codec (codec.py) and the operations table (operations.py) read and
write through it, never asking which version it is."""

from __future__ import annotations

from typing import Protocol

from .media import Modes
from .model import JSONObject, Part
from .params import Params
from .push import (
    CreatePushConfig,
    DeletePushConfig,
    GetPushConfig,
    ListPushConfigs,
    PushConfig,
    PushConfigPage,
)


class Shapes(Protocol):
    """How one version lays out what the versions lay out differently."""

    def decode_part(self, part: Params, modes: Modes) -> Part:
        """A part, checked against the media types the agent accepts (-32005 otherwise)."""

    def encode_part(self, part: Part) -> JSONObject: ...

    def decode_blocking(self, configuration: Params) -> bool:
        """Whether a send's configuration asks to wait for the task's end (or interruption)."""

    def decode_push_config(self, config: Params, task_id: str) -> PushConfig:
        """A config's own fields (an inline one, or the one a create carries)."""

    def decode_push_create(self, params: Params) -> CreatePushConfig: ...

    def decode_push_get(self, params: Params) -> GetPushConfig: ...

    def decode_push_list(self, params: Params) -> ListPushConfigs: ...

    def decode_push_delete(self, params: Params) -> DeletePushConfig: ...

    def encode_push_config(self, config: PushConfig) -> JSONObject:
        """A config as Create, Get and List answer it: without its credentials, which are
        write-only (anonymous callers share their tasks and so their configs; nobody needs
        to read back a secret they sent). The token stays: it tells a receiver which task or
        session an update is for (the spec's validation token), and clients read it back."""

    def encode_push_page(self, page: PushConfigPage) -> object:
        """The list's result: v1.0 a page object, v0.3 a bare list."""

    def encode_push_deleted(self) -> object:
        """The delete's result: v1.0 an empty object (google.protobuf.Empty), v0.3 null."""

    def with_kind(self, document: JSONObject, kind: str) -> JSONObject:
        """A Task, Message or update with its `kind` discriminator (v0.3), or as it is (v1.0,
        which has none)."""

    def union_member(self, member: str, document: JSONObject) -> JSONObject:
        """A result that is one of several objects (a send's, a stream event): v1.0 names the
        member it is, `{member: document}` (a oneof); v0.3 sends the object, whose kind says."""
