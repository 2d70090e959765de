"""OpenTelemetry spans per request (``acp_runtime.otel``), and nothing at all when off."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import SpanKind, StatusCode

from acp_runtime import (
    Connection,
    ConnectionBuilder,
    JsonValue,
    RequestError,
    Responder,
    memory_pair,
)
from acp_runtime._observation import ObservedPendingRequest, ObservedResponseSlot
from acp_runtime._response_slot import ResponseSlot
from acp_runtime._settlement import PendingRequest
from acp_runtime._stdio import FdReceiveStream, FdSendStream
from acp_runtime.otel import CANCEL_ANSWERED, CANCEL_LATENCY, CANCEL_REQUESTED, instrument
from acp_runtime.proxies import SUCCESSOR, Proxy
from acp_runtime.testing import WirePeer, cancel, error, request, result, wire_connection
from acp_runtime.transports import LineTransport

pytestmark = pytest.mark.anyio


@pytest.fixture
def exporter() -> Iterator[InMemorySpanExporter]:
    exporter = InMemorySpanExporter()
    yield exporter
    exporter.clear()


@pytest.fixture
def provider(exporter: InMemorySpanExporter) -> TracerProvider:
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    return provider


def only(exporter: InMemorySpanExporter, kind: SpanKind) -> ReadableSpan:
    spans = [span for span in exporter.get_finished_spans() if span.kind is kind]
    assert len(spans) == 1, spans
    return spans[0]


def attributes(span: ReadableSpan) -> dict[str, Any]:
    return dict(span.attributes or {})


def events(span: ReadableSpan) -> list[str]:
    return [event.name for event in span.events]


async def echo(method: str, params: JsonValue, responder: Responder[JsonValue]) -> JsonValue:
    if method == "test/fail":
        raise RequestError.invalid_params({"why": "test"})
    return {"echo": params}


async def test_an_incoming_request_gets_a_server_span_with_its_outcome(
    provider: TracerProvider, exporter: InMemorySpanExporter
) -> None:
    builder = instrument(ConnectionBuilder("agent").on_raw_request(echo), tracer_provider=provider)
    async with wire_connection(builder) as (_, peer):
        await peer.send(request(7, "test/echo", {"a": 1}))
        assert await peer.receive() == result(7, {"echo": {"a": 1}})
        span = only(exporter, SpanKind.SERVER)
    assert span.name == "test/echo"
    assert attributes(span) == {
        "rpc.system": "jsonrpc",
        "rpc.jsonrpc.version": "2.0",
        "rpc.method": "test/echo",
        "rpc.jsonrpc.request_id": "7",
        "acp.role": "agent",
        "acp.peer": "counterpart",
        "acp.outcome": "result",
    }
    assert span.status.status_code is StatusCode.UNSET
    assert events(span) == []


async def test_an_error_answer_sets_the_code_and_the_error_status(
    provider: TracerProvider, exporter: InMemorySpanExporter
) -> None:
    builder = instrument(ConnectionBuilder().on_raw_request(echo), tracer_provider=provider)
    async with wire_connection(builder) as (_, peer):
        await peer.send(request("r-1", "test/fail"))
        assert (await peer.receive())["error"]["code"] == -32602
        span = only(exporter, SpanKind.SERVER)
    assert attributes(span)["rpc.jsonrpc.request_id"] == "r-1"
    assert attributes(span)["acp.outcome"] == "error"
    assert attributes(span)["rpc.jsonrpc.error_code"] == -32602
    assert attributes(span)["rpc.jsonrpc.error_message"] == "Invalid params"
    assert span.status.status_code is StatusCode.ERROR
    assert span.status.description == "Invalid params (-32602)"


async def test_a_method_nobody_handles_is_a_span_with_32601(
    provider: TracerProvider, exporter: InMemorySpanExporter
) -> None:
    builder = instrument(ConnectionBuilder(), tracer_provider=provider)
    async with wire_connection(builder) as (_, peer):
        await peer.send(request(1, "nobody/home"))
        assert (await peer.receive())["error"]["code"] == -32601
        span = only(exporter, SpanKind.SERVER)
    assert span.name == "nobody/home"
    assert attributes(span)["rpc.jsonrpc.error_code"] == -32601


async def test_a_result_that_fails_to_encode_is_reported_once_as_32603(
    provider: TracerProvider, exporter: InMemorySpanExporter
) -> None:
    async def unencodable(method: str, params: JsonValue, responder: Responder[JsonValue]) -> Any:
        return {"value": object()}

    builder = instrument(ConnectionBuilder().on_raw_request(unencodable), tracer_provider=provider)
    async with wire_connection(builder) as (_, peer):
        await peer.send(request(1, "test/x"))
        assert (await peer.receive())["error"]["code"] == -32603
        span = only(exporter, SpanKind.SERVER)
    assert attributes(span)["rpc.jsonrpc.error_code"] == -32603


async def test_an_outgoing_request_gets_a_client_span_ended_when_it_settles(
    provider: TracerProvider, exporter: InMemorySpanExporter
) -> None:
    builder = instrument(ConnectionBuilder("client"), tracer_provider=provider)
    async with wire_connection(builder) as (cx, peer):
        sent = cx.send_raw_request("_x/ask", {"q": 1})
        assert (await peer.receive())["id"] == sent.id
        assert exporter.get_finished_spans() == ()  # still open
        await peer.send(result(sent.id, "ok"))
        assert await sent == "ok"
        failing = cx.send_raw_request("_x/fail")
        await peer.receive()
        await peer.send(error(failing.id, -32000, "Nope"))
        with pytest.raises(RequestError):
            await failing
    first, second = exporter.get_finished_spans()
    assert first.kind is SpanKind.CLIENT
    assert first.name == "_x/ask"
    assert attributes(first) == {
        "rpc.system": "jsonrpc",
        "rpc.jsonrpc.version": "2.0",
        "rpc.method": "_x/ask",
        "rpc.jsonrpc.request_id": str(sent.id),
        "acp.role": "client",
        "acp.peer": "counterpart",
        "acp.outcome": "result",
    }
    assert first.status.status_code is StatusCode.UNSET
    assert attributes(second)["rpc.jsonrpc.error_code"] == -32000
    assert second.status.status_code is StatusCode.ERROR


async def test_a_cancelled_outgoing_request_has_the_cancel_event_and_its_latency(
    provider: TracerProvider, exporter: InMemorySpanExporter
) -> None:
    builder = instrument(ConnectionBuilder(), tracer_provider=provider)
    async with wire_connection(builder) as (cx, peer):
        sent = cx.send_raw_request("_x/slow")
        await peer.receive()
        sent.cancel()
        assert await peer.receive() == cancel(sent.id)
        await anyio.sleep(0.01)  # the latency covers this wait for the answer
        await peer.send(error(sent.id, -32800, "Request cancelled"))
        with pytest.raises(RequestError):
            await sent
    span = only(exporter, SpanKind.CLIENT)
    assert events(span) == [CANCEL_REQUESTED, CANCEL_ANSWERED]
    latency = (span.events[1].attributes or {})[CANCEL_LATENCY]
    assert isinstance(latency, float)
    assert 10 <= latency < 5000
    assert attributes(span)["rpc.jsonrpc.error_code"] == -32800


async def test_a_cancelled_incoming_request_answered_32800_has_its_events(
    provider: TracerProvider, exporter: InMemorySpanExporter
) -> None:
    async def turn(method: str, params: JsonValue, responder: Responder[JsonValue]) -> None:
        responder.connection.spawn(
            responder.respond_with, responder.cancellation.run_until_cancelled(anyio.sleep(30))
        )

    builder = instrument(ConnectionBuilder().on_raw_request(turn), tracer_provider=provider)
    async with wire_connection(builder) as (_, peer):
        await peer.send(request(3, "test/turn"))
        await peer.barrier()
        assert exporter.get_finished_spans() == ()
        await peer.send(cancel(3))
        assert (await peer.receive())["error"]["code"] == -32800
        span = only(exporter, SpanKind.SERVER)
    assert events(span) == [CANCEL_REQUESTED, CANCEL_ANSWERED]
    latency = (span.events[1].attributes or {})[CANCEL_LATENCY]
    assert isinstance(latency, float) and latency >= 0
    assert attributes(span)["rpc.jsonrpc.error_code"] == -32800
    assert span.status.status_code is StatusCode.ERROR


async def test_spans_end_when_the_connection_closes_with_requests_pending(
    provider: TracerProvider, exporter: InMemorySpanExporter
) -> None:
    async def park(method: str, params: JsonValue, responder: Responder[JsonValue]) -> None:
        parked.append(responder)  # never answered

    parked: list[Responder[JsonValue]] = []
    builder = instrument(ConnectionBuilder().on_raw_request(park), tracer_provider=provider)
    async with wire_connection(builder) as (cx, peer):
        await peer.send(request(1, "test/parked"))
        await peer.barrier()
        sent = cx.send_raw_request("_x/unanswered")
        await peer.receive()
        peer.close()
        with pytest.raises(RequestError) as raised:
            await sent
        assert raised.value.is_connection_closed
    outgoing = only(exporter, SpanKind.CLIENT)
    incoming = only(exporter, SpanKind.SERVER)
    for span in (outgoing, incoming):
        assert attributes(span)["acp.outcome"] == "connection_closed"
        assert span.status.status_code is StatusCode.ERROR


async def test_a_request_to_a_closed_connection_still_ends_its_span(
    provider: TracerProvider, exporter: InMemorySpanExporter
) -> None:
    builder = instrument(ConnectionBuilder(), tracer_provider=provider)
    async with wire_connection(builder) as (cx, _):
        pass
    sent = cx.send_raw_request("_x/late")
    with pytest.raises(RequestError):
        await sent
    assert attributes(only(exporter, SpanKind.CLIENT))["acp.outcome"] == "connection_closed"


async def test_params_that_cannot_be_encoded_end_the_span_as_abandoned(
    provider: TracerProvider, exporter: InMemorySpanExporter
) -> None:
    builder = instrument(ConnectionBuilder(), tracer_provider=provider)
    async with wire_connection(builder) as (cx, _):
        with pytest.raises(TypeError):
            cx.send_raw_request("_x/bad", {"value": object()})
    span = only(exporter, SpanKind.CLIENT)
    assert attributes(span)["acp.outcome"] == "abandoned"
    assert span.status.status_code is StatusCode.ERROR


async def test_requests_a_handler_sends_are_children_of_its_span(
    provider: TracerProvider, exporter: InMemorySpanExporter
) -> None:
    async def ask_back(method: str, params: JsonValue, responder: Responder[JsonValue]) -> None:
        async def work() -> None:
            responder.respond_raw(await responder.connection.send_raw_request("_x/back"))

        responder.connection.spawn(work)

    agent = instrument(ConnectionBuilder().on_raw_request(ask_back), tracer_provider=provider)
    async with wire_connection(agent) as (_, peer):
        await peer.send(request(1, "test/turn"))
        back = await peer.receive()
        await peer.send(result(back["id"], "from the client"))
        assert await peer.receive() == result(1, "from the client")
    server = only(exporter, SpanKind.SERVER)
    client = only(exporter, SpanKind.CLIENT)
    assert client.parent is not None and server.context is not None
    assert client.parent.span_id == server.context.span_id
    assert client.context is not None and client.context.trace_id == server.context.trace_id


async def test_the_successor_is_the_peer_of_requests_through_envelopes(
    provider: TracerProvider, exporter: InMemorySpanExporter
) -> None:
    builder = instrument(ConnectionBuilder().on_raw_request(echo), tracer_provider=provider)
    async with wire_connection(builder) as (cx, peer):
        await peer.send(request(1, "_proxy/successor", {"method": "session/new", "params": {}}))
        await peer.receive()
        sent = cx.send_raw_request("_x/down", peer=SUCCESSOR)
        assert (await peer.receive())["method"] == "_proxy/successor"
        await peer.send(result(sent.id, None))
        await sent
    incoming = only(exporter, SpanKind.SERVER)
    assert incoming.name == "session/new"
    assert attributes(incoming)["acp.peer"] == "successor"
    assert attributes(incoming)["acp.envelope"] == "_proxy/successor"
    outgoing = only(exporter, SpanKind.CLIENT)
    assert outgoing.name == "_x/down"
    assert attributes(outgoing)["acp.peer"] == "successor"


async def test_off_by_default_connections_make_plain_records_and_slots() -> None:
    """Uninstrumented, the hot paths create the plain classes: nothing is observed."""
    seen: list[type] = []

    async def handle(method: str, params: JsonValue, responder: Responder[JsonValue]) -> None:
        seen.append(type(responder._slot))  # pyright: ignore[reportPrivateUsage]
        responder.respond_raw(None)

    a, b = memory_pair()
    async with (
        ConnectionBuilder().on_raw_request(handle).connect(a),
        ConnectionBuilder().connect(b) as cx,
    ):
        sent = cx.send_raw_request("test/x")
        assert type(sent._record) is PendingRequest  # pyright: ignore[reportPrivateUsage]
        await sent
    assert seen == [ResponseSlot]


async def test_instrumented_connections_make_observed_records_and_slots(
    provider: TracerProvider,
) -> None:
    seen: list[type] = []

    async def handle(method: str, params: JsonValue, responder: Responder[JsonValue]) -> None:
        seen.append(type(responder._slot))  # pyright: ignore[reportPrivateUsage]
        responder.respond_raw(None)

    a, b = memory_pair()
    server = instrument(ConnectionBuilder().on_raw_request(handle), tracer_provider=provider)
    async with (
        server.connect(a),
        instrument(ConnectionBuilder(), tracer_provider=provider).connect(b) as cx,
    ):
        sent = cx.send_raw_request("test/x")
        assert type(sent._record) is ObservedPendingRequest  # pyright: ignore[reportPrivateUsage]
        await sent
    assert seen == [ObservedResponseSlot]


def test_a_builder_takes_one_instrumentation(provider: TracerProvider) -> None:
    builder = instrument(ConnectionBuilder(), tracer_provider=provider)
    with pytest.raises(ValueError, match="already"):
        instrument(builder, tracer_provider=provider)


_OFF_SCRIPT = """
import json, sys
import anyio
import acp_runtime
from acp_runtime import ConnectionBuilder, memory_pair

async def echo(method, params, responder):
    return params

async def main():
    a, b = memory_pair()
    async with ConnectionBuilder().on_raw_request(echo).connect(a), \\
            ConnectionBuilder().connect(b) as cx:
        assert await cx.send_raw_request("test/x", [1]) == [1]

anyio.run(main, backend=sys.argv[1])
loaded = sorted(m for m in sys.modules if m.split(".")[0] == "opentelemetry")
print(json.dumps(loaded))
"""


@pytest.mark.parametrize("backend", ["asyncio", "trio"])
def test_without_instrumentation_opentelemetry_is_never_imported(backend: str) -> None:
    out = subprocess.run(
        [sys.executable, "-c", _OFF_SCRIPT, backend],
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    ).stdout
    assert json.loads(out) == []


_GLOBAL_SCRIPT = """
import sys
import anyio
from opentelemetry import trace
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from acp_runtime import ConnectionBuilder, memory_pair
from acp_runtime.otel import instrument

exporter = InMemorySpanExporter()
provider = TracerProvider()
provider.add_span_processor(SimpleSpanProcessor(exporter))

async def echo(method, params, responder):
    return "ok"

async def exchange(server, client):
    a, b = memory_pair()
    async with server.on_raw_request(echo).connect(a), client.connect(b) as cx:
        await cx.send_raw_request("test/x")

plain = ConnectionBuilder(), ConnectionBuilder()
traced = instrument(ConnectionBuilder()), instrument(ConnectionBuilder())  # before the provider
trace.set_tracer_provider(provider)
anyio.run(exchange, *plain, backend=sys.argv[1])
print(len(exporter.get_finished_spans()))
anyio.run(exchange, *traced, backend=sys.argv[1])
print(sorted(span.kind.name for span in exporter.get_finished_spans()))
"""


@pytest.mark.parametrize("backend", ["asyncio", "trio"])
def test_the_global_provider_gets_spans_only_from_instrumented_builders(backend: str) -> None:
    out = subprocess.run(
        [sys.executable, "-c", _GLOBAL_SCRIPT, backend],
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    ).stdout
    assert out.splitlines() == ["0", "['CLIENT', 'SERVER']"]


def test_without_the_api_installed_the_import_error_names_the_extra() -> None:
    script = (
        "import sys\n"
        "sys.modules['opentelemetry'] = None  # as if not installed\n"
        "import acp_runtime\n"
        "try:\n"
        "    import acp_runtime.otel\n"
        "except ImportError as error:\n"
        "    print(error)\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, check=True, timeout=60
    ).stdout
    assert "acp-typed-runtime[otel]" in out


async def test_responses_settled_on_the_eager_path_end_their_spans(
    provider: TracerProvider,
    exporter: InMemorySpanExporter,
    anyio_backend: str,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Over pipes on asyncio a response settles in the readiness callback, not the loop."""
    eager: list[bool] = []
    settle_eagerly = Connection._settle_eagerly  # pyright: ignore[reportPrivateUsage]

    def spy(self: Connection, data: bytes) -> bool:
        eager.append(settled := settle_eagerly(self, data))
        return settled

    monkeypatch.setattr(Connection, "_settle_eagerly", spy)
    to_server, to_client = os.pipe(), os.pipe()
    server_side = LineTransport(
        FdReceiveStream(to_server[0], close_fd=True), FdSendStream(to_client[1], close_fd=True)
    )
    client_side = LineTransport(
        FdReceiveStream(to_client[0], close_fd=True), FdSendStream(to_server[1], close_fd=True)
    )
    server = ConnectionBuilder().on_raw_request(echo)
    client = instrument(ConnectionBuilder(), tracer_provider=provider)
    async with server.connect(server_side), client.connect(client_side) as cx:
        for n in range(20):
            assert await cx.send_raw_request("test/echo", [n]) == {"echo": [n]}
    spans = exporter.get_finished_spans()
    assert len(spans) == 20
    assert {attributes(span)["acp.outcome"] for span in spans} == {"result"}
    if anyio_backend == "asyncio":
        assert any(eager)


async def test_a_proxy_forwards_inside_the_span_of_what_it_forwards(
    provider: TracerProvider, exporter: InMemorySpanExporter
) -> None:
    """Instrumented builders given to a Proxy: each hop is a span, the downstream request
    a child of the upstream one, and the cancel shows on both."""
    proxy = Proxy(
        upstream=instrument(ConnectionBuilder("agent"), tracer_provider=provider),
        downstream=instrument(ConnectionBuilder("client"), tracer_provider=provider),
    )
    up_ours, up_theirs = memory_pair()
    down_ours, down_theirs = memory_pair()
    async with proxy.connect(up_ours, down_ours):
        client, agent = WirePeer(up_theirs), WirePeer(down_theirs)
        await client.send(request("c-1", "session/prompt", {"sessionId": "s"}))
        forwarded = await agent.receive()
        await client.send(cancel("c-1"))
        assert await agent.receive() == cancel(forwarded["id"])
        await agent.send(error(forwarded["id"], -32800, "Request cancelled"))
        assert (await client.receive())["error"]["code"] == -32800
    upstream = only(exporter, SpanKind.SERVER)
    downstream = only(exporter, SpanKind.CLIENT)
    assert downstream.parent is not None and upstream.context is not None
    assert downstream.parent.span_id == upstream.context.span_id
    assert attributes(upstream)["rpc.jsonrpc.request_id"] == "c-1"
    assert attributes(downstream)["rpc.jsonrpc.request_id"] == str(forwarded["id"])
    for span in (upstream, downstream):
        assert events(span) == [CANCEL_REQUESTED, CANCEL_ANSWERED]
        assert attributes(span)["rpc.jsonrpc.error_code"] == -32800


def test_the_cost_benchmark_runs_every_mode_quickly() -> None:
    """``bench/otel_bench.py --quick`` runs and its JSON parses (no timing asserts)."""
    repo = Path(__file__).resolve().parents[2]
    done = subprocess.run(
        [sys.executable, str(repo / "bench" / "otel_bench.py"), "--quick"],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=repo,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    (line,) = done.stdout.splitlines()
    record = json.loads(line)
    assert record["kind"] == "otel" and record["requests"] == 200
    assert set(record["cpu_us_per_round_trip"]) == {"off", "noop", "sdk"}
    assert all(value > 0 for value in record["cpu_us_per_round_trip"].values())
