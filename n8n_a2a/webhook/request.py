"""What the workflow receives: a turn's request, as the JSON body (or the multipart one,
with ADAPTER_WEBHOOK_FILES=multipart) that webhook/client.py POSTs, to the webhook or to
the waiting execution the turn resumes."""

from __future__ import annotations

import json
from dataclasses import dataclass, field

from ..protocol.model import FileContent, JSONObject, Part, PartKind
from ..protocol.writing import Pieces, written
from .form import FormBody, FormFile, file_field, form_body


@dataclass(frozen=True, slots=True)
class WebhookRequest:
    """What the workflow receives: the message text, its data and files when it has any,
    and the A2A ids to key a conversation on. `parts`: the message's, bytes and all."""

    text: str
    task_id: str
    context_id: str
    message_id: str
    skill_id: str
    parts: tuple[Part, ...] = ()
    #: The resume target of the n8n execution waiting for this turn (core/resume.py):
    #: POSTed there, on the webhook's origin, instead of to the webhook. Never shown.
    resume: str | None = field(default=None, repr=False)

    def body(self) -> bytes | Pieces:
        """The JSON body. About as long as the A2A request it came in (which
        ADAPTER_MAX_BODY_BYTES bounds): a file's base64 as it came, re-padded, spliced in
        as it is held (never copied), and a few keys for each of at most MAX_ATTACHMENTS
        data and file parts. A lone surrogate (JSON's "\ud83d" in the caller's text),
        which has no UTF-8, is written as U+FFFD."""
        files = [_file_entry(part.file) for part in self.parts if part.file is not None]
        return written(self._request(files))

    def form(self, boundary: str = "") -> FormBody:
        """The multipart/form-data body (ADAPTER_WEBHOOK_FILES=multipart): the JSON
        document in one field, each file sent as bytes listed there by its `field`, `size`,
        name and type instead of its base64, and sent as a form file (webhook/form.py)."""
        entries: list[JSONObject] = []
        sent: list[FormFile] = []
        for file in (part.file for part in self.parts if part.file is not None):
            if file.content is None:
                entries.append(_file_entry(file))  # by URL: nothing to send but the URL
                continue
            field = file_field(len(sent))
            entries.append(_form_entry(file, field))
            sent.append(FormFile(field, file.name, file.media_type, file.content))
        # Compact: data comes back no longer than the caller wrote it.
        document = json.dumps(self._request(entries), ensure_ascii=False, separators=(",", ":"))
        return form_body(document, tuple(sent), boundary)

    def _request(self, files: list[JSONObject]) -> JSONObject:
        """The request, `files` its file entries."""
        request: JSONObject = {
            "text": self.text,
            "taskId": self.task_id,
            "contextId": self.context_id,
            "messageId": self.message_id,
            "skillId": self.skill_id,
        }
        data = [part.data for part in self.parts if part.kind is PartKind.DATA]
        if data:
            request["data"] = data
        if files:
            request["files"] = files
        return request


def _file_entry(file: FileContent) -> JSONObject:
    """`{name, mediaType, base64}` or `{name, mediaType, url}`: the adapter never fetches."""
    entry: JSONObject = {"name": file.name, "mediaType": file.media_type}
    if file.url is not None:
        entry["url"] = file.url
    else:
        entry["base64"] = file.encoded or ""
    return entry


def _form_entry(file: FileContent, field: str) -> JSONObject:
    """`{name, mediaType, size, field}`: a file sent as the form file of `field`."""
    size = file.size or 0
    return {"name": file.name, "mediaType": file.media_type, "size": size, "field": field}
