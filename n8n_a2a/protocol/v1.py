"""The A2A v1.0 wire shapes: parts with exactly one of text, raw, url or data; flat push
configs; `{"task": …}` results. Its spellings (`SendMessage`, `TASK_STATE_*`, `ROLE_*`)
are facts.V1_0.
"""

from __future__ import annotations

from .errors import A2AError
from .facts import V1_0
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

_PART_KINDS = ("text", "raw", "url", "data")
_FILE = FileFields(media_type="mediaType", name="filename", content="raw", url="url")


class V1Shapes:
    """v1.0's shapes (shapes.Shapes): parts without a kind, results named by their member.
    1.1's too (drafted): `version` is the one a push config made with them is sent in."""

    def __init__(self, version: str = V1_0.version) -> None:
        self._version = version

    def decode_part(self, part: Params, modes: Modes) -> Part:
        kinds = [kind for kind in _PART_KINDS if kind in part.document]
        if len(kinds) != 1:
            raise A2AError.invalid_params(
                f"{part.path} must have exactly one of text, raw, url or data"
            )
        if kinds[0] == "text":
            return text_part(part, modes)
        if kinds[0] == "data":
            return data_part(part, part.document["data"], modes)
        return file_part(part, part, _FILE, modes)

    def decode_blocking(self, configuration: Params) -> bool:
        return not configuration.optional_bool("returnImmediately")

    def encode_part(self, part: Part) -> JSONObject:
        document: JSONObject
        if part.kind is PartKind.DATA:
            document = {"data": part.data}
        elif part.file is not None:
            file = part.file
            document = {"url": file.url} if file.url is not None else {"raw": file.encoded or ""}
            document["mediaType"] = file.media_type
            if file.name:
                document["filename"] = file.name
        else:
            document = {"text": part.text}
        metadata = part.metadata
        if metadata:
            document["metadata"] = metadata
        return document

    def with_kind(self, document: JSONObject, kind: str) -> JSONObject:
        return document

    def union_member(self, member: str, document: JSONObject) -> JSONObject:
        return {member: document}

    # Push configs: a TaskPushNotificationConfig is flat, `{taskId, id, url, token,
    # authentication: {scheme, credentials}}`, the create's params and every result.

    def decode_push_config(self, config: Params, task_id: str) -> PushConfig:
        found = config.optional_object("authentication")
        authentication = None
        if found is not None:
            scheme, credentials = found.optional_str("scheme"), found.optional_str("credentials")
            authentication = push_authentication(found, scheme, credentials)
        return push_config(
            config, task_id=task_id, version=self._version, authentication=authentication
        )

    def decode_push_create(self, params: Params) -> CreatePushConfig:
        return CreatePushConfig(self.decode_push_config(params, params.required_id("taskId")))

    def decode_push_get(self, params: Params) -> GetPushConfig:
        return GetPushConfig(params.required_id("taskId"), params.required_id("id"))

    def decode_push_list(self, params: Params) -> ListPushConfigs:
        return ListPushConfigs(
            params.required_id("taskId"),
            params.optional_int("pageSize") or None,
            params.optional_str("pageToken"),
        )

    def decode_push_delete(self, params: Params) -> DeletePushConfig:
        return DeletePushConfig(params.required_id("taskId"), params.required_id("id"))

    def encode_push_config(self, config: PushConfig) -> JSONObject:
        document: JSONObject = {"taskId": config.task_id, "id": config.id, "url": config.url}
        if config.token is not None:
            document["token"] = config.token
        if config.authentication is not None:
            # Credentials are write-only: see shapes.Shapes.encode_push_config.
            document["authentication"] = {"scheme": config.authentication.scheme}
        return document

    def encode_push_page(self, page: PushConfigPage) -> JSONObject:
        return {
            "configs": [self.encode_push_config(config) for config in page.configs],
            "nextPageToken": page.next_page_token,
        }

    def encode_push_deleted(self) -> JSONObject:
        return {}
