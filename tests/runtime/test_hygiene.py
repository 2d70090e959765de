"""JSON-RPC hygiene: what bad input gets, and that the connection survives it (DESIGN.md §4)."""

from __future__ import annotations

import json
import logging
import random
import socket
import tracemalloc
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import anyio
import pytest
from anyio.abc import SocketStream

from acp_runtime import (
    Connection,
    ConnectionBuilder,
    JsonValue,
    RequestError,
    Responder,
    memory_pair,
)
from acp_runtime.testing import WirePeer, wire_connection
from acp_runtime.transports import LineTransport, MemoryTransport, MessageTooLarge

from .helpers import ASK, Answer, Ask, cancel, error, notification, request, result

pytestmark = pytest.mark.anyio


async def echo(method: str, params: JsonValue, responder: Responder[JsonValue]) -> JsonValue:
    return {"method": method, "params": params}


def echo_builder() -> ConnectionBuilder:
    return ConnectionBuilder().on_raw_request(echo)


async def assert_alive(peer: WirePeer) -> None:
    await peer.send(request("alive", "ping"))
    assert await peer.receive() == result("alive", {"method": "ping", "params": None})


async def test_parse_error_gets_32700_with_id_null_and_connection_survives() -> None:
    async with wire_connection(echo_builder()) as (_cx, peer):
        await peer.send(b'{"method": "test", "id": 1, INVALID}')
        assert await peer.receive() == error(
            None, -32700, "Parse error", {"line": '{"method": "test", "id": 1, INVALID}'}
        )
        await peer.send(b"\xff\xfe not utf-8")
        reply = await peer.receive()
        assert reply["id"] is None and reply["error"]["code"] == -32700
        await assert_alive(peer)


@pytest.mark.parametrize(
    "message",
    [
        17,
        "text",
        None,
        {"jsonrpc": "2.0", "method": 5, "id": 1},
        {"jsonrpc": "1.0", "method": "x", "id": 1},
        {"method": "x", "id": 1},
        {"jsonrpc": "2.0", "method": "x", "id": 1, "params": 3},
        {"jsonrpc": "2.0", "method": "x", "id": 1.5},
        {"jsonrpc": "2.0", "method": "x", "id": True},
        {"jsonrpc": "2.0", "method": "x", "id": {"a": 1}},
        {"jsonrpc": "2.0", "method": "x", "id": 1, "result": 1},
        [],
        [{"jsonrpc": "2.0", "method": "x", "id": 1}],
    ],
    ids=[
        "number",
        "string",
        "null",
        "method-not-string",
        "wrong-version",
        "no-version",
        "scalar-params",
        "float-id",
        "bool-id",
        "object-id",
        "method-and-result",
        "empty-batch",
        "batch",
    ],
)
async def test_invalid_request_gets_32600_with_id_null(message: JsonValue) -> None:
    async with wire_connection(echo_builder()) as (_cx, peer):
        await peer.send(message)
        reply = await peer.receive()
        assert reply["id"] is None
        assert reply["error"]["code"] == -32600 and reply["error"]["message"] == "Invalid request"
        await assert_alive(peer)


@pytest.mark.parametrize(
    "message",
    [
        {"jsonrpc": "2.0", "id": 99, "result": None, "error": {"code": 1, "message": "m"}},
        {"jsonrpc": "2.0", "result": 1},
        {"jsonrpc": "2.0", "id": [1], "error": {"code": 1, "message": "m"}},
    ],
    ids=["result-and-error", "no-id", "array-id"],
)
async def test_malformed_responses_are_never_answered(message: JsonValue) -> None:
    async with wire_connection(echo_builder()) as (_cx, peer):
        await peer.send(message)
        await peer.receive_nothing_until_barrier()
        await assert_alive(peer)


async def test_method_not_found_gets_32601_with_the_method_as_data() -> None:
    async with wire_connection(ConnectionBuilder()) as (_cx, peer):
        await peer.send(request(1, "unknown/request"))
        assert await peer.receive() == error(1, -32601, "Method not found", "unknown/request")


async def test_invalid_params_get_32602_with_a_summary_of_validation_errors() -> None:
    async def handle(params: Ask, responder: Responder[Answer]) -> Answer:
        return Answer(text=params.question)

    async with wire_connection(ConnectionBuilder("agent").on_request(ASK, handle)) as (_cx, peer):
        await peer.send(request(3, "test/ask", {"question": 12}))
        reply = await peer.receive()
        assert reply["id"] == 3 and reply["error"]["code"] == -32602
        assert reply["error"]["message"] == "Invalid params"
        [item] = reply["error"]["data"]["errors"]
        assert item["loc"] == ["question"] and item["type"] == "string_type" and item["msg"]
        await peer.send(request(4, "test/ask"))  # params missing entirely
        reply = await peer.receive()
        assert reply["id"] == 4 and reply["error"]["code"] == -32602
        await peer.send(request(5, "test/ask", {"question": "ok"}))
        assert await peer.receive() == result(5, {"text": "ok"})


async def test_handler_crash_gets_32603_without_traceback_on_the_wire(
    caplog: pytest.LogCaptureFixture,
) -> None:
    async def crash(method: str, params: JsonValue, responder: Responder[JsonValue]) -> JsonValue:
        raise KeyError("secret-detail")

    async with wire_connection(ConnectionBuilder().on_raw_request(crash)) as (_cx, peer):
        with caplog.at_level(logging.ERROR, logger="acp_runtime"):
            await peer.send(request(1, "x"))
            reply = await peer.receive()
        assert reply == error(1, -32603, "Internal error in x")
        assert "secret-detail" in caplog.text  # logged locally, with the traceback
        assert any(record.exc_info for record in caplog.records)


async def test_handler_raising_request_error_answers_with_it() -> None:
    async def refuse(method: str, params: JsonValue, responder: Responder[JsonValue]) -> JsonValue:
        raise RequestError(-32002, "Resource not found", {"uri": "file:///x"})

    async with wire_connection(ConnectionBuilder().on_raw_request(refuse)) as (_cx, peer):
        await peer.send(request(1, "x"))
        assert await peer.receive() == error(1, -32002, "Resource not found", {"uri": "file:///x"})


@pytest.mark.parametrize("request_id", [0, "5", 5, None, "", -1, 2**70], ids=repr)
async def test_ids_of_any_json_type_are_echoed_exactly(request_id: JsonValue) -> None:
    async with wire_connection(echo_builder()) as (_cx, peer):
        await peer.send(request(request_id, "m"))
        reply = await peer.receive()
        assert "id" in reply and reply["id"] == request_id and type(reply["id"]) is type(request_id)


async def test_notifications_never_get_replies_even_when_failing() -> None:
    async def crash(method: str, params: JsonValue, cx: Any) -> None:
        raise RuntimeError("boom")

    async def handle(params: Ask, responder: Responder[Answer]) -> None:
        return None

    builder = ConnectionBuilder().on_raw_notification(crash)
    builder.on_request(ASK, handle)
    from .helpers import NOTE, Note

    async def on_note(params: Note, cx: Any) -> None:
        raise RequestError.internal_error()

    builder.on_notification(NOTE, on_note)
    async with wire_connection(builder) as (_cx, peer):
        await peer.send(notification("any/thing", {"a": 1}))
        await peer.send(notification("test/note", {"text": 1}))  # invalid params
        await peer.send(notification("test/note", {"text": "x"}))  # handler raises
        await peer.receive_nothing_until_barrier()


async def test_responses_with_unknown_ids_are_logged_and_ignored(
    caplog: pytest.LogCaptureFixture,
) -> None:
    async with wire_connection(ConnectionBuilder()) as (cx, peer):
        sent = cx.send_raw_request("x")
        await peer.receive()
        with caplog.at_level(logging.WARNING, logger="acp_runtime"):
            for unknown in ("never-sent", str(sent.id), 12345, None, True):
                await peer.send(result(unknown, "stray"))
            await peer.send(error(None, -32700, "Parse error"))
            await peer.receive_nothing_until_barrier()
        assert caplog.text.count("unknown request id") == 5
        structured = [r for r in caplog.records if "unknown request id" in r.getMessage()]
        assert [r.__dict__["acp_request_id"] for r in structured] == [
            "never-sent",
            str(sent.id),
            12345,
            None,
            None,
        ]
        assert {r.name for r in caplog.records} <= {"acp_runtime._connection"}
        assert "malformed response id" in caplog.text  # ``true`` is not an id at all
        assert cx.pending_request_count == 1
        await peer.send(result(sent.id, "real"))
        with anyio.fail_after(5):
            assert await sent == "real"
        await peer.send(result(sent.id, "duplicate"))  # second answer: unknown now
        await peer.receive_nothing_until_barrier()


class _TooLargeOnMarker:
    """A transport that reports ``MessageTooLarge`` for messages starting with ``HUGE``,
    the way a framing transport does after skipping an over-limit line."""

    def __init__(self, inner: MemoryTransport) -> None:
        self._inner = inner

    async def receive(self) -> bytes:
        data = await self._inner.receive()
        if data.startswith(b"HUGE"):
            raise MessageTooLarge(1024, data[:16])
        return data

    async def send(self, message: bytes) -> None:
        await self._inner.send(message)

    async def aclose(self) -> None:
        await self._inner.aclose()


async def test_message_too_large_gets_a_clear_error_with_id_null_and_reading_continues() -> None:
    ours, theirs = memory_pair()
    async with echo_builder().connect(_TooLargeOnMarker(ours)) as cx:
        peer = WirePeer(theirs)
        await peer.send(b'HUGE{"jsonrpc":"2.0","id":1,"method":"x","params":"...')
        assert await peer.receive() == error(
            None, -32600, "Invalid request", {"reason": "message_too_large", "limit": 1024}
        )
        await assert_alive(peer)
        assert not cx.is_incoming_closed


async def test_result_that_is_not_json_serializable_becomes_32603() -> None:
    async def bad(method: str, params: JsonValue, responder: Responder[JsonValue]) -> Any:
        return {"set": {1, 2}} if method == "x" else await echo(method, params, responder)

    async with wire_connection(ConnectionBuilder().on_raw_request(bad)) as (_cx, peer):
        await peer.send(request(1, "x"))
        assert await peer.receive() == error(1, -32603, "Internal error in x")
        await assert_alive(peer)


def _junk_messages(seed: int, count: int) -> list[bytes]:
    """Deterministic junk: random bytes, truncated JSON and structurally odd messages."""
    rng = random.Random(seed)
    atoms: list[Any] = [None, True, 0, -1, 1.5, "", "x", [], {}, [1], {"a": 1}, "$/cancel_request"]
    keys = ["jsonrpc", "id", "method", "params", "result", "error", "requestId"]
    messages: list[bytes] = []
    for _ in range(count):
        kind = rng.randrange(3)
        if kind == 0:
            messages.append(bytes(rng.randrange(256) for _ in range(rng.randrange(1, 40))))
        else:
            value: dict[str, Any] = {
                k: rng.choice(atoms) for k in rng.sample(keys, rng.randrange(1, 6))
            }
            text = json.dumps(value)
            messages.append(
                text[: rng.randrange(1, len(text) + 1)].encode() if kind == 1 else text.encode()
            )
    return messages


async def test_junk_input_never_breaks_the_connection_and_only_gets_id_null_or_own_id_replies() -> (
    None
):
    """Whatever arrives, replies carry ``id:null`` or the id of a request that was sent, and
    the connection keeps answering."""
    junk = _junk_messages(seed=3, count=400)
    async with wire_connection(echo_builder()) as (_cx, peer):
        for data in junk:
            await peer.send(data)
        replies = await peer.barrier()
        sent_ids: set[str] = set()
        for data in junk:
            try:
                value = json.loads(data)
            except ValueError:
                continue
            if isinstance(value, dict) and "id" in value:
                sent_ids.add(json.dumps(value["id"]))
        for reply in replies:
            assert reply["jsonrpc"] == "2.0"
            assert reply["id"] is None or json.dumps(reply["id"]) in sent_ids
            assert ("result" in reply) != ("error" in reply)
        await assert_alive(peer)


@pytest.mark.parametrize(
    "batch",
    [
        [request(1, "x"), request(2, "y")],
        [request(5, "x"), cancel(5)],  # GAP-23: not dispatched at all, so nothing to cancel
        [notification("n"), notification("m")],
        [{"jsonrpc": "2.0", "id": 9, "result": "a response"}],
    ],
    ids=["requests", "request-then-cancel", "notifications", "responses"],
)
async def test_batches_get_one_clear_32600_and_no_entry_is_dispatched(batch: list[Any]) -> None:
    """Batches are not supported (GAP-20, GAP-23): whatever the array holds, it gets one
    -32600 with ``id: null`` that says so, no entry reaches a handler (so no entry is
    answered or routed), and the connection goes on."""
    calls: list[str] = []

    async def on_request(
        method: str, params: JsonValue, responder: Responder[JsonValue]
    ) -> JsonValue:
        calls.append(method)
        return method

    async def on_notification(method: str, params: JsonValue, cx: Connection) -> None:
        calls.append(method)

    builder = ConnectionBuilder().on_raw_request(on_request).on_raw_notification(on_notification)
    async with wire_connection(builder) as (cx, peer):
        await peer.send(batch)
        assert await peer.receive() == error(
            None, -32600, "Invalid request", "batches are not supported"
        )
        await peer.receive_nothing_until_barrier()
        assert calls == []
        assert cx.incoming_request_count == 0
        await peer.send(request(1, "after"))
        assert await peer.receive() == result(1, "after")


@asynccontextmanager
async def framed_connection(builder: ConnectionBuilder) -> AsyncIterator[SocketStream]:
    """A connection over the real newline framing; yields the peer's raw socket."""
    ours, theirs = socket.socketpair()
    ours_stream = await SocketStream.from_socket(ours)
    theirs_stream = await SocketStream.from_socket(theirs)
    async with theirs_stream, builder.connect(LineTransport(ours_stream, ours_stream)):
        yield theirs_stream


async def receive_line(stream: SocketStream, buffer: bytearray) -> Any:
    with anyio.fail_after(5):
        while b"\n" not in buffer:
            buffer += await stream.receive()
    line, _, rest = bytes(buffer).partition(b"\n")
    buffer[:] = rest
    return json.loads(line)


async def test_rel6_a_byte_order_mark_at_the_start_and_white_space_lines_get_no_error() -> None:
    async with framed_connection(echo_builder()) as peer:
        buffer = bytearray()
        for byte in b"\xef\xbb\xbf":  # one byte per write: the mark may arrive in pieces
            await peer.send(bytes([byte]))
            await anyio.sleep(0.01)
        await peer.send(b'{"jsonrpc":"2.0","id":1,"method":"ping"}\n')
        assert await receive_line(peer, buffer) == result(1, {"method": "ping", "params": None})
        await peer.send(b"   \n\t\r\n \r\n\n")  # white space only: skipped like empty lines
        await peer.send(b'\xef\xbb\xbf{"jsonrpc":"2.0","id":2,"method":"ping"}\n')
        reply = await receive_line(peer, buffer)  # the next reply: no error for the blanks
        assert (reply["id"], reply["error"]["code"]) == (None, -32700)  # not at the start
        await peer.send(b' {"jsonrpc":"2.0","id":3,"method":"ping"} \n')  # JSON may be padded
        assert (await receive_line(peer, buffer))["id"] == 3


MIB = 1024 * 1024
BAD_LINE = b'{"jsonrpc":"2.0","id":1,"method":"ping","params":["' + b"x" * (16 * MIB)
"""An unparsable 16 MiB line: its string is never closed."""


async def test_rel5_a_bad_line_is_refused_without_decoding_its_text() -> None:
    """Answering an unparsable 16 MiB line holds the line (the test's own bytes) and a
    200-character quote: it is parsed from its bytes, never decoded whole (16 MiB)."""
    async with wire_connection(echo_builder()) as (_cx, peer):
        await assert_alive(peer)
        tracemalloc.start()
        try:
            await peer.send(BAD_LINE)
            reply = await peer.receive()
            peak = tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()
        assert reply["error"]["code"] == -32700
        assert reply["error"]["data"]["line"] == BAD_LINE[:200].decode()
        assert peak < MIB, f"{peak / MIB:.1f} MiB for a 16 MiB line"


async def send_in_pieces(stream: SocketStream, data: bytes, piece: int = 65536) -> None:
    """Send ``data`` so that the sending side never holds a copy of it all (asyncio's
    transport buffers what the socket does not take at once)."""
    for start in range(0, len(data), piece):
        await stream.send(data[start : start + piece])


async def test_rel5_a_bad_line_through_the_framing_costs_its_size_not_a_copy() -> None:
    """Over the newline framing the line is read into a buffer that becomes the message
    without a copy: its size plus the buffer's growth headroom (an eighth, allocated but
    never written), never a second 16 MiB."""
    size, line = len(BAD_LINE), BAD_LINE + b"\n"
    async with framed_connection(echo_builder()) as peer:
        tracemalloc.start()
        try:
            with anyio.fail_after(10):
                async with anyio.create_task_group() as tg:
                    tg.start_soon(send_in_pieces, peer, line)
                    reply = await receive_line(peer, bytearray())
            peak = tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()
        assert reply["error"]["code"] == -32700
        assert peak < size + size // 8 + 2 * MIB, f"{peak / MIB:.1f} MiB for a 16 MiB line"
