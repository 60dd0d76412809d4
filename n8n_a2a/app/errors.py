"""What the operator's app answers when no route does: HTTP errors as JSON, and the
unexpected without its traceback."""

from __future__ import annotations

import logging

from quart import Response, request
from quart_trio import QuartTrio
from werkzeug.exceptions import HTTPException

from ..protocol.errors import A2AError
from ..protocol.jsonrpc import error_response
from ..protocol.versions import V1
from .exchange import error_document

logger = logging.getLogger(__name__)


class ErrorAnswers:
    """HTTP errors as JSON (a path no route serves), an internal error without its
    traceback."""

    def add_to(self, app: QuartTrio) -> None:
        app.register_error_handler(HTTPException, self.http_error)
        app.register_error_handler(Exception, self.internal_error)

    async def http_error(self, error: HTTPException) -> Response:
        code = error.code or 500
        body = error_document(code, error.description or "")
        return Response(body, status=code, content_type="application/json")

    async def internal_error(self, error: Exception) -> Response:
        # The traceback goes to the log; the caller gets a JSON-RPC error without it.
        logger.exception("unhandled error on %s %s", request.method, request.path)
        internal = V1.encode_error(A2AError.internal())
        return Response(error_response(None, internal), status=500, content_type="application/json")
