"""What the edge answers when no route does: HTTP errors raised before a route runs, and the
unexpected."""

from __future__ import annotations

import json
import logging

from quart import Response, request
from quart_trio import QuartTrio
from werkzeug.exceptions import HTTPException

from ..protocol.errors import A2AError, ErrorCode
from ..protocol.versions import V1
from . import rest
from .edge import Edge, json_response
from .jsonrpc import error_response, introduction, read_id, refuse
from .negotiation import current

logger = logging.getLogger(__name__)


class ErrorAnswers:
    """413 as an error of the request's binding, a GET of the endpoint told what to POST,
    other HTTP errors as JSON, and an internal error without its traceback."""

    def __init__(self, edge: Edge) -> None:
        self._edge = edge

    def add_to(self, app: QuartTrio) -> None:
        app.register_error_handler(HTTPException, self.http_error)
        app.register_error_handler(Exception, self.internal_error)

    async def http_error(self, error: HTTPException) -> Response:
        settings = self._edge.settings
        if error.code == 413:
            too_large = A2AError(
                ErrorCode.INVALID_REQUEST,
                "The request body is larger than ADAPTER_MAX_BODY_BYTES "
                f"({settings.max_body_bytes:,} bytes), the most the adapter reads",
            )
            if rest.is_rest_request():
                return rest.refuse(self._edge, too_large, status=413)
            return refuse(self._edge, None, current().codec, too_large, status=413)
        if error.code == 405 and request.method == "GET" and request.path == settings.rpc_path:
            return introduction(settings)
        return json_response(
            json.dumps({"error": {"code": error.code, "message": error.description}}).encode(),
            status=error.code or 500,
        )

    async def internal_error(self, error: Exception) -> Response:
        # The traceback goes to the log; the caller gets its binding's error without it.
        logger.exception("unhandled error on %s %s", request.method, request.path)
        internal = A2AError(ErrorCode.INTERNAL_ERROR, "Internal error")
        if rest.is_rest_request():
            return rest.refuse(self._edge, internal)
        # The request's id when its envelope was read, as every other answer echoes it.
        return error_response(read_id(), V1, internal)
