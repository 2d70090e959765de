"""The writer's batching (a performance fix from the benchmark work): a backlog of queued
messages reaches a transport that has ``send_many`` in one call, in order, and the
outbox keeps its FIFO and close semantics."""

from __future__ import annotations

from collections.abc import Sequence

import anyio
import anyio.abc
import pytest

from acp_runtime import ConnectionBuilder
from acp_runtime._outbox import Outbox
from acp_runtime._settlement import OutboxClosed
from acp_runtime.transports import LineTransport


class RecordingTransport:
    """Records each write; receive waits until closed (then EOF)."""

    def __init__(self) -> None:
        self.writes: list[list[bytes]] = []
        self.closed = anyio.Event()

    async def receive(self) -> bytes:
        await self.closed.wait()
        raise anyio.EndOfStream

    async def send(self, message: bytes) -> None:
        self.writes.append([message])

    async def send_many(self, messages: Sequence[bytes]) -> None:
        self.writes.append(list(messages))

    async def aclose(self) -> None:
        self.closed.set()


@pytest.mark.anyio
async def test_a_backlog_goes_out_in_one_send_many_call_in_order() -> None:
    transport = RecordingTransport()
    async with ConnectionBuilder().connect(transport) as cx:
        for i in range(3):
            cx.send_raw_notification("_note", {"i": i})  # queued without yielding
    assert len(transport.writes) == 1
    assert [b'"i":0' in m for m in transport.writes[0]] == [True, False, False]
    assert [m.count(b"_note") for m in transport.writes[0]] == [1, 1, 1]
    assert transport.writes[0][2].endswith(b'{"i":2}}')


@pytest.mark.anyio
async def test_outbox_is_fifo_bounded_per_batch_and_drains_after_close() -> None:
    outbox = Outbox()
    for message in (b"aaaa", b"bbbb", b"cc"):
        outbox.put(message)
    assert await outbox.take(max_bytes=8) == [b"aaaa", b"bbbb"]
    outbox.close()
    with pytest.raises(OutboxClosed):
        outbox.put(b"late")
    assert await outbox.take(max_bytes=1) == [b"cc"]  # at least one, even over the limit
    assert await outbox.take(max_bytes=8) == []


@pytest.mark.anyio
async def test_line_transport_send_many_writes_one_frame_per_message() -> None:
    send, receive = anyio.create_memory_object_stream[bytes](10)
    sink = _ByteSink(send)
    transport = LineTransport(_NoInput(), sink)
    await transport.send_many([b'{"a":1}', b'{"b":2}'])
    assert receive.receive_nowait() == b'{"a":1}\n{"b":2}\n'
    with pytest.raises(ValueError):
        await transport.send_many([b"{}", b"bad\nline"])
    send.close()
    receive.close()


class _ByteSink(anyio.abc.ByteSendStream):
    def __init__(self, stream: anyio.abc.ObjectSendStream[bytes]) -> None:
        self._stream = stream

    async def send(self, item: bytes) -> None:
        await self._stream.send(item)

    async def aclose(self) -> None:
        await self._stream.aclose()


class _NoInput(anyio.abc.ByteReceiveStream):
    async def receive(self, max_bytes: int = 65536) -> bytes:
        raise anyio.EndOfStream

    async def aclose(self) -> None:
        pass
