"""From the environment to Settings: every variable read, every problem named at once, and
the doubts worth a line at start."""

from __future__ import annotations

import ipaddress
import os
from collections.abc import Iterable, Mapping
from typing import Any, NamedTuple
from urllib.parse import urlsplit

from .settings import Settings
from .variables import RETIRED, VARIABLES

_DEFAULTS = {variable.attribute: variable.default for variable in VARIABLES}
_CALLS = ("ADAPTER_MAX_CONCURRENT_CALLS", "ADAPTER_MAX_QUEUED_CALLS")
_SIGNING_ONLY = ("ADAPTER_CARD_SIGNING_KID", "ADAPTER_CARD_SIGNING_JKU")
_ISSUER_ONLY = ("ADAPTER_OIDC_AUDIENCE", "ADAPTER_OIDC_SCOPES", "ADAPTER_OIDC_ALLOW_HTTP")


class Problem(NamedTuple):
    """What is wrong, or doubtful, with one variable."""

    variable: str
    what: str

    def __str__(self) -> str:
        return f"{self.variable}: {self.what}"


class ConfigError(Exception):
    """Variables missing or malformed: one Problem each, in the table's order."""

    def __init__(self, problems: Iterable[Problem]) -> None:
        self.problems = tuple(problems)
        super().__init__("; ".join(map(str, self.problems)))


def load_settings(environ: Mapping[str, str] = os.environ) -> Settings:
    """Read and check every ADAPTER_* variable; raise ConfigError naming every bad one."""
    given: dict[str, Any] = {}
    present: set[str] = set()
    problems: dict[str, str] = {}
    for variable in VARIABLES:
        raw = environ.get(variable.name, "").strip()
        if raw:
            present.add(variable.name)
            try:
                given[variable.attribute] = variable.parse(raw)
            except ValueError as error:
                problems[variable.name] = str(error)
        elif variable.required:
            problems[variable.name] = "is required and must not be empty"
    # The checks across variables come second: a variable's own problem is the one it shows.
    _fit_the_limits(given, problems)
    _fit_the_budget(given, problems)
    _check_the_issuer(given, present, problems)
    _check_the_card_signing(present, problems)
    retired = [Problem(name, why) for name, why in RETIRED.items() if name in environ]
    if problems or retired:
        raise ConfigError(
            [
                *retired,
                *(Problem(v.name, problems[v.name]) for v in VARIABLES if v.name in problems),
            ]
        )
    return Settings(**given)


def _fit_the_limits(given: dict[str, Any], problems: dict[str, str]) -> None:
    """Check the task and connection limits against the call limits, and give the
    connection limits their defaults, which follow them."""
    if any(name in problems for name in _CALLS):
        return  # nothing sure to fit the others to
    admitted = _value(given, "max_concurrent_calls") + _value(given, "max_queued_calls")
    at_least = f"must be at least {' + '.join(_CALLS)} ({admitted})"
    # Every running or waiting task must fit in the table, or a send could find no
    # room that evicting finished tasks can make.
    if (tasks := _value(given, "max_tasks")) < admitted:
        problems.setdefault("ADAPTER_MAX_TASKS", f"{at_least}, got {tasks}")
    # A blocking send holds its connection while it runs or waits: every send admitted
    # must find one. The default leaves as many again for polls, cards, probes and
    # clients' idle keep-alive connections.
    if (connections := given.setdefault("max_connections", 2 * admitted)) < admitted:
        problems.setdefault("ADAPTER_MAX_CONNECTIONS", f"{at_least}, got {connections}")
    # Unset, no address is held to less than all: behind an ingress or a load balancer,
    # its few addresses are every caller's.
    if (per_ip := given.setdefault("max_connections_per_ip", connections)) > connections:
        problems.setdefault(
            "ADAPTER_MAX_CONNECTIONS_PER_IP",
            f"must be at most ADAPTER_MAX_CONNECTIONS ({connections}), got {per_ip}",
        )


def _fit_the_budget(given: dict[str, Any], problems: dict[str, str]) -> None:
    """The memory budget must hold one body of the largest size taken, and a request may
    not wait for it longer than its read may take (its read timer runs meanwhile): unset,
    the wait is the default or half the read timeout, whichever is less."""
    budget, bound = _value(given, "memory_budget"), _value(given, "max_body_bytes")
    if budget < bound:
        problems.setdefault(
            "ADAPTER_MEMORY_BUDGET",
            f"must be at least ADAPTER_MAX_BODY_BYTES ({bound}), got {budget}",
        )
    _fit_the_share(given, problems, budget, bound)
    read_timeout = _value(given, "request_read_timeout")
    if "memory_wait" not in given:
        given["memory_wait"] = min(_DEFAULTS["memory_wait"], read_timeout / 2)
    elif (wait := given["memory_wait"]) >= read_timeout:
        problems.setdefault(
            "ADAPTER_MEMORY_WAIT",
            f"must be less than ADAPTER_REQUEST_READ_TIMEOUT ({read_timeout:g}), got {wait:g}",
        )


def _fit_the_share(
    given: dict[str, Any], problems: dict[str, str], budget: int, bound: int
) -> None:
    """A caller's share of the budget holds one body of the largest size taken, and no
    more than the budget: unset, it is half the budget, or the body bound if more."""
    if "memory_share" not in given:
        given["memory_share"] = min(budget, max(budget // 2, bound))
    elif not bound <= (share := given["memory_share"]) <= budget:
        problems.setdefault(
            "ADAPTER_MEMORY_SHARE",
            f"must be at least ADAPTER_MAX_BODY_BYTES ({bound}) and at most "
            f"ADAPTER_MEMORY_BUDGET ({budget}), got {share}",
        )


def _value(given: dict[str, Any], attribute: str) -> Any:
    return given.get(attribute, _DEFAULTS[attribute])


def _check_the_issuer(given: dict[str, Any], present: set[str], problems: dict[str, str]) -> None:
    """An issuer's tokens are for many agents: the audience says which are for this one. Its
    keys decide who is who: they come over https, unless a local test says otherwise."""
    issuer = "ADAPTER_OIDC_ISSUER" in present
    if issuer and "ADAPTER_OIDC_AUDIENCE" not in present:
        problems["ADAPTER_OIDC_AUDIENCE"] = (
            "is required with ADAPTER_OIDC_ISSUER: the aud a token must carry to be for this agent"
        )
    if not issuer:
        for name in _ISSUER_ONLY:
            if name in present:
                problems[name] = "is only used with ADAPTER_OIDC_ISSUER"
        return
    url = given.get("oidc_issuer", "")
    if urlsplit(url).scheme == "http" and not _value(given, "oidc_allow_http"):
        problems.setdefault(
            "ADAPTER_OIDC_ISSUER",
            "must be an https:// URL: whoever can change its keys on the way can sign in as "
            "anyone (ADAPTER_OIDC_ALLOW_HTTP=true allows http, for local tests only)",
        )


def _check_the_card_signing(present: set[str], problems: dict[str, str]) -> None:
    """A signature's header names its key: a verifier looks the kid up among those it trusts."""
    if "ADAPTER_CARD_SIGNING_KEY" in present:
        if "ADAPTER_CARD_SIGNING_KID" not in present:
            problems["ADAPTER_CARD_SIGNING_KID"] = (
                "is required with ADAPTER_CARD_SIGNING_KEY: the key id the card's signature "
                "names, by which a caller finds the public key"
            )
        return
    for name in _SIGNING_ONLY:
        if name in present:
            problems[name] = "is only used with ADAPTER_CARD_SIGNING_KEY"


def doubts(settings: Settings, environ: Mapping[str, str] = os.environ) -> tuple[Problem, ...]:
    """What loads but is likely wrong: worth a warning, not a refusal."""
    return (*_port_doubt(settings), *_test_url_doubt(settings), *_unknown_variables(environ))


#: n8n's test webhooks live under this path (its N8N_ENDPOINT_WEBHOOK_TEST's default).
_TEST_WEBHOOK_PATH = "/webhook-test/"


def _test_url_doubt(settings: Settings) -> tuple[Problem, ...]:
    """n8n's test URL, the classic first mistake: it answers one run, and only while the
    editor waits for it; every other call is a 404 whose hint says to click a button."""
    if _TEST_WEBHOOK_PATH not in urlsplit(settings.webhook_url).path:
        return ()
    return (
        Problem(
            "ADAPTER_WEBHOOK_URL",
            "is n8n's test URL (/webhook-test/), which answers one run, and only while the "
            "editor waits for it ('Execute workflow'): publish the workflow and use its "
            "Production URL (/webhook/...)",
        ),
    )


def _unknown_variables(environ: Mapping[str, str]) -> tuple[Problem, ...]:
    """ADAPTER_* variables the adapter does not know: a typo is otherwise silently ignored."""
    known = {variable.name for variable in VARIABLES} | RETIRED.keys()
    unknown = sorted(name for name in environ if name.startswith("ADAPTER_") and name not in known)
    return tuple(Problem(name, _not_a_variable(name, known)) for name in unknown)


def _not_a_variable(name: str, known: set[str]) -> str:
    import difflib  # for a name that is no variable's: not at every start

    # Matched without the prefix they all share, which would make any name look close.
    prefix = len("ADAPTER_")
    close = difflib.get_close_matches(name[prefix:], sorted(k[prefix:] for k in known), n=1)
    meant = f" (did you mean ADAPTER_{close[0]}?)" if close else ""
    return f"is no variable of the adapter's, and is ignored{meant}; `n8n-a2a --help` lists them"


def _port_doubt(settings: Settings) -> tuple[Problem, ...]:
    public = urlsplit(settings.public_url)
    port = public.port or (443 if public.scheme == "https" else 80)
    # A card naming this machine is a trial on it, where a client dialling another port
    # than the adapter's dies with a connection error. Behind a port-forward it can be
    # right, hence no refusal; port 0 is only chosen at bind.
    if _is_loopback(public.hostname or "") and settings.port not in (0, port):
        return (
            Problem(
                "ADAPTER_PUBLIC_URL",
                f"names port {port} on this machine, but the adapter listens on ADAPTER_PORT "
                f"{settings.port}: a client that reads the card will dial a port nothing serves "
                "(unless a port-forward leads there)",
            ),
        )
    return ()


def _is_loopback(host: str) -> bool:
    if host.rstrip(".").lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False
