"""The A2A v0.3 wire codec: `message/send`, `kind`-tagged objects, lowercase states."""

from __future__ import annotations

from typing import ClassVar

from .codec import Codec, Verb, text_only
from .errors import A2AError
from .model import JSONObject, Part, Role, StatusUpdate, TaskState
from .params import Params


class V03Codec(Codec):
    version = "0.3"
    other_version_hint = " (v1.0 clients send the header A2A-Version: 1.0)"
    methods: ClassVar[dict[str, Verb]] = {
        "message/send": Verb.SEND,
        "tasks/get": Verb.GET,
        "message/stream": Verb.SEND_STREAMING,
        "tasks/resubscribe": Verb.SUBSCRIBE,
        "tasks/cancel": Verb.CANCEL,
        "tasks/pushNotificationConfig/set": Verb.PUSH_CONFIG,
        "tasks/pushNotificationConfig/get": Verb.PUSH_CONFIG,
        "tasks/pushNotificationConfig/list": Verb.PUSH_CONFIG,
        "tasks/pushNotificationConfig/delete": Verb.PUSH_CONFIG,
        "agent/getAuthenticatedExtendedCard": Verb.EXTENDED_CARD,
    }
    push_config_field = "pushNotificationConfig"
    state_names: ClassVar[dict[TaskState, str]] = {state: state.value for state in TaskState}
    role_names: ClassVar[dict[Role, str]] = {Role.USER: "user", Role.AGENT: "agent"}

    def decode_part(self, part: Params) -> Part:
        kind = part.document.get("kind")
        if kind not in ("text", "file", "data"):
            raise A2AError.invalid_params(f"{part.path}.kind must be 'text', 'file' or 'data'")
        return text_only(part, kind)

    def decode_blocking(self, configuration: Params) -> bool:
        # v0.3 leaves the default to the server; the clients send true and so do we.
        blocking = configuration.optional_bool("blocking")
        return True if blocking is None else blocking

    def encode_part(self, part: Part) -> JSONObject:
        document: JSONObject = {"kind": "text", "text": part.text}
        if part.metadata:
            document["metadata"] = part.metadata
        return document

    def tag(self, document: JSONObject, kind: str) -> JSONObject:
        return {"kind": kind, **document}

    def one_of(self, member: str, document: JSONObject) -> JSONObject:
        return document

    def encode_status_update(self, update: StatusUpdate) -> JSONObject:
        # Required in v0.3 (the SDKs' models refuse an update without it): true on the
        # last event, after which the stream closes.
        return {**super().encode_status_update(update), "final": update.final}
