"""Regressions for runtime bugs the reliability work found (each crashed or wedged a connection).

* Deeply nested JSON made the parser raise ``RecursionError``, which escaped the
  dispatch loop and killed the connection.
* A lone surrogate (``"\\ud800"``, legal JSON escape, not encodable as UTF-8) in a
  request id sent the reply path into unbounded recursion, killing the connection.
* ``NaN``/``Infinity`` were accepted and echoed, putting invalid JSON on the wire.
* A request whose params could not be encoded stayed in the pending table forever and
  later sent a ``$/cancel_request`` for an id the peer never saw.
* With a wire trace on, deep nesting (``RecursionError`` in the trace record) or a lone
  surrogate (not writable to a UTF-8 trace file) killed the connection.
"""

from __future__ import annotations

import gc
import json
from pathlib import Path
from typing import Any

import pytest

from acp_runtime import ConnectionBuilder, JsonValue, Responder, memory_pair
from acp_runtime.testing import WirePeer, wire_connection
from acp_runtime.tracing import TracingTransport, jsonl_sink

pytestmark = pytest.mark.anyio


async def echo(method: str, params: JsonValue, responder: Responder[JsonValue]) -> JsonValue:
    return {"params": params}


async def assert_alive(peer: WirePeer) -> None:
    await peer.send({"jsonrpc": "2.0", "id": "alive", "method": "ping"})
    assert await peer.receive() == {"jsonrpc": "2.0", "id": "alive", "result": {"params": None}}


async def receive_strict(peer: WirePeer) -> Any:
    """The next message, parsed as strict JSON (no NaN/Infinity)."""
    message = await peer.receive()
    json.dumps(message, allow_nan=False)
    return message


@pytest.mark.parametrize("depth", [1_000, 100_000])
async def test_deeply_nested_json_gets_a_parse_error_and_the_connection_survives(
    depth: int,
) -> None:
    line = b'{"jsonrpc":"2.0","id":1,"method":"echo","params":' + b"[" * depth + b"]" * depth + b"}"
    async with wire_connection(ConnectionBuilder().on_raw_request(echo)) as (_cx, peer):
        await peer.send(line)
        reply = await peer.receive()
        assert (reply["id"], reply["error"]["code"]) == (None, -32700)
        await assert_alive(peer)


async def test_a_result_nested_too_deeply_to_encode_gets_internal_error() -> None:
    async def deep(method: str, params: JsonValue, responder: Responder[JsonValue]) -> JsonValue:
        value: JsonValue = []
        for _ in range(100_000):
            value = [value]
        return value

    async with wire_connection(ConnectionBuilder().on_raw_request(deep)) as (_cx, peer):
        await peer.send({"jsonrpc": "2.0", "id": 7, "method": "deep"})
        assert await peer.receive() == {
            "jsonrpc": "2.0",
            "id": 7,
            "error": {"code": -32603, "message": "Internal error in deep"},
        }


async def test_lone_surrogates_in_id_and_params_are_echoed_escaped() -> None:
    async with wire_connection(ConnectionBuilder().on_raw_request(echo)) as (_cx, peer):
        await peer.send(b'{"jsonrpc":"2.0","id":"\\ud800","method":"echo","params":["\\udfff x"]}')
        reply = await peer.receive()
        assert reply == {"jsonrpc": "2.0", "id": "\ud800", "result": {"params": ["\udfff x"]}}
        await peer.send(b'{"jsonrpc":"2.0","id":"\\udc00","method":"nope\\ud800"}')
        assert (await peer.receive())["id"] == "\udc00"
        await assert_alive(peer)


@pytest.mark.parametrize("literal", [b"NaN", b"Infinity", b"-Infinity"])
async def test_non_json_number_literals_get_a_parse_error(literal: bytes) -> None:
    async with wire_connection(ConnectionBuilder().on_raw_request(echo)) as (_cx, peer):
        await peer.send(b'{"jsonrpc":"2.0","id":1,"method":"echo","params":[' + literal + b"]}")
        reply = await receive_strict(peer)
        assert (reply["id"], reply["error"]["code"]) == (None, -32700)
        await assert_alive(peer)


async def test_a_number_that_overflows_to_infinity_is_never_echoed_as_invalid_json() -> None:
    async with wire_connection(ConnectionBuilder().on_raw_request(echo)) as (_cx, peer):
        await peer.send(b'{"jsonrpc":"2.0","id":1,"method":"echo","params":[1e400]}')
        reply = await receive_strict(peer)
        assert (reply["id"], reply["error"]["code"]) == (1, -32603)
        await assert_alive(peer)


@pytest.mark.parametrize("params", [{"set": {1}}, [float("nan")]], ids=["set", "nan"])
async def test_unencodable_request_params_raise_at_send_and_leave_nothing_behind(
    params: Any,
) -> None:
    async with wire_connection(ConnectionBuilder()) as (cx, peer):
        with pytest.raises((TypeError, ValueError)):
            cx.send_raw_request("x", params)
        gc.collect()  # the unconsumed handle's finalizer must not send a stray cancel
        assert cx.pending_request_count == 0
        await peer.receive_nothing_until_barrier()


async def test_a_wire_trace_survives_hostile_input_and_stays_one_json_record_per_line(
    tmp_path: Path,
) -> None:
    hostile = [
        b'{"jsonrpc":"2.0","id":"\\ud800","method":"echo","params":["\\udfff"]}',
        b'{"jsonrpc":"2.0","id":2,"method":"echo","params":' + b"[" * 5000 + b"]" * 5000 + b"}",
        b'{"jsonrpc":"2.0","id":3,"method":"echo","params":["\xff\xfe"]}',
    ]
    trace_path = tmp_path / "wire.jsonl"
    ours, theirs = memory_pair()
    with trace_path.open("w", encoding="utf-8") as trace:
        async with (
            ConnectionBuilder()
            .on_raw_request(echo)
            .connect(TracingTransport(ours, jsonl_sink(trace)))
        ):
            peer = WirePeer(theirs)
            for line in hostile:
                await peer.send(line)
                await peer.receive()
            await assert_alive(peer)
    records = [json.loads(line) for line in trace_path.read_text(encoding="utf-8").splitlines()]
    assert len(records) == 2 * (len(hostile) + 1)
