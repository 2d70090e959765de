"""In-memory transports: two connected ends over anyio memory object streams.

For tests and in-process wiring (a proxy chain in one process). Messages are whole
JSON texts, exactly as a framed transport would deliver them, so the connection code
under test is the same one that runs over pipes.
"""

from __future__ import annotations

import math

import anyio
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream


class MemoryTransport:
    """One end of an in-memory message pipe (implements :class:`~acp_runtime._transport.Transport`).

    :meth:`close_send` ends only this end's outgoing direction, so the other end sees a
    clean EOF while this end can still read (a half-close, like closing a pipe's stdin).
    """

    def __init__(
        self, send: MemoryObjectSendStream[bytes], receive: MemoryObjectReceiveStream[bytes]
    ) -> None:
        self._send = send
        self._receive = receive

    async def receive(self) -> bytes:
        try:
            return await self._receive.receive()
        except anyio.ClosedResourceError:
            raise anyio.EndOfStream from None

    async def send(self, message: bytes) -> None:
        await self._send.send(message)

    def close_send(self) -> None:
        """Close the outgoing direction: the peer's next ``receive`` gets EOF."""
        self._send.close()

    async def aclose(self) -> None:
        self._send.close()
        self._receive.close()


def memory_pair(max_buffer: float = math.inf) -> tuple[MemoryTransport, MemoryTransport]:
    """Two connected transports: what one sends, the other receives, in order."""
    a_send, b_receive = anyio.create_memory_object_stream[bytes](max_buffer)
    b_send, a_receive = anyio.create_memory_object_stream[bytes](max_buffer)
    return MemoryTransport(a_send, a_receive), MemoryTransport(b_send, b_receive)
