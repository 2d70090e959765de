"""A direct WebSocket server transport, to size one: asyncio only, NOT part of the SDK.

Under an ASGI server every frame pays the server's layers (``python -m bench.asgi_floor``:
134-151 us of server CPU per echoed frame under uvicorn or hypercorn, more than the whole
TS server spends per ``session/prompt``). This module measures what serving the runtime on
the socket itself would reach: the client transport (``_LoopWebSocket``) turned around,
with the handshake read by hand, masked frames parsed in ``data_received`` and offered to
the connection's eager receiver, unmasked frames written from ``send_nowait``. It has none
of ``websocket_app``'s rules (first frame ``initialize``, limits, timeouts, auth, close
codes), so it is a bound to size that work, not a server to use.
``python -m bench --transport websocket --asgi-server direct`` serves ``this_agent.py`` on it.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Sequence

from floor_websocket import (  # a sibling script: this runs from bench/peers
    handshake_answer,
    server_frame,
    whole_frames,
    xor_mask,
)

from acp_runtime.remote.websocket_client import _HandshakeProtocol, _LoopWebSocket
from acp_runtime.remote.websocket_handshake import Accepted
from acp_runtime.transport import Transport


class DirectServerSocket(_LoopWebSocket):
    """The server's end: masked text frames in, unmasked frames out; a close frame or
    EOF ends it (no fragments, pings or limits: see the module's docstring)."""

    def _absorb(self, data: bytes, eager: Callable[[bytes], bool] | None = None) -> None:
        self._chunks_received += 1
        buffered = getattr(self, "_pending_bytes", b"")  # _absorb runs inside __init__
        frames, self._pending_bytes = whole_frames(buffered + data)
        for opcode, key, masked in frames:
            if opcode == 0x8:  # answered with an empty close frame, then EOF
                self._controls.append(bytes((0x88, 0)))
                self._closed = True
                self._on_eof()
                break
            if opcode != 0x1:
                continue
            payload = xor_mask(masked, key)
            if eager is not None:
                if eager(payload):
                    continue
                eager = None
            self._inbox.append(payload)
            self._queued += len(payload)

    def send_nowait(self, message: bytes) -> bool:
        if self._closed or self._peer_closed or self._write_paused:
            return False
        self._transport.write(server_frame(message))
        return True

    async def send_many(self, messages: Sequence[bytes]) -> None:
        await self._writable()
        self._transport.write(b"".join(map(server_frame, messages)))

    async def _close(self, code: int, reason: str | None) -> None:
        if not self._closed and not self._transport.is_closing():
            self._transport.write(bytes((0x88, 2)) + code.to_bytes(2, "big"))
        self._closed = True
        self._transport.close()


async def serve_direct(
    serve: Callable[[Transport], Awaitable[None]],
    until: Callable[[], Awaitable[None]],
    sock: object,
) -> None:
    """Serve each connection on ``sock`` (a listening socket) with ``serve`` until ``until``."""
    loop = asyncio.get_running_loop()
    tasks: set[asyncio.Task[None]] = set()

    async def accepted(transport: asyncio.Transport, handshake: _HandshakeProtocol) -> None:
        head = b""
        while b"\r\n\r\n" not in head:
            data = await handshake.read()
            if not data:
                return
            head += data
        head, _, rest = head.partition(b"\r\n\r\n")
        transport.write(handshake_answer(head))
        socket = DirectServerSocket(64 * 1024 * 1024, Accepted({}, rest), transport, handshake)
        await serve(socket)

    def connected() -> _HandshakeProtocol:
        handshake = _HandshakeProtocol()

        def made(transport: asyncio.BaseTransport) -> None:
            task = loop.create_task(accepted(transport, handshake))  # type: ignore[arg-type]
            tasks.add(task)

        handshake.connection_made = made  # type: ignore[method-assign]
        return handshake

    server = await loop.create_server(connected, sock=sock)  # type: ignore[arg-type]
    try:
        await until()
    finally:
        server.close()
        for task in tasks:
            task.cancel()
