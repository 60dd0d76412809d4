"""Traces over real HTTP, the otel extra on: the spans of each path read back with the
SDK's in-memory exporter (their links and attributes), the trace context that reaches n8n,
and nothing secret in any span."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
from collections.abc import Iterator

import httpx
import pytest
import trio
from opentelemetry.sdk.trace import ReadableSpan
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import SpanKind, StatusCode

from n8n_a2a.protocol.push import AllowList
from tests.support.adapter import AdapterFactory, free_port, wait_until_serving
from tests.support.imports import ROOT
from tests.support.jsonrpc import V1, call, rpc, send_v1
from tests.support.otlp_receiver import OtlpReceiver
from tests.support.push_receiver import PushReceiver, start_push_receiver
from tests.support.spans import everything_shown, named, one, recorded_spans
from tests.support.stub_webhook import StubWebhook

TRACE_ID = "4bf92f3577b34da6a3ce929d0e0e4736"
CALLER_SPAN = "00f067aa0ba902b7"
CALLER_TRACE = {"traceparent": f"00-{TRACE_ID}-{CALLER_SPAN}-01", "tracestate": "vendor=kept"}
#: What no span may show: the caller's token, the message, its data, the webhook URL's
#: query, the push token and the receiver URL's query.
SECRETS = ("caller-token-4711", "text-4711", "data-4711", "hook-4711", "push-4711", "sig-4711")
HEADERS = {**V1, **CALLER_TRACE, "Authorization": f"Bearer {SECRETS[0]}"}


@pytest.fixture
def spans() -> Iterator[InMemorySpanExporter]:
    with recorded_spans() as exporter:
        yield exporter


@pytest.fixture
async def traced(
    spans: InMemorySpanExporter, stub: StubWebhook, start_adapter: AdapterFactory
) -> str:
    url: str = await start_adapter(
        f"{stub.url}?key={SECRETS[3]}",
        push_allow_hosts=AllowList.parse("127.0.0.1"),
        input_modes=("text/plain", "application/json"),
    )
    return url


def hex_id(number: int, width: int) -> str:
    return format(number, f"0{width}x")


def parent_of(span: ReadableSpan) -> int | None:
    return None if span.parent is None else span.parent.span_id


def secret_send(text: str, **configuration: object) -> dict[str, object]:
    document = send_v1(text, **configuration)
    message = document["params"]["message"]
    message["parts"].append({"data": {"note": SECRETS[2]}})
    message["metadata"] = {"note": SECRETS[1]}
    return document


async def finished(spans: InMemorySpanExporter, name: str, count: int) -> None:
    """Until `count` spans of that name have ended (in the adapter's own tasks), 5 s at most."""
    with trio.fail_after(5):
        while len(named(spans, name)) < count:  # noqa: ASYNC110 - the exporter has no event
            await trio.sleep(0.02)


def assert_nothing_secret(spans: InMemorySpanExporter) -> None:
    finished = spans.get_finished_spans()
    assert finished
    for span in finished:
        shown = everything_shown(span)
        for secret in SECRETS:
            assert secret not in shown, (span.name, secret)


async def test_a_blocking_send_is_a_request_over_a_task_over_the_webhook_call(
    traced: str, spans: InMemorySpanExporter, stub: StubWebhook
) -> None:
    sent = await rpc(traced, secret_send(f"answer:{SECRETS[1]}"), HEADERS)
    assert "result" in sent, sent
    task_id = sent["result"]["task"]["id"]
    request = one(spans, "A2A SendMessage")
    task = one(spans, "A2A task")
    webhook = one(spans, "n8n webhook POST")
    # The caller's trace continues: same trace, under its span, its tracestate kept.
    assert hex_id(request.context.trace_id, 32) == TRACE_ID
    assert parent_of(request) == int(CALLER_SPAN, 16)
    assert request.kind is SpanKind.SERVER
    assert {span.context.trace_id for span in (task, webhook)} == {request.context.trace_id}
    assert parent_of(task) == request.context.span_id
    assert parent_of(webhook) == task.context.span_id
    assert dict(request.attributes or {}) == {
        "a2a.binding": "JSONRPC",
        "a2a.version": "1.0",
        "a2a.method": "SendMessage",
        "a2a.task_id": task_id,
        "http.response.status_code": 200,
    }
    assert request.status.status_code is StatusCode.UNSET
    assert task.attributes is not None
    assert (task.attributes["a2a.task_id"], task.attributes["a2a.task.state"]) == (
        task_id,
        "completed",
    )
    assert task.attributes["a2a.task.outcome"] == "ANSWERED"
    assert webhook.kind is SpanKind.CLIENT and webhook.attributes is not None
    assert webhook.attributes["url.full"] == stub.url  # no query
    assert webhook.attributes["http.request.method"] == "POST"
    assert webhook.attributes["http.response.status_code"] == 200
    assert float(webhook.attributes["n8n_a2a.webhook.duration_ms"]) > 0  # type: ignore[arg-type]
    # n8n is told the webhook span's context, so its own trace joins under it.
    sent_to_n8n = stub.received[0].headers
    assert sent_to_n8n["traceparent"] == f"00-{TRACE_ID}-{hex_id(webhook.context.span_id, 16)}-01"
    assert sent_to_n8n["tracestate"] == "vendor=kept"
    assert_nothing_secret(spans)


async def test_a_failed_call_marks_the_task_and_the_webhook_span_as_errors(
    traced: str, spans: InMemorySpanExporter
) -> None:
    await rpc(traced, send_v1("http-503"), HEADERS)
    task, webhook = one(spans, "A2A task"), one(spans, "n8n webhook POST")
    assert webhook.attributes is not None and task.attributes is not None
    assert webhook.attributes["http.response.status_code"] == 503
    assert (webhook.status.status_code, webhook.status.description) == (
        StatusCode.ERROR,
        "HTTP 503",
    )
    assert (task.attributes["a2a.task.state"], task.attributes["a2a.task.outcome"]) == (
        "failed",
        "HTTP_ERROR",
    )
    assert task.status.status_code is StatusCode.ERROR
    # The request itself was answered: the task failed, not the request.
    assert one(spans, "A2A SendMessage").status.status_code is StatusCode.UNSET


async def test_an_error_answer_marks_the_request_span_with_its_code(
    traced: str, spans: InMemorySpanExporter
) -> None:
    await rpc(traced, call("GetTask", id="no-such-task"), HEADERS)
    request = one(spans, "A2A GetTask")
    assert request.attributes is not None
    assert request.attributes["a2a.error.code"] == -32001
    assert request.status.status_code is StatusCode.ERROR
    assert not named(spans, "A2A task")
    # An id a caller made up, for a task that does not exist, is on no span.
    assert "a2a.task_id" not in request.attributes


async def test_a_cancel_ends_the_task_span_canceled_and_cuts_the_webhook_span(
    traced: str, spans: InMemorySpanExporter, stub: StubWebhook
) -> None:
    sent = await rpc(traced, send_v1("hold", returnImmediately=True), HEADERS)
    task_id = sent["result"]["task"]["id"]
    await stub.wait_held()
    canceled = await rpc(traced, call("CancelTask", id=task_id), HEADERS)
    assert "result" in canceled, canceled
    with trio.fail_after(5):
        while not named(spans, "A2A task"):  # noqa: ASYNC110 - spans end in other tasks
            await trio.sleep(0.02)
    task, webhook = one(spans, "A2A task"), one(spans, "n8n webhook POST")
    assert task.attributes is not None and task.attributes["a2a.task.state"] == "canceled"
    assert webhook.status.status_code is StatusCode.ERROR
    cancel = one(spans, "A2A CancelTask")
    assert cancel.attributes is not None and cancel.attributes["a2a.task_id"] == task_id
    assert hex_id(cancel.context.trace_id, 32) == TRACE_ID


async def test_a_stream_and_the_http_json_binding_have_their_request_spans(
    traced: str, spans: InMemorySpanExporter
) -> None:
    document = {**secret_send(f"answer:{SECRETS[1]}"), "method": "SendStreamingMessage"}
    async with httpx.AsyncClient() as client:
        async with client.stream("POST", traced, json=document, headers=HEADERS) as answer:
            assert answer.status_code == 200
            events = [line async for line in answer.aiter_lines() if line.startswith("data:")]
        assert events
        task = one(spans, "A2A task")
        got = await client.get(
            f"{traced}tasks/{task.attributes['a2a.task_id']}",  # type: ignore[index]
            headers=HEADERS,
        )
    assert got.status_code == 200
    stream = one(spans, "A2A SendStreamingMessage")
    assert parent_of(task) == stream.context.span_id
    assert one(spans, "n8n webhook POST").parent.span_id == task.context.span_id  # type: ignore[union-attr]
    rest = one(spans, "A2A GetTask")
    assert rest.attributes is not None
    assert (rest.attributes["a2a.binding"], rest.attributes["a2a.version"]) == ("HTTP+JSON", "1.0")
    assert_nothing_secret(spans)


async def test_each_push_attempt_has_its_span_without_the_token_or_query(
    traced: str, spans: InMemorySpanExporter, nursery: trio.Nursery
) -> None:
    receiver: PushReceiver = await start_push_receiver(nursery)
    config = {"url": f"{receiver.url}?sig={SECRETS[5]}", "token": SECRETS[4]}
    document = secret_send(f"answer:{SECRETS[1]}", taskPushNotificationConfig=config)
    task_id = (await rpc(traced, document, HEADERS))["result"]["task"]["id"]
    with trio.fail_after(10):
        await receiver.wait_received(3)
        while len(named(spans, "A2A push POST")) < 3:  # noqa: ASYNC110
            await trio.sleep(0.02)
    for attempt in named(spans, "A2A push POST"):
        assert attempt.kind is SpanKind.CLIENT and attempt.attributes is not None
        assert attempt.attributes["url.full"] == receiver.url
        assert attempt.attributes["a2a.task_id"] == task_id
        assert attempt.attributes["a2a.push.answer"] == "delivered"
        assert attempt.attributes["http.response.status_code"] == 200
    assert_nothing_secret(spans)


def command_environment(stub: StubWebhook, port: int) -> dict[str, str]:
    environ = {
        name: value
        for name, value in os.environ.items()
        if not name.startswith(("OTEL_", "ADAPTER_"))
    }
    return {
        **environ,
        "ADAPTER_AGENT_NAME": "a",
        "ADAPTER_AGENT_DESCRIPTION": "b",
        "ADAPTER_SKILL_ID": "s",
        "ADAPTER_SKILL_NAME": "n",
        "ADAPTER_SKILL_DESCRIPTION": "d",
        "ADAPTER_WEBHOOK_URL": f"{stub.url}?key={SECRETS[3]}",
        "ADAPTER_PUBLIC_URL": f"http://127.0.0.1:{port}/",
        "ADAPTER_HOST": "127.0.0.1",
        "ADAPTER_PORT": str(port),
        "ADAPTER_SHUTDOWN_GRACE": "0.5",
    }


async def test_the_command_exports_over_otlp_http_to_the_endpoint_set(
    stub: StubWebhook,
) -> None:
    port = free_port()
    with OtlpReceiver().serving() as receiver:
        environ = {
            **command_environment(stub, port),
            "OTEL_EXPORTER_OTLP_ENDPOINT": receiver.endpoint,
            "OTEL_SERVICE_NAME": "supply-agent",
        }
        adapter = environ["ADAPTER_PUBLIC_URL"]
        process = await trio.lowlevel.open_process(
            [sys.executable, "-m", "n8n_a2a"], env=environ, stderr=subprocess.PIPE
        )
        try:
            await wait_until_serving(adapter)
            await rpc(adapter, send_v1(f"answer:{SECRETS[1]}"), HEADERS)
            process.send_signal(signal.SIGTERM)
            with trio.fail_after(15):
                assert await process.wait() == 0  # the spans held go out before the exit
        finally:
            process.kill()
            await process.wait()
    assert set(receiver.paths) == {"/v1/traces"}
    received = {span.name: (resource, span) for resource, span in receiver.spans()}
    assert {"A2A SendMessage", "A2A task", "n8n webhook POST"} <= set(received)
    resource, request = received["A2A SendMessage"]
    assert resource["service.name"] == "supply-agent"
    assert request.trace_id.hex() == TRACE_ID
    assert request.parent_span_id.hex() == CALLER_SPAN
    _, webhook = received["n8n webhook POST"]
    assert webhook.parent_span_id == received["A2A task"][1].span_id
    traceparent = stub.received[0].headers["traceparent"]
    assert traceparent == f"00-{TRACE_ID}-{webhook.span_id.hex()}-01"
    for _, span in receiver.spans():
        shown = str(span)
        for secret in SECRETS:
            assert secret not in shown, (span.name, secret)


def test_without_an_endpoint_a_send_loads_nothing_of_opentelemetry() -> None:
    # A process of its own: this test process has the SDK loaded already.
    script = textwrap.dedent(
        """
        import sys, trio
        import n8n_a2a.__main__
        from n8n_a2a.config.tracing import tracing_requested
        from n8n_a2a.server import serve
        from tests.support.adapter import free_port, make_settings
        from tests.support.jsonrpc import V1, rpc, send_v1
        from tests.support.stub_webhook import start_stub_webhook

        async def main():
            assert not tracing_requested()
            async with trio.open_nursery() as nursery:
                stub = await start_stub_webhook(nursery)
                port = free_port()
                settings = make_settings(
                    stub.url, port=port, public_url=f"http://127.0.0.1:{port}/"
                )
                stop = trio.Event()
                await nursery.start(lambda task_status: serve(
                    settings, shutdown_trigger=stop.wait, task_status=task_status
                ))
                answer = await rpc(settings.public_url, send_v1("answer:yes"), V1)
                assert answer["result"]["task"]["status"]["state"] == "TASK_STATE_COMPLETED"
                stop.set()
                nursery.cancel_scope.cancel()

        trio.run(main)
        print(sorted(name for name in sys.modules if name.startswith("opentelemetry")))
        """
    )
    environ = {name: value for name, value in os.environ.items() if not name.startswith("OTEL_")}
    done = subprocess.run(
        [sys.executable, "-c", script],
        cwd=ROOT,
        env=environ,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"
