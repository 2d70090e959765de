"""Scripted byte streams for framing tests: exact control over read boundaries."""

from __future__ import annotations

from collections.abc import Iterable

import anyio
import anyio.lowlevel
from anyio.abc import ByteReceiveStream, ByteSendStream, ObjectReceiveStream


class ScriptedReceiveStream(ByteReceiveStream):
    """Returns the given chunks one per ``receive`` (each a checkpoint), then EOF."""

    def __init__(self, chunks: Iterable[bytes]) -> None:
        self._chunks = iter(chunks)
        self.closed = False

    async def receive(self, max_bytes: int = 65536) -> bytes:
        await anyio.lowlevel.checkpoint()
        if self.closed:
            raise anyio.ClosedResourceError
        for chunk in self._chunks:
            assert len(chunk) <= max_bytes, "a real stream never returns more than asked"
            return chunk
        raise anyio.EndOfStream

    async def aclose(self) -> None:
        self.closed = True


class SlowSendStream(ByteSendStream):
    """Writes each item in two halves with a checkpoint between, like a partial write."""

    def __init__(self) -> None:
        self.data = bytearray()
        self.send_calls = 0
        self.closed = False

    async def send(self, item: bytes) -> None:
        if self.closed:
            raise anyio.ClosedResourceError
        self.send_calls += 1
        half = len(item) // 2
        self.data += item[:half]
        await anyio.lowlevel.checkpoint()
        self.data += item[half:]

    async def aclose(self) -> None:
        self.closed = True


class QueueReceiveStream(ByteReceiveStream):
    """Bytes fed by a test through a memory object stream, so a reader can be parked."""

    def __init__(self, source: ObjectReceiveStream[bytes]) -> None:
        self._source = source

    async def receive(self, max_bytes: int = 65536) -> bytes:
        return await self._source.receive()

    async def aclose(self) -> None:
        await self._source.aclose()
