"""The protected resource metadata route (RFC 9728), with an issuer: where a client that
was refused learns which issuer's tokens this agent takes, and with which scopes."""

from __future__ import annotations

import json

from quart import Response
from quart_trio import QuartTrio

from ..auth.signin import METADATA_PREFIX, ProtectedResource


class ProtectedResourceRoute:
    """GET of the metadata: unauthenticated, built once, cacheable."""

    def __init__(self, resource: ProtectedResource) -> None:
        self._resource = resource
        self._body = json.dumps(resource.metadata(), ensure_ascii=False).encode()

    def add_to(self, app: QuartTrio) -> None:
        # With and without a last slash: a client that derives the location from the
        # resource's URL may have kept it or not.
        trimmed = self._resource.metadata_path.rstrip("/")
        variants = [trimmed] if trimmed == METADATA_PREFIX else [trimmed, trimmed + "/"]
        for variant in variants:
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
