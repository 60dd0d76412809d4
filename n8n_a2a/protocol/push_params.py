"""A push config as a request carries it: its fields read from the params and checked
against the bounds and rules of protocol/push.py, each refusal a -32602 naming the field.
Shared by both codecs, which spell the authentication each its own way. A token or
credentials are secrets: a refusal never quotes them."""

from __future__ import annotations

from .errors import A2AError
from .params import Params
from .push import (
    MAX_CONFIG_ID_LENGTH,
    PushAuthentication,
    PushConfig,
    header_value_problem,
    scheme_problem,
    url_problem,
)


def push_config(
    config: Params,
    *,
    task_id: str,
    version: str,
    authentication: PushAuthentication | None,
) -> PushConfig:
    """The fields both versions share (id, url, token), checked, with the authentication
    each version spells its own way."""
    url = config.required_str("url")
    problem = url_problem(url)
    if problem is not None:
        raise A2AError.invalid_params(f"{config.path}.url {problem}")
    config_id = config.optional_str("id") or ""
    if len(config_id) > MAX_CONFIG_ID_LENGTH:
        raise A2AError.invalid_params(
            f"{config.path}.id must be at most {MAX_CONFIG_ID_LENGTH} characters"
        )
    token = config.optional_str("token")
    if token is not None:
        _check_header_value(config, "token", token)
    return PushConfig(task_id, config_id or task_id, url, token, authentication, version)


def push_authentication(
    authentication: Params, scheme: str | None, credentials: str | None
) -> PushAuthentication:
    if scheme is None:
        raise A2AError.invalid_params(f"{authentication.path} must name a scheme")
    problem = scheme_problem(scheme)
    if problem is not None:
        raise A2AError.invalid_params(f"{authentication.path} scheme {problem}")
    if credentials is not None:
        _check_header_value(authentication, "credentials", credentials)
    return PushAuthentication(scheme, credentials)


def _check_header_value(document: Params, name: str, value: str) -> None:
    problem = header_value_problem(value)
    if problem is not None:
        # The value is a secret: never quoted back.
        raise A2AError.invalid_params(f"{document.path}.{name} {problem}")
