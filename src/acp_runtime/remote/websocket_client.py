"""The WebSocket client transport: one JSON-RPC message per text frame, on a socket of its own.

The connection's reader parses the frames itself (:mod:`.websocket_frames`), so a message
costs no task handoff, no memory stream and no lock: on asyncio the socket is an asyncio
protocol whose ``data_received`` parses and offers responses to the connection's eager
receiver (as the stdio transport does), and a message to send goes straight to the
socket's ``write``; elsewhere (trio, or an ``httpx.AsyncClient`` lent for its TLS and
proxy settings) the reader awaits the byte stream. A burst of queued messages goes out as
one write either way. Binary frames are ignored, as every ACP peer does; any close from
the server ends the stream.
"""

from __future__ import annotations

import asyncio
import base64
import logging
import ssl
import urllib.parse
import urllib.request
from collections import deque
from collections.abc import AsyncGenerator, Awaitable, Callable, Mapping, Sequence
from contextlib import AsyncExitStack, asynccontextmanager
from typing import TYPE_CHECKING, Final

import anyio
import anyio.abc
import sniffio
from wsproto.utilities import generate_accept_token, generate_nonce

from ..framing import DEFAULT_MAX_MESSAGE_BYTES, EagerReceiver
from ..transport import MessageTooLarge
from .websocket_frames import (
    CLOSE_INTERNAL_ERROR,
    CLOSE_MESSAGE_TOO_BIG,
    CLOSE_NORMAL,
    OP_CLOSE,
    OP_PING,
    OP_PONG,
    Binary,
    Close,
    FrameError,
    FrameReader,
    Ping,
    TooLarge,
    close_payload,
    control_frame,
    text_frames,
)
from .websocket_handshake import (
    MAX_REFUSAL_BODY_BYTES,
    Accepted,
    WebSocketUpgradeError,
    read_answer,
    upgrade_request,
)

if TYPE_CHECKING:  # imported where used: a plain ws:// socket needs neither (nor trio)
    import httpx

__all__ = ["WebSocketTransport", "WebSocketUpgradeError", "connect_websocket"]

log = logging.getLogger(__name__)

CLOSE_TIMEOUT: Final = 2.0
"""Seconds leaving the block waits for the server to answer the close frame."""

OPEN_TIMEOUT: Final = 10.0
"""Default seconds for the TCP connect, the TLS handshake and the 101 together."""

PAUSE_BYTES: Final = 1024 * 1024
"""Parsed messages waiting for the connection at which the asyncio socket stops reading."""

READ_BYTES: Final = 256 * 1024


class WebSocketTransport:
    """A :class:`~acp_runtime.transport.Transport` over an open WebSocket (client side).

    What both I/O paths share: the frame reader, the messages parsed and not yet taken,
    and how the socket ended.
    """

    def __init__(self, max_message_bytes: int, accepted: Accepted) -> None:
        self._frames = FrameReader(max_message_bytes)
        self._max_message_bytes = max_message_bytes
        self._inbox: deque[bytes | TooLarge] = deque()
        self._queued = 0  # bytes of the messages in the inbox
        self._controls: list[bytes] = []  # pongs and the close echo to write
        self._closed = False  # this side closed (or gave up on) the socket
        self._peer_closed = False  # the server's close frame (or EOF) came
        self._end: BaseException | None = None
        """Raised by ``receive`` once the inbox is empty: EOF, or why the socket broke."""
        self._chunks_received = 0  # what the keep-alive takes as a sign of life
        self.close_code: int | None = None
        """The code of the server's close frame, once it has closed (None before)."""
        self.close_reason = ""
        self.connection_id: str | None = accepted.headers.get("acp-connection-id")
        """The server's ``Acp-Connection-Id`` from the 101 answer (for logs; not needed)."""

    def _absorb(self, data: bytes, eager: EagerReceiver | None = None) -> None:
        """Parse ``data`` into the inbox (offering each message to ``eager`` first while it
        takes them); control frames leave their answers in ``_controls``."""
        self._chunks_received += 1
        frames = self._frames
        frames.feed(data)
        inbox = self._inbox
        while True:
            try:
                event = frames.next()
            except FrameError as exc:
                log.warning("WebSocket protocol error from the server: %s", exc.reason)
                self._broken(exc.code, exc.reason, anyio.BrokenResourceError(exc.reason))
                return
            if event is None:
                return
            if type(event) is bytes:
                if eager is not None:
                    if eager(event):
                        continue
                    eager = None
                inbox.append(event)
                self._queued += len(event)
            elif isinstance(event, Ping):
                self._controls.append(control_frame(OP_PONG, event.payload))
            elif isinstance(event, Close):
                self._on_close_frame(event)
                return
            elif isinstance(event, Binary):
                log.warning("ignoring a binary WebSocket frame (%d bytes)", event.size)
            elif isinstance(event, TooLarge):
                inbox.append(event)
                return

    def _on_close_frame(self, close: Close) -> None:
        self.close_code, self.close_reason = close.code, close.reason
        self._peer_closed = True
        if not self._closed:
            self._closed_by_peer()
            self._controls.append(control_frame(OP_CLOSE, close_payload(close.code, None)))
        self._end = self._end or anyio.EndOfStream()

    def _closed_by_peer(self) -> None:
        """Hook: the server closed first (sends fail as broken from now on)."""

    def _on_eof(self) -> None:
        self._peer_closed = True
        if self._end is None:  # after our close frame, EOF is the answer enough
            self._end = (
                anyio.EndOfStream()
                if self._closed
                else anyio.BrokenResourceError("the server closed without a close frame")
            )

    def _broken(self, code: int, reason: str, error: BaseException) -> None:
        """Give up on the socket: ``receive`` raises ``error`` once the inbox is empty,
        and the close frame with ``code`` is queued."""
        if self._end is None:
            self._end = error
        if not self._closed and not self._peer_closed:
            self._controls.append(control_frame(OP_CLOSE, close_payload(code, reason)))
        self._closed = True

    def _take(self) -> bytes | TooLarge:
        item = self._inbox.popleft()
        if type(item) is bytes:
            self._queued -= len(item)
        return item

    def _raise_end(self) -> None:
        """EOF, or why the socket broke."""
        end = self._end
        if isinstance(end, anyio.BrokenResourceError):
            raise anyio.BrokenResourceError(*end.args)
        raise anyio.EndOfStream

    async def _too_large(self, item: TooLarge) -> MessageTooLarge:
        await self._close(CLOSE_MESSAGE_TOO_BIG, "Message too large")
        return MessageTooLarge(self._max_message_bytes, item.prefix)

    def _closed_error(self) -> Exception:
        """Why a send cannot go: this side closed, or the server did (or the socket broke)."""
        if self._closed and not isinstance(self._end, anyio.BrokenResourceError):
            return anyio.ClosedResourceError()
        return anyio.BrokenResourceError()

    async def receive(self) -> bytes:
        while True:
            if self._closed:
                self._raise_end()
            if self._inbox:
                break
            if self._end is not None:
                self._raise_end()
            await self._more()
        item = self._take()
        if isinstance(item, TooLarge):
            raise await self._too_large(item)
        return item

    async def _more(self) -> None:
        """Wait until the inbox holds a message or the socket ended."""
        raise NotImplementedError

    async def send(self, message: bytes) -> None:
        await self.send_many((message,))

    async def send_many(self, messages: Sequence[bytes]) -> None:
        """Each message as its own text frame, all in one write (the connection's writer
        calls this when several are queued)."""
        raise NotImplementedError

    async def aclose(self) -> None:
        await self._close(CLOSE_NORMAL, None)

    async def _close(self, code: int, reason: str | None) -> None:
        raise NotImplementedError

    async def _write_control(self, frame: bytes) -> None:
        raise NotImplementedError

    def _reading_now(self) -> bool:
        """Whether the socket is being read, so that silence means the server's."""
        raise NotImplementedError

    async def keep_alive(self, interval: float, pong_timeout: float | None) -> None:
        """Ping every ``interval`` seconds; with nothing at all received within
        ``pong_timeout`` of a ping while the socket is read, close with 1011 (``receive``
        then fails as broken). Nothing is judged while the connection reads nothing (its
        own backpressure): the answer may be waiting unread."""
        while not self._closed:
            await anyio.sleep(interval)
            seen = self._chunks_received
            try:
                await self._write_control(control_frame(OP_PING, b"acp"))
            except (anyio.BrokenResourceError, anyio.ClosedResourceError):
                return
            if pong_timeout is None:
                continue
            await anyio.sleep(pong_timeout)
            if self._chunks_received == seen and self._reading_now() and not self._closed:
                log.warning("nothing from the server %s s after a ping: closing", pong_timeout)
                self._end = self._end or anyio.BrokenResourceError("keep-alive ping timeout")
                await self._close(CLOSE_INTERNAL_ERROR, "Keepalive ping timeout")
                return


class _LoopWebSocket(WebSocketTransport, asyncio.Protocol):
    """The asyncio path: the socket's protocol once the handshake is done, so its
    ``data_received`` parses, and a send is the socket transport's ``write``."""

    def __init__(
        self,
        max_message_bytes: int,
        accepted: Accepted,
        transport: asyncio.Transport,
        handshake: _HandshakeProtocol,
    ) -> None:
        super().__init__(max_message_bytes, accepted)
        self._loop = loop = asyncio.get_running_loop()
        self._transport = transport
        self._waiter: asyncio.Future[None] | None = None
        self._eager: EagerReceiver | None = None
        self._reading_paused = False
        self._write_paused = False
        self._drained: asyncio.Future[None] | None = None
        self._peer_gone = loop.create_future()  # the server's close frame, or EOF
        self._lost = loop.create_future()
        transport.set_protocol(self)
        self._absorb_now(accepted.rest + handshake.leftover())
        if handshake.eof:
            self.eof_received()

    # -- asyncio.Protocol -----------------------------------------------------------------

    def data_received(self, data: bytes) -> None:
        self._absorb_now(data)

    def eof_received(self) -> bool | None:
        self._on_eof()
        _resolve(self._peer_gone)
        self._wake()
        return None

    def connection_lost(self, exc: Exception | None) -> None:
        self._on_eof()
        _resolve(self._peer_gone)
        _resolve(self._lost)
        self._write_paused = False
        _resolve(self._drained)
        self._wake()

    def pause_writing(self) -> None:
        self._write_paused = True

    def resume_writing(self) -> None:
        self._write_paused = False
        _resolve(self._drained)

    def _absorb_now(self, data: bytes) -> None:
        if not data:
            return
        waiter = self._waiter
        parked = waiter is not None and not waiter.done() and not self._inbox
        self._absorb(data, self._eager if parked else None)
        if self._controls:
            controls, self._controls = self._controls, []
            if not self._transport.is_closing():
                self._transport.write(b"".join(controls))
        if self._peer_closed:
            _resolve(self._peer_gone)
        if self._queued > PAUSE_BYTES and not self._reading_paused:
            self._reading_paused = True
            self._transport.pause_reading()
        if self._inbox or self._end is not None:
            self._wake()

    def _wake(self) -> None:
        _resolve(self._waiter)

    # -- the transport side ---------------------------------------------------------------

    def set_eager_receiver(self, receiver: EagerReceiver | None) -> bool:
        """Offer messages that arrive while ``receive`` waits on an empty inbox to
        ``receiver`` first, in ``data_received`` (see :mod:`acp_runtime.framing`)."""
        self._eager = receiver
        return True

    async def _more(self) -> None:
        self._waiter = waiter = self._loop.create_future()
        try:
            await waiter
        finally:
            self._waiter = None

    def _take(self) -> bytes | TooLarge:
        item = super()._take()
        if self._reading_paused and self._queued < PAUSE_BYTES // 2:
            self._reading_paused = False
            self._transport.resume_reading()
        return item

    def send_nowait(self, message: bytes) -> bool:
        """Write ``message`` at once when the socket takes it without waiting (its write
        buffer is under asyncio's high-water mark); False means :meth:`send` it."""
        if self._closed or self._peer_closed or self._write_paused:
            return False
        self._transport.write(text_frames((message,)))
        return True

    async def send_many(self, messages: Sequence[bytes]) -> None:
        await self._writable()
        self._transport.write(text_frames(messages))

    async def _write_control(self, frame: bytes) -> None:
        await self._writable()
        self._transport.write(frame)

    async def _writable(self) -> None:
        if self._closed or self._peer_closed:
            raise self._closed_error()
        if self._transport.is_closing():
            raise anyio.BrokenResourceError
        while self._write_paused:
            # One future for every waiter (the writer and the keep-alive's ping may both
            # wait), shielded so that one waiter's cancellation does not end the others'.
            drained = self._drained
            if drained is None or drained.done():
                drained = self._drained = self._loop.create_future()
            await asyncio.shield(drained)
            if self._closed or self._transport.is_closing():
                raise self._closed_error()

    def _closed_by_peer(self) -> None:
        self._wake()

    def _reading_now(self) -> bool:
        return not self._reading_paused

    async def _close(self, code: int, reason: str | None) -> None:
        if self._closed and self._transport.is_closing():
            return
        already = self._closed
        self._closed = True
        self._wake()
        with anyio.CancelScope(shield=True):
            transport = self._transport
            if not already and not self._peer_closed and not transport.is_closing():
                transport.write(control_frame(OP_CLOSE, close_payload(code, reason)))
                with anyio.move_on_after(CLOSE_TIMEOUT):
                    await asyncio.shield(self._peer_gone)
            transport.close()
            with anyio.move_on_after(CLOSE_TIMEOUT):
                await asyncio.shield(self._lost)


class _HandshakeProtocol(asyncio.Protocol):
    """The socket's protocol until the 101: its bytes go to :meth:`read`."""

    def __init__(self) -> None:
        self._chunks: deque[bytes] = deque()
        self._waiter: asyncio.Future[None] | None = None
        self.eof = False

    async def read(self) -> bytes:
        """The next bytes (``b""`` at EOF)."""
        while not self._chunks:
            if self.eof:
                return b""
            self._waiter = asyncio.get_running_loop().create_future()
            try:
                await self._waiter
            finally:
                self._waiter = None
        return self._chunks.popleft()

    def leftover(self) -> bytes:
        """What came after the bytes :meth:`read` gave out."""
        rest = b"".join(self._chunks)
        self._chunks.clear()
        return rest

    def data_received(self, data: bytes) -> None:
        self._chunks.append(data)
        _resolve(self._waiter)

    def eof_received(self) -> bool | None:
        self.eof = True
        _resolve(self._waiter)
        return None

    def connection_lost(self, exc: Exception | None) -> None:
        self.eof_received()


def _resolve(future: asyncio.Future[None] | None) -> None:
    if future is not None and not future.done():
        future.set_result(None)


class _StreamWebSocket(WebSocketTransport):
    """The path for any byte stream (trio, a TLS stream, httpx's upgraded connection):
    ``receive`` reads and parses in the caller's task."""

    def __init__(
        self,
        max_message_bytes: int,
        accepted: Accepted,
        read: Callable[[], Awaitable[bytes]],
        write: Callable[[bytes], Awaitable[None]],
        close: Callable[[], Awaitable[None]],
    ) -> None:
        super().__init__(max_message_bytes, accepted)
        self._read = read
        self._write = write
        self._close_stream = close
        self._write_lock = anyio.Lock(fast_acquire=True)  # uncontended: no checkpoint
        self._reading = False
        self._stream_closed = False
        self._absorb(accepted.rest)

    async def _more(self) -> None:
        await self._read_some()
        if self._controls:
            await self._flush_controls()

    async def _read_some(self) -> None:
        self._reading = True
        try:
            data = await self._read()
        except anyio.EndOfStream:
            data = b""
        except (anyio.BrokenResourceError, anyio.ClosedResourceError, OSError) as exc:
            if self._end is None:
                self._end = anyio.BrokenResourceError(str(exc) or type(exc).__name__)
            return
        finally:
            self._reading = False
        if data:
            self._absorb(data)
        else:
            self._on_eof()

    def _reading_now(self) -> bool:
        return self._reading

    async def _flush_controls(self) -> None:
        controls, self._controls = self._controls, []
        try:
            await self._write_bytes(b"".join(controls))
        except (anyio.BrokenResourceError, anyio.ClosedResourceError):
            if self._end is None:
                self._end = anyio.BrokenResourceError("writing a control frame failed")

    async def send_many(self, messages: Sequence[bytes]) -> None:
        if self._closed or self._peer_closed:
            raise self._closed_error()
        await self._write_bytes(text_frames(messages))

    async def _write_control(self, frame: bytes) -> None:
        if self._closed or self._peer_closed:
            raise self._closed_error()
        await self._write_bytes(frame)

    async def _write_bytes(self, data: bytes) -> None:
        try:
            async with self._write_lock:
                await self._write(data)
        except (anyio.BrokenResourceError, anyio.ClosedResourceError, OSError) as exc:
            raise anyio.BrokenResourceError from exc

    async def _close(self, code: int, reason: str | None) -> None:
        if self._stream_closed:
            return
        already = self._closed
        self._closed = True
        with anyio.CancelScope(shield=True):
            if self._controls:  # the answer to the server's close, or ours after an error
                await self._flush_controls_quietly()
            elif not already and not self._peer_closed:
                self._controls.append(control_frame(OP_CLOSE, close_payload(code, reason)))
                await self._flush_controls_quietly()
                if not self._reading:  # nobody else reads: wait for the server's answer
                    with anyio.move_on_after(CLOSE_TIMEOUT):
                        while not self._peer_closed and self._end is None:
                            await self._read_some()
            self._stream_closed = True
            try:
                await self._close_stream()
            except Exception:  # the peer is gone already
                log.debug("closing the WebSocket stream failed", exc_info=True)

    async def _flush_controls_quietly(self) -> None:
        controls, self._controls = self._controls, []
        try:
            await self._write_bytes(b"".join(controls))
        except anyio.BrokenResourceError:
            pass


@asynccontextmanager
async def connect_websocket(
    url: str,
    *,
    headers: Mapping[str, str] | None = None,
    max_message_bytes: int = DEFAULT_MAX_MESSAGE_BYTES,
    client: httpx.AsyncClient | None = None,
    ssl_context: ssl.SSLContext | None = None,
    keepalive_ping_interval: float | None = 20.0,
    keepalive_ping_timeout: float | None = 20.0,
    open_timeout: float | None = OPEN_TIMEOUT,
) -> AsyncGenerator[WebSocketTransport, None]:
    """Open a WebSocket to an ACP agent at ``url`` (``ws://``, ``wss://``, or ``http(s)://``)
    and yield its transport; leaving the block closes the socket (1000).

    ``headers`` go on the upgrade request (``Authorization`` and the like);
    ``ssl_context`` verifies a ``wss://`` server (default: httpx's, with certifi's roots).
    ``client`` (an ``httpx.AsyncClient``) makes the upgrade through it, for its proxy, TLS
    and cookie settings; the frames then run over its connection. Without one, a proxy set
    in the environment (``HTTPS_PROXY`` and the like) is used the same way, and otherwise
    the socket is the client's own. A ping goes out every ``keepalive_ping_interval``
    seconds; with nothing received within ``keepalive_ping_timeout`` of it the socket is
    closed with 1011 and ``receive`` fails.

    Raises :class:`WebSocketUpgradeError` when the server refuses the upgrade (its
    ``status_code`` says why: 401/403 for auth, 404 for a wrong path), ``TimeoutError``
    when it does not answer within ``open_timeout`` seconds, ``OSError`` when it cannot be
    reached.
    """
    target = _Target(url, dict(headers or {}))
    if client is None and target.proxied():
        import httpx

        async with httpx.AsyncClient(verify=ssl_context or True) as own:
            async with connect_websocket(
                url,
                headers=headers,
                max_message_bytes=max_message_bytes,
                client=own,
                keepalive_ping_interval=keepalive_ping_interval,
                keepalive_ping_timeout=keepalive_ping_timeout,
                open_timeout=open_timeout,
            ) as transport:
                yield transport
        return
    async with _open(target, max_message_bytes, client, ssl_context, open_timeout) as transport:
        if keepalive_ping_interval is None:
            yield transport
            return
        failure: BaseException | None = None
        async with anyio.create_task_group() as keepers:
            keepers.start_soon(
                transport.keep_alive, keepalive_ping_interval, keepalive_ping_timeout
            )
            try:
                yield transport
            except BaseException as exc:  # raised below, outside the group: not wrapped
                failure = exc
            finally:
                await transport.aclose()
                keepers.cancel_scope.cancel()
        if failure is not None:
            raise failure


class _Target:
    """Where ``url`` points, and the request that upgrades there."""

    def __init__(self, url: str, headers: dict[str, str]) -> None:
        parts = urllib.parse.urlsplit(url)
        scheme = parts.scheme.lower()
        if scheme not in ("ws", "wss", "http", "https") or not parts.hostname:
            raise ValueError(f"not a ws(s):// or http(s):// URL: {url!r}")
        self.secure = scheme in ("wss", "https")
        self.http_url = urllib.parse.urlunsplit(("https" if self.secure else "http", *parts[1:]))
        self.hostname = parts.hostname
        self.port = parts.port or (443 if self.secure else 80)
        self.host_header = parts.netloc.rpartition("@")[2]
        self.target = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
        if parts.username is not None and not any(k.lower() == "authorization" for k in headers):
            user = urllib.parse.unquote(parts.username)
            password = urllib.parse.unquote(parts.password or "")
            token = base64.b64encode(f"{user}:{password}".encode()).decode()
            headers["Authorization"] = f"Basic {token}"
        self.headers = headers

    def proxied(self) -> bool:
        """Whether the environment names a proxy for this URL (as httpx's ``trust_env``)."""
        proxies = urllib.request.getproxies_environment()
        wanted = ("https", "all") if self.secure else ("http", "all")
        if not any(proxies.get(kind) for kind in wanted):
            return False
        return not urllib.request.proxy_bypass(self.hostname)


@asynccontextmanager
async def _open(
    target: _Target,
    max_message_bytes: int,
    client: httpx.AsyncClient | None,
    ssl_context: ssl.SSLContext | None,
    open_timeout: float | None,
) -> AsyncGenerator[WebSocketTransport, None]:
    if client is not None:
        async with _through_httpx(target, max_message_bytes, client, open_timeout) as transport:
            yield transport
        return
    context = (ssl_context or _default_ssl_context()) if target.secure else None
    if sniffio.current_async_library() == "asyncio":
        transport = await _open_on_loop(target, max_message_bytes, context, open_timeout)
    else:
        transport = await _open_stream(target, max_message_bytes, context, open_timeout)
    try:
        yield transport
    finally:
        await transport.aclose()


async def _open_on_loop(
    target: _Target,
    max_message_bytes: int,
    context: ssl.SSLContext | None,
    open_timeout: float | None,
) -> _LoopWebSocket:
    loop = asyncio.get_running_loop()
    socket = _HandshakeProtocol()
    with anyio.fail_after(open_timeout):
        transport, _ = await loop.create_connection(
            lambda: socket,
            target.hostname,
            target.port,
            ssl=context,
            server_hostname=target.hostname if context is not None else None,
        )
        try:
            handshake, request = upgrade_request(target.host_header, target.target, target.headers)
            transport.write(request)
            accepted = await read_answer(handshake, socket.read)
        except BaseException:
            transport.abort()
            raise
    return _LoopWebSocket(max_message_bytes, accepted, transport, socket)


async def _open_stream(
    target: _Target,
    max_message_bytes: int,
    context: ssl.SSLContext | None,
    open_timeout: float | None,
) -> _StreamWebSocket:
    with anyio.fail_after(open_timeout):
        if context is None:
            stream: anyio.abc.ByteStream = await anyio.connect_tcp(target.hostname, target.port)
        else:
            stream = await anyio.connect_tcp(
                target.hostname,
                target.port,
                tls=True,
                ssl_context=context,
                tls_hostname=target.hostname,
            )
        try:
            handshake, request = upgrade_request(target.host_header, target.target, target.headers)
            await stream.send(request)
            read = _stream_reader(stream)
            accepted = await read_answer(handshake, read)
        except BaseException:
            await anyio.aclose_forcefully(stream)
            raise
    return _StreamWebSocket(max_message_bytes, accepted, read, stream.send, stream.aclose)


def _stream_reader(stream: anyio.abc.ByteReceiveStream) -> Callable[[], Awaitable[bytes]]:
    async def read() -> bytes:
        try:
            return await stream.receive(READ_BYTES)
        except anyio.EndOfStream:
            return b""

    return read


@asynccontextmanager
async def _through_httpx(
    target: _Target, max_message_bytes: int, client: httpx.AsyncClient, open_timeout: float | None
) -> AsyncGenerator[WebSocketTransport, None]:
    """The upgrade as a request of ``client`` (its proxy, TLS, cookies and auth apply),
    then the frames over the connection it hands over."""
    import httpcore

    nonce = generate_nonce()
    upgrade = {
        "Upgrade": "websocket",
        "Connection": "Upgrade",
        "Sec-WebSocket-Key": nonce.decode(),
        "Sec-WebSocket-Version": "13",
    }
    async with AsyncExitStack() as stack:
        with anyio.fail_after(open_timeout):
            response = await stack.enter_async_context(
                client.stream("GET", target.http_url, headers={**target.headers, **upgrade})
            )
        headers = {name.lower(): value for name, value in response.headers.items()}
        if response.status_code != 101:
            body = await response.aread()
            raise WebSocketUpgradeError(
                f"the server refused the WebSocket upgrade with {response.status_code}",
                status_code=response.status_code,
                headers=headers,
                body=body[:MAX_REFUSAL_BODY_BYTES],
            )
        if headers.get("sec-websocket-accept", "").encode() != generate_accept_token(nonce):
            raise WebSocketUpgradeError("invalid WebSocket handshake: bad accept token")
        stream = response.extensions["network_stream"]

        async def read() -> bytes:
            try:
                data: bytes = await stream.read(READ_BYTES)
            except httpcore.NetworkError as exc:
                raise anyio.BrokenResourceError from exc
            return data

        async def write(data: bytes) -> None:
            try:
                await stream.write(data)
            except httpcore.NetworkError as exc:
                raise anyio.BrokenResourceError from exc

        transport = _StreamWebSocket(
            max_message_bytes, Accepted(headers, b""), read, write, stream.aclose
        )
        try:
            yield transport
        finally:
            await transport.aclose()


def _default_ssl_context() -> ssl.SSLContext:
    """httpx's default context (certifi's roots), as when httpx made the upgrade."""
    import httpx

    return httpx.create_ssl_context()
