"""The A2A v0.3 wire shapes: `kind`-tagged objects and parts, nested push configs, bare
results. Its spellings (`message/send`, lowercase states and roles) are facts.V0_3.
"""

from __future__ import annotations

from .errors import A2AError
from .facts import V0_3
from .media import Modes
from .model import JSONObject, Part, PartKind
from .params import Params
from .parts import FileFields, data_part, file_part, text_part
from .push import (
    CreatePushConfig,
    DeletePushConfig,
    GetPushConfig,
    ListPushConfigs,
    PushConfig,
    PushConfigPage,
)
from .push_params import push_authentication, push_config

_FILE = FileFields(media_type="mimeType", name="name", content="bytes", url="uri")


class V03Shapes:
    """v0.3's shapes (shapes.Shapes): every object tagged with its `kind`, nothing wrapped."""

    def decode_part(self, part: Params, modes: Modes) -> Part:
        kind = part.document.get("kind")
        if kind == "text":
            return text_part(part, modes)
        if kind == "data":
            data = part.document.get("data")
            if not isinstance(data, dict):
                raise A2AError.invalid_params(f"{part.path}.data must be an object")
            return data_part(part, data, modes)
        if kind == "file":
            return file_part(part, part.required_object("file"), _FILE, modes)
        raise A2AError.invalid_params(f"{part.path}.kind must be 'text', 'file' or 'data'")

    def decode_blocking(self, configuration: Params) -> bool:
        # v0.3 leaves the default to the server; the clients send true and so do we.
        blocking = configuration.optional_bool("blocking")
        return True if blocking is None else blocking

    def encode_part(self, part: Part) -> JSONObject:
        document: JSONObject
        if part.kind is PartKind.DATA:
            # v0.3's DataPart.data is an object: any other JSON value goes inside one.
            data = part.data if isinstance(part.data, dict) else {"value": part.data}
            document = {"kind": "data", "data": data}
        elif part.file is not None:
            file = part.file
            content = {"uri": file.url} if file.url is not None else {"bytes": file.encoded or ""}
            content["mimeType"] = file.media_type
            if file.name:
                content["name"] = file.name
            document = {"kind": "file", "file": content}
        else:
            document = {"kind": "text", "text": part.text}
        metadata = part.metadata
        if metadata:
            document["metadata"] = metadata
        return document

    def with_kind(self, document: JSONObject, kind: str) -> JSONObject:
        return {"kind": kind, **document}

    def union_member(self, member: str, document: JSONObject) -> JSONObject:
        return document

    # Push configs: a TaskPushNotificationConfig nests the config, `{taskId,
    # pushNotificationConfig: {id, url, token, authentication: {schemes, credentials}}}`;
    # get, list and delete name the task as `id`.

    def decode_push_config(self, config: Params, task_id: str) -> PushConfig:
        found = config.optional_object("authentication")
        authentication = None
        if found is not None:
            schemes = found.optional_str_list("schemes") or []
            scheme = schemes[0] if schemes else None
            authentication = push_authentication(found, scheme, found.optional_str("credentials"))
        return push_config(
            config, task_id=task_id, version=V0_3.version, authentication=authentication
        )

    def decode_push_create(self, params: Params) -> CreatePushConfig:
        task_id = params.required_id("taskId")
        config = params.required_object("pushNotificationConfig")
        return CreatePushConfig(self.decode_push_config(config, task_id))

    def decode_push_get(self, params: Params) -> GetPushConfig:
        # Without a config id: the config named after the task, the id a config made
        # without one gets.
        task_id = params.required_id("id")
        return GetPushConfig(task_id, params.optional_id("pushNotificationConfigId") or task_id)

    def decode_push_list(self, params: Params) -> ListPushConfigs:
        return ListPushConfigs(params.required_id("id"))

    def decode_push_delete(self, params: Params) -> DeletePushConfig:
        return DeletePushConfig(
            params.required_id("id"), params.required_id("pushNotificationConfigId")
        )

    def encode_push_config(self, config: PushConfig) -> JSONObject:
        document: JSONObject = {"id": config.id, "url": config.url}
        if config.token is not None:
            document["token"] = config.token
        if config.authentication is not None:
            # Credentials are write-only: see shapes.Shapes.encode_push_config.
            document["authentication"] = {"schemes": [config.authentication.scheme]}
        return {"taskId": config.task_id, "pushNotificationConfig": document}

    def encode_push_page(self, page: PushConfigPage) -> list[JSONObject]:
        return [self.encode_push_config(config) for config in page.configs]

    def encode_push_deleted(self) -> object:
        return None
