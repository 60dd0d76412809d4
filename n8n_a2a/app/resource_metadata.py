"""The protected resource metadata route (RFC 9728), with an issuer: where a client that
was refused learns which issuer's tokens this agent takes, and with which scopes."""

from __future__ import annotations

import json

from quart import Response
from quart_trio import QuartTrio

from ..auth.signin import ProtectedResource


class ProtectedResourceRoute:
    """GET of the metadata: unauthenticated, built once, cacheable."""

    def __init__(self, resource: ProtectedResource) -> None:
        self._resource = resource
        self._body = json.dumps(resource.metadata(), ensure_ascii=False).encode()

    def add_to(self, app: QuartTrio) -> None:
        for variant in self._resource.metadata_paths:
            app.add_url_rule(
                variant,
                endpoint=f"protected resource metadata {variant}",
                view_func=self.metadata,
                methods=["GET"],
            )

    async def metadata(self) -> Response:
        return Response(
            self._body,
            content_type="application/json",
            headers={"Cache-Control": "public, max-age=3600"},
        )
