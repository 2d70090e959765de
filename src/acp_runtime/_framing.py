"""Newline-delimited JSON framing over anyio byte streams.

ACP peers exchange one JSON text per line. This module turns any anyio
``ByteReceiveStream`` / ``ByteSendStream`` pair (process pipes, sockets, stdio) into a
:class:`~acp_runtime._transport.Transport` of whole messages. It does not parse JSON:
a line is handed over as bytes, even if it is not valid UTF-8, so the connection
decides what a bad line gets.

Reading rules:

* a line ends at ``\\n``; a ``\\r`` right before it is stripped too (``\\r\\n`` peers);
* blank lines (empty, or JSON white space only: spaces, tabs, ``\\r``) are skipped, as
  JSON-RPC has no empty message and a stray newline from a peer's ``print()`` should not
  cost a parse-error reply;
* a UTF-8 byte-order mark at the very start of the stream is dropped (some Windows
  tools write one); anywhere else it is part of the line;
* a partial final line at EOF is returned as a message;
* a line longer than ``LONG_LINE_BYTES`` is collected in an :class:`io.BytesIO`, whose
  buffer becomes the returned ``bytes`` without a copy, so a long line costs its size
  (plus the buffer's growth headroom, never touched), not twice that;
* a line longer than ``max_message_bytes`` is discarded without being buffered, then
  :class:`~acp_runtime._transport.MessageTooLarge` is raised once and reading resumes at
  the next line; if EOF comes before that line's newline, the next receive raises
  :class:`anyio.EndOfStream`.

A receiver that can handle some messages synchronously may ask to see them first
(:meth:`LineTransport.set_eager_receiver`): where the byte stream supports it (the
asyncio fd streams of :mod:`acp_runtime._stdio`), each complete line that arrives while
the transport is idle (a ``receive`` waiting, nothing buffered) is offered to it from
the loop's readiness callback, in order, until it declines one; that line and the rest
then take the normal ``receive`` path.
"""

from __future__ import annotations

import io
import re
from collections.abc import Callable, Iterable, Sequence
from typing import cast

import anyio
from anyio.abc import ByteReceiveStream, ByteSendStream, ByteStream

from ._transport import MessageTooLarge

EagerReceiver = Callable[[bytes], bool]
"""Handles one complete message synchronously and returns True, or returns False to
leave it (and everything after it) to ``receive``. It must not raise."""

DEFAULT_MAX_MESSAGE_BYTES = 64 * 1024 * 1024
"""Per-line limit. ACP messages carry whole files (``fs/read_text_file`` results,
embedded resources, base64 images), so the limit must be far above any sane
message, yet low enough that a runaway peer cannot exhaust memory."""

READ_CHUNK_BYTES = 256 * 1024
"""Largest read asked of the byte stream; memory held is at most the limit plus this."""

EAGER_MAX_BYTES = 64 * 1024
"""Larger reads (or partial lines) skip the eager path: it is for small messages, and
re-joining a long partial line on every read would be quadratic."""

LONG_LINE_BYTES = 1024 * 1024
"""A partial line longer than this is collected without copies (see the module docs);
shorter ones are cut out of the shared buffer, a copy that costs at most this much."""

TOO_LARGE_PREFIX_BYTES = 1024
"""How much of a skipped line :class:`MessageTooLarge` keeps (ids usually come early);
never more than the limit itself."""

# Byte values, not one-byte strings: on Python 3.11 ``b"\n" in data`` first tries the
# needle as an integer and builds and drops a TypeError (about ten times the cost).
_NEWLINE = 0x0A
_CR = 0x0D
_BOM = b"\xef\xbb\xbf"
_WHITE_SPACE = b" \t\r"
_WHITE_SPACE_BYTES = frozenset(_WHITE_SPACE)
_BLANK = re.compile(rb"[ \t\r]*")


def _has_content(line: bytes) -> bool:
    """False for a line of JSON white space only, which is skipped like an empty one.
    (A match, not ``strip``: stripping a long line would copy it.)"""
    return _BLANK.fullmatch(line) is None


class LineReader:
    """Splits a byte stream into lines with bounded memory.

    Not safe for concurrent ``receive`` calls (a second one raises
    :class:`anyio.BusyResourceError`); cancelling a ``receive`` loses no data.
    Lines already buffered are returned without yielding to the event loop, so a
    burst costs no scheduling per message; a read (a checkpoint) comes at the latest
    after one read chunk's worth of lines.
    """

    def __init__(
        self,
        stream: ByteReceiveStream,
        *,
        max_line_bytes: int = DEFAULT_MAX_MESSAGE_BYTES,
        read_chunk_bytes: int = READ_CHUNK_BYTES,
        long_line_bytes: int = LONG_LINE_BYTES,
    ) -> None:
        if max_line_bytes < 1:
            raise ValueError("max_line_bytes must be positive")
        self.stream = stream
        self.max_line_bytes = max_line_bytes
        self._read_chunk_bytes = read_chunk_bytes
        self._long_line_bytes = long_line_bytes
        self._prefix_bytes = min(TOO_LARGE_PREFIX_BYTES, max_line_bytes)
        self._buffer = bytearray()
        self._scanned = 0  # self._buffer[:self._scanned] is known to hold no newline
        self._skipping: bytes | None = None  # prefix of the over-limit line being skipped
        self._long: io.BytesIO | None = None  # a long line so far (no newline in it)
        self._long_ended = False  # its newline has come (what follows it is in _buffer)
        self._at_start = True  # a byte-order mark may still come first
        self._eof = False
        self._receiving = False

    async def receive(self) -> bytes:
        """Next non-blank line without its line ending.

        Raises:
            MessageTooLarge: a line over the limit was skipped.
            anyio.EndOfStream: the stream ended and no data is left.
            anyio.BrokenResourceError: the underlying stream failed.
        """
        if self._receiving:  # a flag, not an anyio.ResourceGuard: two calls less per line
            raise anyio.BusyResourceError("reading from")
        self._receiving = True
        try:
            while self._at_start:
                await self._drop_byte_order_mark()
            while True:
                if self._skipping is not None:
                    await self._skip_rest_of_line(self._skipping)
                line = self._take_line() if self._long is None else self._take_long_line()
                if line:
                    return line
                if line is None:
                    await self._fill()
        finally:
            self._receiving = False

    async def _drop_byte_order_mark(self) -> None:
        """Read until the stream's first bytes tell whether they are a byte-order mark."""
        buffer = self._buffer
        if len(buffer) < len(_BOM) and _BOM.startswith(buffer) and not self._eof:
            await self._fill()
            return
        if buffer.startswith(_BOM):
            del buffer[: len(_BOM)]
        self._at_start = False

    def _take_line(self) -> bytes | None:
        """A complete line from the buffer (``b""`` if blank), or None if more data is needed."""
        buffer = self._buffer
        newline = buffer.find(_NEWLINE, self._scanned)
        if newline < 0:
            if self._eof and buffer:
                newline = len(buffer)  # partial final line
            else:
                self._scanned = len(buffer)
                # +1: a line of exactly the limit may be waiting for its "\n" after a "\r".
                if len(buffer) > self.max_line_bytes + 1:
                    self._skipping = bytes(buffer[: self._prefix_bytes])
                    buffer.clear()
                    self._scanned = 0
                    return b""
                if len(buffer) > self._long_line_bytes:  # from now on without copies
                    self._long = io.BytesIO()
                    self._long.write(buffer)
                    buffer.clear()
                    self._scanned = 0
                return None
        end = newline - 1 if newline and buffer[newline - 1] == _CR else newline
        if end > self.max_line_bytes:  # keep only the prefix: no copy of the whole line
            prefix = bytes(buffer[: self._prefix_bytes])
            del buffer[: newline + 1]
            self._scanned = 0
            raise MessageTooLarge(self.max_line_bytes, prefix)
        with memoryview(buffer) as view:
            line = bytes(view[:end])
        del buffer[: newline + 1]  # O(1): bytearray drops a prefix by moving its start
        self._scanned = 0
        if line and line[0] in _WHITE_SPACE_BYTES and not _has_content(line):
            return b""
        return line

    def _take_long_line(self) -> bytes | None:
        """:meth:`_take_line` for a line collected in ``self._long``."""
        long = cast(io.BytesIO, self._long)
        end = long.tell()
        if not self._long_ended and not self._eof:
            if end <= self.max_line_bytes + 1:
                return None
            self._skipping = self._long_prefix()
            self._long = None
            return b""
        with long.getbuffer() as view:
            if view[end - 1] == _CR:
                end -= 1
        if end > self.max_line_bytes:
            prefix = self._long_prefix()
            self._long, self._long_ended = None, False
            raise MessageTooLarge(self.max_line_bytes, prefix)
        long.truncate(end)
        line = long.getvalue()  # the buffer itself, shrunk in place: no copy
        self._long, self._long_ended = None, False
        if line[0] in _WHITE_SPACE_BYTES and not _has_content(line):
            return b""
        return line

    def _long_prefix(self) -> bytes:
        with cast(io.BytesIO, self._long).getbuffer() as view:
            return bytes(view[: self._prefix_bytes])

    def offer_lines(self, chunk: bytes, receiver: EagerReceiver) -> bytes:
        """Hand the complete lines of the buffer plus ``chunk`` to ``receiver`` while it
        takes them; return what is left for ``receive`` (``b""`` if only a partial
        line remains, which stays buffered). Called while a ``receive`` waits for data,
        so nothing complete is buffered ahead of ``chunk``."""
        buffer = self._buffer
        if (
            self._skipping is not None
            or self._long is not None
            or len(buffer) + len(chunk) > EAGER_MAX_BYTES
        ):
            return chunk
        data = bytes(buffer) + chunk if buffer else chunk
        if self._at_start:
            if len(data) < len(_BOM) and _BOM.startswith(data):
                return chunk  # too short to tell: ``receive`` waits for more
            self._at_start = False
            data = data.removeprefix(_BOM)
        start = 0
        while (newline := data.find(_NEWLINE, start)) >= 0:
            end = newline - 1 if newline > start and data[newline - 1] == _CR else newline
            if end - start > self.max_line_bytes:
                break  # over the limit: ``receive`` reports it
            if end > start and (
                data[start] not in _WHITE_SPACE_BYTES or _has_content(data[start:end])
            ):
                if not receiver(data[start:end]):
                    break  # declined: it and all after it go the normal way, in order
            start = newline + 1
        else:
            buffer[:] = data[start:]  # a partial line (or nothing): wait for the rest
            self._scanned = len(buffer)
            return b""
        buffer.clear()
        self._scanned = 0
        return data[start:]

    async def _fill(self) -> None:
        if self._eof:
            raise anyio.EndOfStream
        try:
            chunk = await self.stream.receive(self._read_chunk_bytes)
        except anyio.EndOfStream:
            self._eof = True
        else:
            long = self._long
            if long is None:
                self._buffer += chunk
            elif (newline := chunk.find(_NEWLINE)) < 0:
                long.write(chunk)
            else:
                long.write(memoryview(chunk)[:newline])
                self._buffer += memoryview(chunk)[newline + 1 :]
                self._long_ended = True

    async def _skip_rest_of_line(self, prefix: bytes) -> None:
        """Drop input up to the next newline, keeping nothing, then raise MessageTooLarge."""
        while not self._eof:
            try:
                chunk = await self.stream.receive(self._read_chunk_bytes)
            except anyio.EndOfStream:
                self._eof = True
                break
            newline = chunk.find(_NEWLINE)
            if newline >= 0:
                self._buffer += memoryview(chunk)[newline + 1 :]
                break
        self._skipping = None
        raise MessageTooLarge(self.max_line_bytes, prefix)


class LineTransport:
    """A :class:`~acp_runtime._transport.Transport` of newline-delimited messages.

    Args:
        receive_stream: where incoming bytes come from.
        send_stream: where outgoing lines go; may be the same object as
            ``receive_stream`` for a bidirectional stream such as a socket.
        max_message_bytes: per-line limit for incoming messages (see module docs).
    """

    def __init__(
        self,
        receive_stream: ByteReceiveStream,
        send_stream: ByteSendStream,
        *,
        max_message_bytes: int = DEFAULT_MAX_MESSAGE_BYTES,
    ) -> None:
        self._reader = LineReader(receive_stream, max_line_bytes=max_message_bytes)
        self._send_stream = send_stream
        # fast_acquire: no extra scheduler round trip per message when uncontended.
        self._send_lock = anyio.Lock(fast_acquire=True)
        self._closed = False
        self._try_send_nowait: Callable[[bytes], bool] | None = getattr(
            send_stream, "try_send_nowait", None
        )
        self._nowait_bytes: int = getattr(send_stream, "nowait_max_bytes", 0)

    @property
    def max_message_bytes(self) -> int:
        return self._reader.max_line_bytes

    def set_eager_receiver(self, receiver: EagerReceiver | None) -> bool:
        """Offer messages that arrive while this transport is idle to ``receiver`` first
        (see the module docs); False if the receive stream cannot (then it never is)."""
        set_consumer = getattr(self._reader.stream, "set_eager_consumer", None)
        if set_consumer is None:
            return False
        if receiver is None:
            set_consumer(None)
        else:
            reader = self._reader

            def consume(chunk: bytes) -> bytes:
                return reader.offer_lines(chunk, receiver)

            set_consumer(consume)
        return True

    async def receive(self) -> bytes:
        """Next message (one line, framing stripped). See :class:`LineReader.receive`."""
        if self._closed:
            raise anyio.ClosedResourceError
        return await self._reader.receive()

    async def send(self, message: bytes) -> None:
        """Write ``message`` plus ``\\n`` in one write; concurrent sends never interleave.

        Raises:
            ValueError: ``message`` contains a newline, which would break framing.
            anyio.BrokenResourceError: the peer is gone.
            anyio.ClosedResourceError: this transport (or its send side) was closed.
        """
        if _NEWLINE in message:
            raise ValueError("a newline-delimited message must not contain a newline")
        frame = message + b"\n"
        async with self._send_lock:
            await self._send_stream.send(frame)

    def send_nowait(self, message: bytes) -> bool:
        """Write ``message`` at once from synchronous code if the send stream can do so
        without blocking (see ``FdSendStream.try_send_nowait``) and no send is under
        way; False means nothing was written and :meth:`send` must be used. This lets
        a request reach the wire without waking a writer task."""
        try_send = self._try_send_nowait
        if try_send is None or self._closed or self._send_lock.locked() or _NEWLINE in message:
            return False
        return try_send(message + b"\n")

    def send_burst_nowait(self, messages: Iterable[bytes]) -> int:
        """:meth:`send_nowait` for the first of ``messages``, as many as fit in one
        write the send stream takes whole (``nowait_max_bytes``): how many were
        written (0: none). A burst of queued messages reaches the peer without waiting
        for the writer task, in a write per few kilobytes instead of one per message."""
        try_send, limit = self._try_send_nowait, self._nowait_bytes
        if try_send is None or self._closed or self._send_lock.locked():
            return 0
        lines: list[bytes] = []
        size = 0
        for message in messages:
            size += len(message) + 1
            if size > limit or _NEWLINE in message:
                break
            lines.append(message)
        if not lines or not try_send(b"\n".join(lines) + b"\n"):
            return 0
        return len(lines)

    async def send_many(self, messages: Sequence[bytes]) -> None:
        """:meth:`send` for several messages, in order, in one write: a backlog costs
        one system call and one wake-up of the peer instead of one per message."""
        if any(_NEWLINE in message for message in messages):
            raise ValueError("a newline-delimited message must not contain a newline")
        frame = b"\n".join(messages) + b"\n"
        async with self._send_lock:
            await self._send_stream.send(frame)

    async def send_eof(self) -> None:
        """Close the outgoing direction only (the peer reads EOF); receiving continues."""
        async with self._send_lock:
            if isinstance(self._send_stream, ByteStream):
                await self._send_stream.send_eof()
            else:
                await self._send_stream.aclose()

    async def aclose(self) -> None:
        """Close both directions; idempotent."""
        if self._closed:
            return
        self._closed = True
        try:
            await self._send_stream.aclose()
        finally:
            if self._reader.stream is not cast(object, self._send_stream):
                await self._reader.stream.aclose()
