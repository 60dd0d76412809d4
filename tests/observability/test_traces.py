"""The tracing interface: off by default and then inert, and URLs as a span may show them."""

from __future__ import annotations

import pytest

from n8n_a2a.observability import traces


def test_tracing_is_off_until_started_and_passes_the_callers_context_on() -> None:
    assert traces.active is traces.OFF and not traces.active.enabled
    inherited = (("traceparent", "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"),)
    assert traces.OFF.context(inherited) is inherited
    traces.OFF.named("SendMessage")
    traces.OFF.annotate("a2a.task_id", "t-1")
    traces.OFF.refused(-32001)


def test_no_span_can_be_made_while_off() -> None:
    # Every caller checks `enabled` first: a span asked for while off is a bug, loudly.
    with pytest.raises(AssertionError):
        traces.OFF.task("t-1", ())
    with pytest.raises(AssertionError):
        traces.OFF.client("n8n webhook POST", "https://n8n.example/webhook/x", ())
    with pytest.raises(AssertionError):
        traces.OFF.server("JSONRPC", ())


def test_use_swaps_the_active_tracing_and_stop_turns_it_off() -> None:
    class Recording:
        enabled = True
        shut = False

        def shutdown(self) -> None:
            self.shut = True

    recording = Recording()
    assert traces.use(recording) is traces.OFF  # type: ignore[arg-type]
    assert traces.active is recording  # type: ignore[comparison-overlap]
    traces.stop()
    assert traces.active is traces.OFF and recording.shut


@pytest.mark.parametrize(
    ("url", "shown"),
    [
        (
            "https://n8n.example/webhook/supply?key=s3cret#frag",
            "https://n8n.example/webhook/supply",
        ),
        ("https://user:pw@n8n.example:8443/webhook/x?a=1", "https://n8n.example:8443/webhook/x"),
        ("http://[::1]:5678/webhook/x?sig=1", "http://[::1]:5678/webhook/x"),
        ("http://127.0.0.1:9/", "http://127.0.0.1:9/"),
    ],
)
def test_a_url_loses_its_user_query_and_fragment(url: str, shown: str) -> None:
    assert traces.without_query(url) == shown
