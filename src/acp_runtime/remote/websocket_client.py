"""The WebSocket client transport: one JSON-RPC message per text frame, over httpx-ws.

httpx-ws runs on anyio, so the same code serves asyncio and trio, and it shares an
``httpx.AsyncClient`` (TLS, proxies, cookies, auth headers) with the rest of an
application. Binary frames are ignored, as every ACP peer does; any close from the server
ends the stream.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncGenerator, Mapping, Sequence
from contextlib import asynccontextmanager

import anyio
import httpcore
import httpx
import wsproto.events
from httpx_ws import (
    AsyncWebSocketSession,
    WebSocketDisconnect,
    WebSocketNetworkError,
    aconnect_ws,
)
from wsproto.utilities import LocalProtocolError

from ..framing import DEFAULT_MAX_MESSAGE_BYTES
from ..transport import MessageTooLarge

log = logging.getLogger(__name__)

READ_CHUNK_BYTES = 256 * 1024
"""Largest socket read httpx-ws is asked for (its ``max_message_size_bytes`` is a read
size, not a message limit; the limit is checked here on each whole message)."""

CLOSE_MESSAGE_TOO_BIG = 1009


class WebSocketTransport:
    """A :class:`~acp_runtime.transport.Transport` over an open httpx-ws session."""

    def __init__(self, session: AsyncWebSocketSession, *, max_message_bytes: int) -> None:
        self._session = session
        if isinstance(getattr(session, "_write_lock", None), anyio.Lock):
            # httpx-ws's lock checkpoints on every acquire, a third of a send's cost; the
            # same lock without the checkpoint when uncontended (nothing holds it yet).
            session._write_lock = anyio.Lock(fast_acquire=True)  # pyright: ignore[reportPrivateUsage]
        self._max_message_bytes = max_message_bytes
        self._closed = False
        self.close_code: int | None = None
        """The code of the server's close frame, once it has closed (None before)."""
        self.close_reason = ""
        response = session.response
        self.connection_id: str | None = (
            None if response is None else response.headers.get("acp-connection-id")
        )
        """The server's ``Acp-Connection-Id`` from the 101 answer (for logs; not needed)."""

    async def receive(self) -> bytes:
        while True:
            if self._closed:
                raise anyio.EndOfStream
            try:
                event = await self._session.receive()
            except WebSocketDisconnect as exc:
                self.close_code, self.close_reason = exc.code, exc.reason
                self._closed = True
                raise anyio.EndOfStream from None
            except WebSocketNetworkError as exc:
                self._closed = True
                raise anyio.BrokenResourceError from exc
            if isinstance(event, wsproto.events.TextMessage):
                data = event.data.encode()
                if len(data) > self._max_message_bytes:
                    await self._close(CLOSE_MESSAGE_TOO_BIG, "Message too large")
                    raise MessageTooLarge(self._max_message_bytes, data[:1024])
                return data
            if isinstance(event, wsproto.events.BytesMessage):
                log.warning("ignoring a binary WebSocket frame (%d bytes)", len(event.data))

    async def send(self, message: bytes) -> None:
        if self._closed:
            raise anyio.ClosedResourceError
        try:
            await self._session.send_text(message.decode())
        except (WebSocketNetworkError, LocalProtocolError) as exc:
            raise anyio.BrokenResourceError from exc

    async def send_many(self, messages: Sequence[bytes]) -> None:
        """Frame a backlog at once and write it in one go (the connection's writer calls
        this when several messages are queued): one lock and one socket write, not one each."""
        if self._closed:
            raise anyio.ClosedResourceError
        session = self._session
        lock: anyio.Lock | None = getattr(session, "_write_lock", None)
        if lock is None:  # not the httpx-ws this was written against: one by one
            for message in messages:
                await self.send(message)
            return
        try:
            data = b"".join(
                session.connection.send(wsproto.events.TextMessage(data=message.decode()))
                for message in messages
            )
            async with lock:
                await session.stream.write(data)
        except (httpcore.WriteError, LocalProtocolError) as exc:
            raise anyio.BrokenResourceError from exc

    async def aclose(self) -> None:
        await self._close(1000, None)

    async def _close(self, code: int, reason: str | None) -> None:
        if self._closed:
            return
        self._closed = True
        with anyio.CancelScope(shield=True):
            try:
                await self._session.close(code, reason)
            except (WebSocketNetworkError, LocalProtocolError, OSError):
                pass


@asynccontextmanager
async def connect_websocket(
    url: str,
    *,
    headers: Mapping[str, str] | None = None,
    max_message_bytes: int = DEFAULT_MAX_MESSAGE_BYTES,
    client: httpx.AsyncClient | None = None,
    keepalive_ping_interval: float | None = 20.0,
    keepalive_ping_timeout: float | None = 20.0,
) -> AsyncGenerator[WebSocketTransport, None]:
    """Open a WebSocket to an ACP agent at ``url`` (``ws://``, ``wss://``, or ``http(s)://``)
    and yield its transport; leaving the block closes the socket.

    ``headers`` go on the upgrade request (``Authorization`` and the like). ``client``
    lends its TLS, proxy and cookie settings; without one a client is made for the block.
    Raises ``httpx_ws.WebSocketUpgradeError`` when the server refuses the upgrade (its
    ``response.status_code`` says why: 401/403 for auth, 404 for a wrong path).
    """
    http_url = "http" + url[2:] if url.startswith(("ws://", "wss://")) else url
    async with _client(client) as http:
        async with aconnect_ws(
            http_url,
            http,
            headers=dict(headers or {}),
            max_message_size_bytes=READ_CHUNK_BYTES,
            keepalive_ping_interval_seconds=keepalive_ping_interval,
            keepalive_ping_timeout_seconds=keepalive_ping_timeout,
            session_class=AsyncWebSocketSession,
        ) as session:
            transport = WebSocketTransport(session, max_message_bytes=max_message_bytes)
            try:
                yield transport
            finally:
                await transport.aclose()


@asynccontextmanager
async def _client(client: httpx.AsyncClient | None) -> AsyncGenerator[httpx.AsyncClient, None]:
    if client is not None:
        yield client
        return
    async with httpx.AsyncClient() as own:
        yield own
