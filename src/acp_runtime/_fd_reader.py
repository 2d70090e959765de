"""Reading a pipe on asyncio with the descriptor kept registered, as asyncio's own
pipe transports do.

:func:`anyio.wait_readable` registers the descriptor before each wait and removes
it after (two ``epoll_ctl`` calls per message), and the read after the wake-up is
one loop iteration late. Here the descriptor stays registered and the readiness
callback itself reads into a buffer, so a request/response exchange costs no extra
system calls and no failing read. Reading pauses (the descriptor is unregistered)
while the buffer holds :data:`PAUSE_BYTES` that nobody has taken.

While a :meth:`LoopFdReader.receive` is parked and nothing is buffered, the bytes just
read can first be offered to an :data:`EagerConsumer` right in the readiness callback:
a consumer that handles them synchronously (the connection settling a response) saves
waking the receiving task, a whole event-loop iteration.
"""

from __future__ import annotations

import asyncio
import os
import threading
from collections import deque
from collections.abc import Callable

import anyio
import anyio.lowlevel

READ_BYTES = 256 * 1024
"""Largest read per readiness callback (asyncio's pipe transports use the same)."""

PAUSE_BYTES = 1024 * 1024
"""Buffered bytes at which reading pauses until the consumer catches up."""

_readv = getattr(os, "readv", None)


class ReadBuffer:
    """Reads of up to ``size`` bytes into one reused buffer (:meth:`for_this_thread`:
    the one every reader of the thread shares).

    ``os.read(fd, n)`` allocates ``n`` bytes before reading, then shrinks them to what
    arrived. 256 KiB is above glibc's mmap threshold, so whether a small message costs an
    ``mmap``, an ``mremap``, a ``munmap`` and a page fault depends on the allocator's
    history: the same code measured 36 or 66 µs of client CPU per ping from one run to the
    next. Reading into a reused buffer and copying out only what arrived makes every read
    cost one small allocation.
    """

    __slots__ = ("view",)

    def __init__(self, size: int) -> None:
        self.view = memoryview(bytearray(size))
        """The buffer itself, for readers that fill it another way (asyncio's
        ``BufferedProtocol``); what they keep of it they copy before the next read."""

    @classmethod
    def for_this_thread(cls) -> ReadBuffer:
        """This thread's :data:`READ_BYTES` buffer, shared by its readers: each read is
        copied out before the next one starts (a read and its copy run in one call, or
        in one callback of the event loop), and a buffer per descriptor would hold
        256 KiB for each of a server's connections."""
        try:
            buffer: ReadBuffer = _thread_state.read_buffer
        except AttributeError:
            buffer = _thread_state.read_buffer = cls(READ_BYTES)
        return buffer

    def read(self, fd: int, max_bytes: int) -> bytes:
        """``os.read(fd, max_bytes)``, without the oversized allocation."""
        if _readv is None:  # pragma: no cover - Windows has no readv
            return os.read(fd, max_bytes)
        view = self.view if max_bytes >= len(self.view) else self.view[:max_bytes]
        return bytes(view[: _readv(fd, [view])])


_thread_state = threading.local()

EagerConsumer = Callable[[bytes], bytes]
"""Takes freshly read bytes in the readiness callback and returns the part it did not
consume (``b""``: all of it), which is then buffered for :meth:`LoopFdReader.receive`
as if it had just been read. It must not raise."""


class LoopFdReader:
    """Buffered reads of one non-blocking descriptor on a running asyncio loop."""

    def __init__(self, loop: asyncio.AbstractEventLoop, fd: int) -> None:
        self._loop = loop
        self._fd = fd
        self._chunks: deque[bytes] = deque()
        self._buffered = 0
        self._eof = False
        self._error: Exception | None = None
        self._closed = False
        self._registered = False
        self._waiter: asyncio.Future[None] | None = None
        self._read_buffer = ReadBuffer.for_this_thread()
        self.eager: EagerConsumer | None = None
        """Offered what is read while a receive is parked on an empty buffer."""

    async def receive(self, max_bytes: int) -> bytes:
        """Up to ``max_bytes`` bytes, waiting for some if none are buffered.

        Raises :class:`anyio.EndOfStream` at EOF, :class:`anyio.BrokenResourceError`
        for a read error and :class:`anyio.ClosedResourceError` after :meth:`close`.
        """
        if self._chunks:
            await anyio.lowlevel.checkpoint()  # a receive is always a cancellation point
        while not self._chunks:
            if self._closed:
                raise anyio.ClosedResourceError
            if self._error is None and not self._eof:
                self._register()
            if self._error is not None:
                raise anyio.BrokenResourceError from self._error
            if self._eof:
                raise anyio.EndOfStream
            self._waiter = waiter = self._loop.create_future()
            try:
                await waiter
            finally:
                self._waiter = None
        return self._take(max_bytes)

    def close(self) -> None:
        """Stop reading; a parked :meth:`receive` raises ClosedResourceError."""
        self._closed = True
        self._unregister()
        self._wake()

    def _take(self, max_bytes: int) -> bytes:
        chunk = self._chunks.popleft()
        if len(chunk) > max_bytes:
            self._chunks.appendleft(chunk[max_bytes:])
            chunk = chunk[:max_bytes]
        self._buffered -= len(chunk)
        if self._buffered < PAUSE_BYTES and not (self._eof or self._error or self._closed):
            self._register()
        return chunk

    def _on_readable(self) -> None:
        try:
            data = self._read_buffer.read(self._fd, READ_BYTES)
        except (BlockingIOError, InterruptedError):
            return
        except OSError as exc:
            self._error = exc
            self._unregister()
        else:
            if data and self.eager is not None and self._receive_is_parked():
                data = self.eager(data)
                if not data:
                    return
            if data:
                self._chunks.append(data)
                self._buffered += len(data)
                if self._buffered >= PAUSE_BYTES:
                    self._unregister()
            else:
                self._eof = True
                self._unregister()
        self._wake()

    def _receive_is_parked(self) -> bool:
        waiter = self._waiter
        return waiter is not None and not waiter.done() and not self._chunks

    def _wake(self) -> None:
        waiter = self._waiter
        if waiter is not None and not waiter.done():
            waiter.set_result(None)

    def _register(self) -> None:
        if self._registered:
            return
        try:
            self._loop.add_reader(self._fd, self._on_readable)
        except (OSError, ValueError) as exc:  # the descriptor was closed behind our back
            self._error = exc
        else:
            self._registered = True

    def _unregister(self) -> None:
        if self._registered:
            self._registered = False
            self._loop.remove_reader(self._fd)
