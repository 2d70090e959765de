"""A 64 MiB line through real pipes, framing and connection: a clear error, bounded memory.

A bad line under the limit (issue #16, item 5) costs its own size, not a copy of it
and its decoded text.

The peer writes the line in 1 MiB pieces into an OS pipe; tracemalloc's peak over the
whole transfer shows what the receiving side buffered. With a line that can be skipped
(its newline comes) the connection answers -32600 ``message_too_large`` and keeps
serving; with one that cannot (EOF first) it answers, then closes cleanly and settles
its pending requests.
"""

from __future__ import annotations

import json
import os
import tracemalloc
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any

import anyio
import pytest

from acp_runtime import Connection, ConnectionBuilder, JsonValue, RequestError, Responder
from acp_runtime._framing import READ_CHUNK_BYTES, LineReader
from acp_runtime._stdio import FdReceiveStream, FdSendStream
from acp_runtime.transports import DEFAULT_MAX_MESSAGE_BYTES, LineTransport

pytestmark = pytest.mark.anyio

MIB = 1024 * 1024
LINE_BYTES = 64 * MIB
PIECE = b"x" * MIB


async def echo(method: str, params: JsonValue, responder: Responder[JsonValue]) -> JsonValue:
    return {"params": params}


@dataclass
class PipePeer:
    """The far end of two OS pipes: writes raw bytes, reads the connection's lines."""

    to_cx: FdSendStream
    from_cx: LineReader

    async def receive(self) -> Any:
        with anyio.fail_after(10):
            return json.loads(await self.from_cx.receive())

    async def write_huge_line(self, total: int, *, newline: bool) -> None:
        await self.to_cx.send(b'{"jsonrpc":"2.0","id":1,"method":"echo","params":["')
        for _ in range(total // MIB):
            await self.to_cx.send(PIECE)
        if newline:
            await self.to_cx.send(b'"]}\n')


@asynccontextmanager
async def over_pipes(limit: int) -> AsyncIterator[tuple[Connection, PipePeer]]:
    in_r, in_w = os.pipe()
    out_r, out_w = os.pipe()
    transport = LineTransport(
        FdReceiveStream(in_r, close_fd=True),
        FdSendStream(out_w, close_fd=True),
        max_message_bytes=limit,
    )
    to_cx = FdSendStream(in_w, close_fd=True)
    from_cx = FdReceiveStream(out_r, close_fd=True)
    try:
        async with ConnectionBuilder().on_raw_request(echo).connect(transport) as cx:
            yield cx, PipePeer(to_cx, LineReader(from_cx))
    finally:
        await to_cx.aclose()
        await from_cx.aclose()


@asynccontextmanager
async def peak_heap() -> AsyncIterator[list[int]]:
    """Yields a list that holds tracemalloc's peak (bytes) once the block ends."""
    result: list[int] = []
    tracemalloc.start()
    try:
        yield result
    finally:
        result.append(tracemalloc.get_traced_memory()[1])
        tracemalloc.stop()


def bounded_by(limit: int) -> int:
    """Most the receiving side may hold for any line: the limit, the bytearray's growth
    headroom (CPython over-allocates up to 1/8), a few reads, and 1 MiB for the rest."""
    return limit + limit // 8 + 4 * READ_CHUNK_BYTES + MIB


def too_large(limit: int, request_id: int | None = 1) -> dict[str, Any]:
    """The -32600 for the huge request, which names its id (1) before its params."""
    return {
        "jsonrpc": "2.0",
        "id": request_id,
        "error": {
            "code": -32600,
            "message": "Invalid request",
            "data": {"reason": "message_too_large", "limit": limit},
        },
    }


async def test_a_64_mib_line_over_a_1_mib_limit_is_refused_in_bounded_memory() -> None:
    limit = MIB
    async with over_pipes(limit) as (cx, peer):
        async with peak_heap() as peak:
            await peer.write_huge_line(LINE_BYTES, newline=True)
            assert await peer.receive() == too_large(limit)
        await peer.to_cx.send(b'{"jsonrpc":"2.0","id":2,"method":"echo"}\n')
        assert await peer.receive() == {"jsonrpc": "2.0", "id": 2, "result": {"params": None}}
        assert not cx.is_incoming_closed
    print(f"\n[oversized] 64 MiB line, 1 MiB limit: peak heap {peak[0] / MIB:.2f} MiB")
    assert peak[0] < bounded_by(limit)


async def test_a_line_just_over_the_default_64_mib_limit_is_refused_in_bounded_memory() -> None:
    async with over_pipes(DEFAULT_MAX_MESSAGE_BYTES) as (_cx, peer):
        async with peak_heap() as peak:
            await peer.write_huge_line(LINE_BYTES, newline=True)
            assert await peer.receive() == too_large(DEFAULT_MAX_MESSAGE_BYTES)
        await peer.to_cx.send(b'{"jsonrpc":"2.0","id":2,"method":"echo"}\n')
        assert (await peer.receive())["id"] == 2
    print(f"\n[oversized] 64 MiB + 54 B line, 64 MiB limit: peak heap {peak[0] / MIB:.1f} MiB")
    assert peak[0] < bounded_by(DEFAULT_MAX_MESSAGE_BYTES)


async def test_a_bad_60_mib_line_under_the_limit_costs_its_size_not_twice() -> None:
    size = 60 * MIB
    async with over_pipes(DEFAULT_MAX_MESSAGE_BYTES) as (_cx, peer):
        async with peak_heap() as peak:
            await peer.write_huge_line(size, newline=False)  # its string never ends
            await peer.to_cx.send(b"\n")
            reply = await peer.receive()
        assert reply["id"] is None and reply["error"]["code"] == -32700
        await peer.to_cx.send(b'{"jsonrpc":"2.0","id":2,"method":"echo"}\n')
        assert (await peer.receive())["id"] == 2
    print(f"\n[oversized] bad 60 MiB line, 64 MiB limit: peak heap {peak[0] / MIB:.1f} MiB")
    # The line, its buffer's growth headroom (an eighth, allocated but never written, so
    # not resident) and a few reads. A copy of it or its decoded text would be 60 MiB more.
    assert peak[0] < size + size // 8 + 4 * READ_CHUNK_BYTES + MIB


async def test_an_endless_line_gets_the_error_then_a_clean_close_settling_pending_requests() -> (
    None
):
    limit = MIB
    async with over_pipes(limit) as (cx, peer):
        pending = cx.send_raw_request("agent/slow")
        assert (await peer.receive())["method"] == "agent/slow"
        async with peak_heap() as peak:
            await peer.write_huge_line(LINE_BYTES, newline=False)
            await peer.to_cx.aclose()  # EOF before the newline: the stream cannot resync
            assert await peer.receive() == too_large(limit)
            with anyio.fail_after(5):
                await cx.wait_incoming_closed()
        with pytest.raises(RequestError) as failure:
            with anyio.fail_after(5):
                await pending
        assert failure.value.is_connection_closed
        assert cx.pending_request_count == 0
    assert peak[0] < bounded_by(limit)
