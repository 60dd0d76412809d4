"""The guard: a URL's host resolved, every address judged, literal addresses never looked up."""

from __future__ import annotations

import ipaddress
import re

import pytest

from n8n_a2a.protocol.push import AllowList
from n8n_a2a.push.guard import destination
from n8n_a2a.webhook.errors import PushRefused
from tests.support.push import Resolver

PUBLIC = ipaddress.ip_address("93.184.215.14")
PUBLIC_V6 = ipaddress.ip_address("2606:2800:21f:cb07:6820:80da:af6b:8b2c")
LOOPBACK = ipaddress.ip_address("127.0.0.1")


async def test_a_public_name_leads_to_its_addresses_in_order() -> None:
    resolve = Resolver({"bridge.example": [PUBLIC_V6, PUBLIC]})
    found = await destination("https://bridge.example/hook", AllowList(), resolve)
    assert found.addresses == (PUBLIC_V6, PUBLIC)
    assert found.url.host == "bridge.example"
    assert resolve.asked == [("bridge.example", 443)]


async def test_one_refused_address_among_many_refuses_the_name() -> None:
    resolve = Resolver({"two-faced.example": [PUBLIC, LOOPBACK]})
    with pytest.raises(PushRefused, match="its host resolves to a loopback address"):
        await destination("http://two-faced.example:8080/", AllowList(), resolve)
    assert resolve.asked == [("two-faced.example", 8080)]


async def test_what_a_name_resolves_to_goes_to_the_log_not_to_the_caller(
    caplog: pytest.LogCaptureFixture,
) -> None:
    resolve = Resolver({"intranet.example": [ipaddress.ip_address("10.31.7.12")]})
    with pytest.raises(PushRefused) as refused:
        await destination("https://intranet.example/hook?secret=s3", AllowList(), resolve)
    assert str(refused.value) == (
        "its host resolves to a private address; push notifications go there only if "
        "ADAPTER_PUSH_ALLOW_HOSTS allows it"
    )
    [line] = [r for r in caplog.records if getattr(r, "fields", {}).get("event") == "push_refused"]
    assert line.levelname == "WARNING"
    assert getattr(line, "fields") == {  # noqa: B009 - set through `extra`
        "event": "push_refused",
        "host": "intranet.example",
        "address": "10.31.7.12",
        "kind": "private",
    }
    assert "10.31.7.12" in line.getMessage()
    assert "s3" not in caplog.text  # the URL's path and query may hold a secret


async def test_a_literal_address_is_judged_without_a_lookup() -> None:
    resolve = Resolver({})
    with pytest.raises(PushRefused, match=r"^169\.254\.169\.254 is the cloud metadata address; "):
        await destination("http://169.254.169.254/latest/meta-data/", AllowList(), resolve)
    allowed = await destination("http://[::1]:9/", AllowList.parse("::1"), resolve)
    assert allowed.addresses == (ipaddress.ip_address("::1"),)
    assert resolve.asked == []


@pytest.mark.parametrize(
    ("url", "words"),
    [
        ("http://[::ffff:0:7f00:1]/", "::ffff:0:7f00:1 is a loopback address"),
        ("http://[64:ff9b:1::7f00:1]/", "64:ff9b:1::7f00:1 is a loopback address"),
        ("http://192.0.0.8/", "192.0.0.8 is a reserved or special-purpose address"),
    ],
)
async def test_translated_forms_and_new_special_purpose_entries_are_refused(
    url: str, words: str
) -> None:
    with pytest.raises(PushRefused, match=re.escape(words)):
        await destination(url, AllowList(), Resolver({}))


async def test_a_name_the_allow_list_names_may_resolve_anywhere() -> None:
    resolve = Resolver({"receiver.internal": [LOOPBACK]})
    allow = AllowList.parse("receiver.internal")
    found = await destination("http://receiver.internal/hook", allow, resolve)
    assert found.addresses == (LOOPBACK,)


async def test_a_name_that_does_not_resolve_is_an_os_error() -> None:
    with pytest.raises(OSError, match="not known"):
        await destination("http://nowhere.invalid/", AllowList(), Resolver({}))
    with pytest.raises(OSError, match="resolves to no address"):
        await destination("http://empty.example/", AllowList(), Resolver({"empty.example": []}))


async def test_an_international_name_is_looked_up_in_its_idna_form() -> None:
    resolve = Resolver({"xn--bcher-kva.example": [PUBLIC]})
    await destination("http://bücher.example/", AllowList(), resolve)
    assert resolve.asked == [("xn--bcher-kva.example", 80)]
