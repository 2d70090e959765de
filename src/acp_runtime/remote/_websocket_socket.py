"""An open WebSocket carrying ACP, either side: one JSON-RPC message per text frame.

The connection's reader parses the frames itself (:mod:`.websocket_frames`), so a message
costs no task handoff, no memory stream and no lock: on asyncio the socket is an asyncio
protocol whose readiness callback parses and offers messages to the connection's eager
receiver (as the stdio transport does), and a message to send goes straight to the
socket's ``write``; elsewhere (trio, or an ``httpx.AsyncClient`` lent for its TLS and
proxy settings) the reader awaits the byte stream. A burst of queued messages goes out as
one write either way. Binary frames are ignored, as every ACP peer does; a close from the
other side ends the stream.

The client (:mod:`.websocket_client`) masks what it sends and reads unmasked frames; the
server (:mod:`.websocket_listener`) the other way round. Everything else is the same.
"""

from __future__ import annotations

import asyncio
import logging
from collections import deque
from collections.abc import Awaitable, Callable, Sequence
from time import monotonic as _monotonic
from typing import Final

import anyio
import anyio.abc

from .._fd_reader import ReadBuffer
from .._framing import EagerReceiver
from .._log_throttle import peer_log
from .._transport import MessageTooLarge
from ._websocket_frames import (
    CLOSE_INTERNAL_ERROR,
    CLOSE_MESSAGE_TOO_BIG,
    CLOSE_NO_STATUS,
    CLOSE_NORMAL,
    CLOSE_POLICY_VIOLATION,
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
    text_frame,
    text_frames,
)
from ._websocket_handshake import Accepted

__all__ = [
    "HandshakeProtocol",
    "LoopWebSocket",
    "StreamWebSocket",
    "WebSocketTransport",
    "stream_reader",
]

log = logging.getLogger(__name__)

CLOSE_TIMEOUT: Final = 2.0
"""Seconds a close waits for the other side's close frame, then for the socket to end."""

PAUSE_BYTES: Final = 1024 * 1024
"""Parsed messages waiting for the connection at which the asyncio socket stops reading."""

MESSAGE_OVERHEAD: Final = 64
"""What a waiting message costs besides its bytes (its object, its place in the inbox):
counted with them, so that a flood of empty messages pauses reading too."""

READ_BYTES: Final = 256 * 1024
"""The most one read of the stream path takes (the asyncio path reads into its thread's
:class:`ReadBuffer`, as large)."""

WRITE_SLICE_BYTES: Final = 256 * 1024
"""The stream path writes a larger frame in slices of this size, so that a slow peer's
progress shows (the stall and keep-alive clocks) while one big message goes out."""

HANDSHAKE_BUFFER_BYTES: Final = 256 * 1024
"""Bytes a socket holds unread before its upgrade is answered; then it stops reading."""

BURST_GAP: Final = 50e-6
"""A frame sent within this many seconds of the last write is part of a burst: it waits
to go with the rest (see :meth:`LoopWebSocket.send_nowait`)."""

COALESCE_BYTES: Final = 64 * 1024
"""Most bytes of frames the asyncio path holds back to write together."""


class WebSocketTransport:
    """A :class:`~acp_runtime._transport.Transport` over an open WebSocket.

    What both I/O paths share: the frame reader, the messages parsed and not yet taken,
    and how the socket ended. ``server`` is the side: it reads masked frames and sends
    unmasked ones, and closes with 1008 on an over-limit message (the client with 1009).
    """

    def __init__(self, max_message_bytes: int, accepted: Accepted, *, server: bool = False) -> None:
        self._server = server
        self._mask = not server  # RFC 6455: only the client masks what it sends
        self._frames = FrameReader(max_message_bytes, masked=server)
        self._max_message_bytes = max_message_bytes
        self._inbox: deque[bytes | TooLarge] = deque()
        self._queued = 0  # what the messages in the inbox hold (bytes and MESSAGE_OVERHEAD)
        self._controls: list[bytes] = []  # pongs and the close echo to write
        self._closed = False  # this side closed (or gave up on) the socket
        self._peer_closed = False  # the other side's close frame (or EOF) came
        self._end: BaseException | None = None
        """Raised by ``receive`` once the inbox is empty: EOF, or why the socket broke."""
        self._chunks_received = 0  # what the keep-alive takes as a sign of life
        self._sent: int = 0  # writes of frames: with the chunks received, the idle clock's
        self.close_code: int | None = None
        """The code of the other side's close frame, once it has closed (None before)."""
        self.close_reason = ""
        self.connection_id: str | None = accepted.headers.get("acp-connection-id")
        """The ``Acp-Connection-Id`` of the 101 answer (for logs; not needed)."""

    def _absorb(self, data: bytes | memoryview, eager: EagerReceiver | None = None) -> None:
        """Parse ``data`` into the inbox (offering each message to ``eager`` first while it
        takes them); control frames leave their answers in ``_controls``."""
        self._chunks_received += 1
        if self._peer_closed:  # RFC 6455 1.4: nothing after a close frame is data
            return
        frames = self._frames
        frames.feed(data)
        inbox = self._inbox
        while True:
            try:
                event = frames.next()
            except FrameError as exc:
                log.warning("WebSocket protocol error from the peer: %s", exc.reason)
                self._broken(exc.code, exc.reason, anyio.BrokenResourceError(exc.reason))
                return
            if event is None:
                return
            if type(event) is bytes:
                if eager is not None:
                    if eager(event):
                        continue
                    eager = None
                if self._closed:  # closing (or failed): nobody will receive it
                    continue
                inbox.append(event)
                self._queued += len(event) + MESSAGE_OVERHEAD
            elif isinstance(event, Ping):
                self._answer_ping(event.payload)
            elif isinstance(event, Close):
                self._on_close_frame(event)
                return
            elif isinstance(event, Binary):
                peer_log.log(
                    log, logging.WARNING, "ignoring a binary WebSocket frame (%d bytes)", event.size
                )
            elif isinstance(event, TooLarge):
                inbox.append(event)
                return

    def _answer_ping(self, payload: bytes) -> None:
        self._controls.append(control_frame(OP_PONG, payload, mask=self._mask))

    def _on_close_frame(self, close: Close) -> None:
        self.close_code, self.close_reason = close.code, close.reason
        self._peer_closed = True
        if not self._closed:
            self._closed_by_peer()
            # the echo repeats the code, or is empty after an empty close: 1005 only
            # means "no code" and must never be sent (RFC 6455 7.4.1)
            echo = b"" if close.code == CLOSE_NO_STATUS else close_payload(close.code, None)
            self._controls.append(control_frame(OP_CLOSE, echo, mask=self._mask))
        self._end = self._end or anyio.EndOfStream()

    def _closed_by_peer(self) -> None:
        """Hook: the other side closed first (sends fail as broken from now on)."""

    def _on_eof(self) -> None:
        self._peer_closed = True
        if self._end is None:  # after our close frame, EOF is the answer enough
            self._end = (
                anyio.EndOfStream()
                if self._closed
                else anyio.BrokenResourceError("the peer closed without a close frame")
            )

    def _broken(self, code: int, reason: str, error: BaseException) -> None:
        """Give up on the socket: ``receive`` raises ``error`` once the inbox is empty,
        and the close frame with ``code`` is queued."""
        if self._end is None:
            self._end = error
        if not self._closed and not self._peer_closed:
            self._controls.append(
                control_frame(OP_CLOSE, close_payload(code, reason), mask=self._mask)
            )
        self._closed = True

    def _take(self) -> bytes | TooLarge:
        item = self._inbox.popleft()
        if type(item) is bytes:
            self._queued -= len(item) + MESSAGE_OVERHEAD
        return item

    def _raise_end(self) -> None:
        """EOF, or why the socket broke."""
        end = self._end
        if isinstance(end, anyio.BrokenResourceError):
            raise anyio.BrokenResourceError(*end.args)
        raise anyio.EndOfStream

    async def _too_large(self, item: TooLarge) -> MessageTooLarge:
        """Close the socket; the client's connection then answers the message's id. A
        server ends there (as the TS server does: 1008, and the connection's EOF)."""
        if self._server:
            await self._close(
                CLOSE_POLICY_VIOLATION, f"Message exceeds {self._max_message_bytes} bytes"
            )
            raise anyio.EndOfStream
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

    async def close(self, code: int = CLOSE_NORMAL, reason: str | None = None) -> None:
        """Close with ``code`` and ``reason``: the close frame, the peer's answer awaited a
        while, then the socket (dropped if the peer reads nothing). Once only."""
        await self._close(code, reason)

    async def _close(self, code: int, reason: str | None) -> None:
        raise NotImplementedError

    async def _write_control(self, frame: bytes) -> None:
        raise NotImplementedError

    def _reading_now(self) -> bool:
        """Whether the socket is being read, so that silence means the peer's."""
        raise NotImplementedError

    def output_waiting(self) -> tuple[bool, int]:
        """Whether a write waits for the peer to read, and a count that moves whenever
        the peer takes some: a stall is the first true with the second still."""
        raise NotImplementedError

    @property
    def activity(self) -> int:
        """A count that moves with every read and write: an idle clock's."""
        return self._chunks_received + self._sent

    async def keep_alive(self, interval: float, pong_timeout: float | None) -> None:
        """Ping every ``interval`` seconds; with nothing at all received within
        ``pong_timeout`` of a ping while the socket is read, close with 1011 (``receive``
        then fails as broken). Nothing is judged while the connection reads nothing (its
        own backpressure): the answer may be waiting unread. While a write waits for the
        peer, no ping is queued behind it: the peer is judged dead when, within
        ``pong_timeout``, it neither sent anything nor took any of that write."""
        while not self._closed:
            await anyio.sleep(interval)
            seen = self._chunks_received
            waiting, taken = self.output_waiting()
            if waiting:
                if pong_timeout is None:
                    continue
                await anyio.sleep(pong_timeout)
                still = self.output_waiting()
                if still == (True, taken) and self._chunks_received == seen:
                    await self._keep_alive_failed(f"the peer took nothing for {pong_timeout} s")
                    return
                continue
            try:
                await self._write_control(control_frame(OP_PING, b"acp", mask=self._mask))
            except (anyio.BrokenResourceError, anyio.ClosedResourceError):
                return
            if pong_timeout is None:
                continue
            await anyio.sleep(pong_timeout)
            if self._chunks_received == seen and self._reading_now() and not self._closed:
                await self._keep_alive_failed(
                    f"nothing from the peer {pong_timeout} s after a ping"
                )
                return

    async def _keep_alive_failed(self, why: str) -> None:
        if self._closed:
            return
        log.warning("%s: closing", why)
        self._end = self._end or anyio.BrokenResourceError("keep-alive ping timeout")
        await self._close(CLOSE_INTERNAL_ERROR, "Keepalive ping timeout")


class LoopWebSocket(WebSocketTransport, asyncio.BufferedProtocol):
    """The asyncio path: the socket's protocol once the handshake is done, so the
    readiness callback parses, and a send is the socket transport's ``write``.

    It reads into its thread's buffer (:meth:`ReadBuffer.for_this_thread`, as the pipe
    reader does), not into fresh bytes: asyncio's ``recv`` of up to 256 KiB allocates all
    of them before each read, above glibc's mmap threshold, so a small message cost an
    ``mmap``, an ``mremap``, a ``munmap`` and a page fault (``strace``: three of those per
    message on each side).

    A burst of frames goes out in few writes: asyncio sets ``TCP_NODELAY``, so a write per
    frame would be a TCP segment per frame, and the peer would wake and read once per
    message (measured: 21 µs of the reader's CPU per notification instead of 12). A lone
    request or answer still leaves at once, with no extra turn of the event loop."""

    def __init__(
        self,
        max_message_bytes: int,
        accepted: Accepted,
        transport: asyncio.Transport,
        handshake: HandshakeProtocol,
        *,
        server: bool = False,
    ) -> None:
        super().__init__(max_message_bytes, accepted, server=server)
        self._loop = loop = asyncio.get_running_loop()
        self._transport = transport
        self._waiter: asyncio.Future[None] | None = None
        self._eager: EagerReceiver | None = None
        self._reading_paused = False
        self._write_paused = False
        self._resumes = 0  # how often the peer drained the write buffer (the stall clock's)
        self._drained: asyncio.Future[None] | None = None
        self._held: list[bytes] = []  # a burst's frames, for one write
        self._last_write = 0.0  # when a frame was last written at once
        self._held_bytes = 0
        self._held_pong: bytes | None = None  # the latest ping's answer, while writes wait
        self._read_view = ReadBuffer.for_this_thread().view  # this loop's thread's
        self._peer_gone = loop.create_future()  # the other side's close frame, or EOF
        self._lost = loop.create_future()
        transport.set_protocol(self)
        self._absorb_now(accepted.rest + handshake.leftover())
        if handshake.reading_paused and not self._reading_paused:
            transport.resume_reading()
        if handshake.eof:
            self.eof_received()

    # -- asyncio.BufferedProtocol ---------------------------------------------------------

    def get_buffer(self, sizehint: int) -> memoryview:
        return self._read_view

    def buffer_updated(self, nbytes: int) -> None:
        self._absorb_now(self._read_view[:nbytes])  # parsed (or copied) before it returns

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
        self._resumes += 1
        if self._held_pong is not None:
            pong, self._held_pong = self._held_pong, None
            self._write(pong)
        _resolve(self._drained)

    def _broken(self, code: int, reason: str, error: BaseException) -> None:
        super()._broken(code, reason, error)
        if not self._reading_paused:  # nothing the peer sends now is parsed: stop reading it
            self._reading_paused = True
            self._transport.pause_reading()

    def _answer_ping(self, payload: bytes) -> None:
        if self._write_paused:  # the peer reads nothing: only the latest ping is answered
            self._held_pong = control_frame(OP_PONG, payload, mask=self._mask)  # (RFC 6455 5.5.3)
        else:
            super()._answer_ping(payload)

    def _absorb_now(self, data: bytes | memoryview) -> None:
        if not data:
            return
        waiter = self._waiter
        parked = waiter is not None and not waiter.done() and not self._inbox
        self._absorb(data, self._eager if parked else None)
        if self._controls:
            controls, self._controls = self._controls, []
            self._write(b"".join(controls))
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
        ``receiver`` first, in the readiness callback (see :mod:`acp_runtime._framing`)."""
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
        """Take ``message`` without waiting when the socket's write buffer is under
        asyncio's high-water mark (False: :meth:`send` it). Written at once unless the
        last write was under :data:`BURST_GAP` ago: then it is held, with the frames that
        follow, for one write at the end of this turn of the event loop (sooner once
        :data:`COALESCE_BYTES` are held). Checking the clock costs less than scheduling
        an end-of-turn write for every lone answer."""
        if self._closed or self._peer_closed or self._write_paused:
            return False
        frame = text_frame(message, mask=self._mask)
        self._sent += 1
        held = self._held
        if not held:
            now = _monotonic()
            if now - self._last_write >= BURST_GAP:  # not part of a burst: at once
                self._last_write = now
                self._transport.write(frame)
                return True
            self._loop.call_soon(self._flush)
        held.append(frame)
        self._held_bytes += len(frame)
        if self._held_bytes >= COALESCE_BYTES:
            self._flush()
        return True

    def _flush(self) -> None:
        """Write the frames :meth:`send_nowait` held, in one write."""
        held = self._held
        if not held:
            return
        data = held[0] if len(held) == 1 else b"".join(held)
        held.clear()
        self._held_bytes = 0
        self._last_write = _monotonic()  # a burst goes on being held in the next turn
        if not self._transport.is_closing():
            self._transport.write(data)

    def _write(self, data: bytes) -> None:
        """Write ``data`` behind the frames held so far."""
        self._flush()
        if not self._transport.is_closing():
            self._transport.write(data)

    async def send_many(self, messages: Sequence[bytes]) -> None:
        await self._writable()
        self._write(text_frames(messages, mask=self._mask))
        self._sent += 1

    async def _write_control(self, frame: bytes) -> None:
        await self._writable()
        self._write(frame)

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

    def output_waiting(self) -> tuple[bool, int]:
        return self._write_paused, self._resumes

    async def _close(self, code: int, reason: str | None) -> None:
        if self._closed and self._transport.is_closing():
            return
        already = self._closed
        self._closed = True
        self._wake()
        with anyio.CancelScope(shield=True):
            transport = self._transport
            self._flush()  # what was sent before the close goes before it
            if not already and not self._peer_closed and not transport.is_closing():
                frame = control_frame(OP_CLOSE, close_payload(code, reason), mask=self._mask)
                transport.write(frame)
                with anyio.move_on_after(CLOSE_TIMEOUT):
                    await asyncio.shield(self._peer_gone)
            transport.close()
            with anyio.move_on_after(CLOSE_TIMEOUT):
                await asyncio.shield(self._lost)
            if not self._lost.done():  # the peer reads nothing: the buffer never drains
                transport.abort()


class HandshakeProtocol(asyncio.Protocol):
    """The socket's protocol until the 101: its bytes go to :meth:`read`. Reading pauses
    once :data:`HANDSHAKE_BUFFER_BYTES` wait unread (a peer sending on while the upgrade
    is judged, say by an awaited ``authenticate`` hook, waits for TCP, not our memory);
    the socket that takes over resumes it."""

    def __init__(self) -> None:
        self._chunks: deque[bytes] = deque()
        self._buffered = 0
        self._waiter: asyncio.Future[None] | None = None
        self._transport: asyncio.BaseTransport | None = None
        self.reading_paused = False
        self.eof = False

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self._transport = transport

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
        chunk = self._chunks.popleft()
        self._buffered -= len(chunk)
        if self.reading_paused and self._buffered <= HANDSHAKE_BUFFER_BYTES // 2:
            assert isinstance(self._transport, asyncio.ReadTransport)
            self.reading_paused = False
            self._transport.resume_reading()
        return chunk

    def leftover(self) -> bytes:
        """What came after the bytes :meth:`read` gave out."""
        rest = b"".join(self._chunks)
        self._chunks.clear()
        self._buffered = 0
        return rest

    def data_received(self, data: bytes) -> None:
        self._chunks.append(data)
        self._buffered += len(data)
        transport = self._transport
        if self._buffered > HANDSHAKE_BUFFER_BYTES and isinstance(transport, asyncio.ReadTransport):
            self.reading_paused = True
            transport.pause_reading()
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


class StreamWebSocket(WebSocketTransport):
    """The path for any byte stream (trio, a TLS stream, httpx's upgraded connection):
    ``receive`` reads and parses in the caller's task."""

    def __init__(
        self,
        max_message_bytes: int,
        accepted: Accepted,
        read: Callable[[], Awaitable[bytes]],
        write: Callable[[bytes], Awaitable[None]],
        close: Callable[[], Awaitable[None]],
        *,
        server: bool = False,
    ) -> None:
        super().__init__(max_message_bytes, accepted, server=server)
        self._read = read
        self._write = write
        self._close_stream = close
        self._write_lock = anyio.Lock(fast_acquire=True)  # uncontended: no checkpoint
        self._reading = False
        self._writing = False
        self._slices_written = 0  # what the peer has taken of the writes, in slices
        self._stream_closed = False
        self._absorb(accepted.rest)

    async def receive(self) -> bytes:
        # Answers first, even with a message waiting: a ping parsed with it (behind the
        # 101, or between its fragments) is answered before the caller can answer the
        # message (RFC 6455 5.5.2; Autobahn 5.6 and 5.7).
        if self._controls:
            await self._flush_controls()
        return await super().receive()

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

    def output_waiting(self) -> tuple[bool, int]:
        return self._writing, self._slices_written

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
        await self._write_bytes(text_frames(messages, mask=self._mask))

    async def _write_control(self, frame: bytes) -> None:
        if self._closed or self._peer_closed:
            raise self._closed_error()
        await self._write_bytes(frame)

    async def _write_bytes(self, data: bytes) -> None:
        try:
            async with self._write_lock:
                self._writing = True
                try:
                    if len(data) <= WRITE_SLICE_BYTES:
                        await self._write(data)
                        self._slices_written += 1
                    else:  # in slices: the stall and keep-alive clocks see it progress
                        whole = memoryview(data)
                        for start in range(0, len(whole), WRITE_SLICE_BYTES):
                            await self._write(bytes(whole[start : start + WRITE_SLICE_BYTES]))
                            self._slices_written += 1
                finally:
                    self._writing = False
                self._sent += 1
        except (anyio.BrokenResourceError, anyio.ClosedResourceError, OSError) as exc:
            raise anyio.BrokenResourceError from exc

    async def _close(self, code: int, reason: str | None) -> None:
        if self._stream_closed:
            return
        already = self._closed
        self._closed = True
        with anyio.CancelScope(shield=True):
            # a peer that reads nothing never takes the close frame: the wait is bounded
            with anyio.move_on_after(2 * CLOSE_TIMEOUT):
                if self._controls:  # the answer to the peer's close, or ours after an error
                    await self._flush_controls_quietly()
                elif not already and not self._peer_closed:
                    frame = control_frame(OP_CLOSE, close_payload(code, reason), mask=self._mask)
                    self._controls.append(frame)
                    await self._flush_controls_quietly()
                    if not self._reading:  # nobody else reads: wait for the peer's answer
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


def stream_reader(stream: anyio.abc.ByteReceiveStream) -> Callable[[], Awaitable[bytes]]:
    """``stream``'s next bytes, ``b""`` at EOF (what :class:`StreamWebSocket` reads)."""

    async def read() -> bytes:
        try:
            return await stream.receive(READ_BYTES)
        except anyio.EndOfStream:
            return b""

    return read
