"""Wire trace: every message in and out reaches the sink, in order, with direction."""

from __future__ import annotations

import io
import json
import logging
from itertools import count

import anyio
import pytest
from byte_streams import ScriptedReceiveStream, SlowSendStream

from acp_runtime.tracing import TraceEvent, TraceSink, TracingTransport, jsonl_sink, logging_sink
from acp_runtime.transports import LineTransport, MessageTooLarge


def traced(chunks: list[bytes], sink: TraceSink, limit: int = 1024) -> TracingTransport:
    """A traced line transport whose clock reads 100.0, 101.0, ... on successive events."""
    inner = LineTransport(ScriptedReceiveStream(chunks), SlowSendStream(), max_message_bytes=limit)
    ticks = count(100)
    return TracingTransport(inner, sink, clock=lambda: float(next(ticks)))


@pytest.mark.anyio
async def test_trace_records_both_directions_in_order_with_timestamps() -> None:
    events: list[TraceEvent] = []
    transport = traced([b'{"id":1,"method":"initialize"}\n'], events.append)
    with anyio.fail_after(5):
        request = await transport.receive()
        await transport.send(b'{"id":1,"result":{}}')
    assert request == b'{"id":1,"method":"initialize"}'
    assert events == [
        TraceEvent(100.0, "in", b'{"id":1,"method":"initialize"}'),
        TraceEvent(101.0, "out", b'{"id":1,"result":{}}'),
    ]


@pytest.mark.anyio
async def test_trace_records_a_skipped_over_limit_message_and_a_failed_send() -> None:
    events: list[TraceEvent] = []
    transport = traced([b"y" * 40 + b"\n"], events.append, limit=8)
    with anyio.fail_after(5):
        with pytest.raises(MessageTooLarge):
            await transport.receive()
        await transport.aclose()
        with pytest.raises(anyio.ClosedResourceError):
            await transport.send(b"{}")
    assert [(e.direction, e.message, e.error) for e in events] == [
        ("in", b"y" * 8, "message_too_large"),
        ("out", b"{}", "ClosedResourceError"),
    ]


@pytest.mark.anyio
async def test_jsonl_sink_writes_one_json_line_per_message_embedding_valid_json() -> None:
    out = io.StringIO()
    transport = traced([b'{"method":"session/update"}\n', b"\xffnot json\n"], jsonl_sink(out))
    with anyio.fail_after(5):
        await transport.receive()
        await transport.receive()
        await transport.send(b'{"id":2}')
    records = [json.loads(line) for line in out.getvalue().splitlines()]
    assert records == [
        {"time": 100.0, "dir": "in", "msg": {"method": "session/update"}},
        {"time": 101.0, "dir": "in", "raw": "\\xffnot json"},
        {"time": 102.0, "dir": "out", "msg": {"id": 2}},
    ]


@pytest.mark.anyio
async def test_logging_sink_logs_arrows_at_the_chosen_level(
    caplog: pytest.LogCaptureFixture,
) -> None:
    logger = logging.getLogger("acp.test.wire")
    transport = traced([b'{"a":1}\n'], logging_sink(logger, logging.INFO))
    with caplog.at_level(logging.INFO, logger="acp.test.wire"), anyio.fail_after(5):
        await transport.receive()
        await transport.send(b'{"b":2}')
    assert [r.getMessage() for r in caplog.records] == [
        '<- {"time": 100.0, "dir": "in", "msg": {"a": 1}}',
        '-> {"time": 101.0, "dir": "out", "msg": {"b": 2}}',
    ]
