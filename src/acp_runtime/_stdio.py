"""A transport over this process's stdin and stdout, for agents launched by an editor.

anyio has no async stdin, so this module reads and writes the file descriptors
itself. Pipes and sockets (what an editor gives an agent) are switched to
non-blocking mode and waited on with :func:`anyio.wait_readable` /
:func:`anyio.wait_writable`, which works on asyncio and trio without threads; on
asyncio the read side keeps its descriptor registered with the loop instead
(:mod:`acp_runtime._fd_reader`), which saves two system calls and a failing read
per message. A small message can be written at once from synchronous code
(:meth:`FdSendStream.try_send_nowait`) where such a write is all or nothing: on a
pipe up to ``PIPE_BUF`` bytes (POSIX), and on Linux on a Unix stream socket (what
Node.js gives a child for ``stdio: "pipe"``, so what editors written in TypeScript
give their agents) up to the same size.
Descriptors the event loop cannot poll (regular files from ``< file`` redirects,
terminals, ``/dev/null``, and everything on Windows) fall back to blocking calls
in a worker thread.

By default :func:`stdio_transport` isolates the protocol: it moves the editor's
pipes to private descriptors and points fd 0 at ``/dev/null`` and fd 1 at stderr.
A stray ``print()`` or a child process that inherits stdio then cannot corrupt the
message stream or steal its input, and only the transport's descriptors are
non-blocking.
"""

from __future__ import annotations

import asyncio
import os
import select
import socket
import stat
import sys

import anyio
import anyio.lowlevel
import anyio.to_thread
from anyio.abc import ByteReceiveStream, ByteSendStream

from ._fd_reader import EagerConsumer, LoopFdReader, ReadBuffer
from ._framing import DEFAULT_MAX_MESSAGE_BYTES, LineTransport

ATOMIC_PIPE_WRITE_BYTES: int = getattr(select, "PIPE_BUF", 512)
"""POSIX: a write of at most this many bytes to a pipe is never split."""

_UNIX_SKB_OVERHEAD = 64
"""Linux puts a Unix stream write of up to ``SO_SNDBUF / 2 - 64`` bytes in one buffer,
which a non-blocking write queues whole or not at all (``unix_stream_sendmsg``)."""


def atomic_write_bytes(fd: int) -> int:
    """Largest write to ``fd`` that is all or nothing, or 0 if none is known to be:
    ``PIPE_BUF`` on a pipe; on Linux, on a Unix stream socket, ``PIPE_BUF`` or less
    if the send buffer was made small."""
    mode = os.fstat(fd).st_mode
    if stat.S_ISFIFO(mode):
        return ATOMIC_PIPE_WRITE_BYTES
    if not (stat.S_ISSOCK(mode) and sys.platform == "linux"):
        return 0
    try:
        sock = socket.socket(fileno=fd)
    except OSError:  # a socket Python cannot describe: no promise about its writes
        return 0
    try:
        if sock.family != socket.AF_UNIX or sock.type != socket.SOCK_STREAM:
            return 0
        send_buffer = sock.getsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF)
    finally:
        sock.detach()
    return max(0, min(ATOMIC_PIPE_WRITE_BYTES, send_buffer // 2 - _UNIX_SKB_OVERHEAD))


def is_pollable(fd: int) -> bool:
    """Whether the event loop can wait on ``fd`` (a pipe or socket on a POSIX system)."""
    if sys.platform == "win32":
        return False
    mode = os.fstat(fd).st_mode
    return stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode)


class _FdStream:
    """Shared state of one file descriptor: non-blocking setup, close and restore."""

    def __init__(self, fd: int, *, close_fd: bool) -> None:
        self.fd = fd
        self._close_fd = close_fd
        self._closed = False
        self._pollable = is_pollable(fd)
        self._made_non_blocking = self._pollable and os.get_blocking(fd)
        if self._made_non_blocking:
            os.set_blocking(fd, False)

    def _check_open(self) -> None:
        if self._closed:
            raise anyio.ClosedResourceError

    async def aclose(self) -> None:
        if self._closed:
            return
        self._closed = True
        if self._pollable:
            self._stop_loop_reader()
            anyio.notify_closing(self.fd)  # wakes a task parked in wait_readable/writable
            if self._made_non_blocking:
                os.set_blocking(self.fd, True)
        if self._close_fd:
            os.close(self.fd)
        await anyio.lowlevel.checkpoint()

    def _stop_loop_reader(self) -> None:
        """Hook for the receive side: unregister the fd before it is closed."""


class FdReceiveStream(_FdStream, ByteReceiveStream):
    """Reads a file descriptor; see the module docs for how it waits."""

    def __init__(self, fd: int, *, close_fd: bool = False) -> None:
        super().__init__(fd, close_fd=close_fd)
        self._guard = anyio.ResourceGuard("reading from")
        self._loop_reader: LoopFdReader | None = None
        self._loop_reader_checked = not self._pollable
        self._eager: EagerConsumer | None = None

    def set_eager_consumer(self, consumer: EagerConsumer | None) -> None:
        """Offer bytes read while a :meth:`receive` waits on an empty buffer to
        ``consumer`` first, in the loop's readiness callback (asyncio pipes and
        sockets only; elsewhere it is never called). See :mod:`acp_runtime._fd_reader`."""
        self._eager = consumer
        if self._loop_reader is not None:
            self._loop_reader.eager = consumer

    async def receive(self, max_bytes: int = 65536) -> bytes:
        with self._guard:
            if not self._loop_reader_checked:
                self._loop_reader_checked = True
                self._loop_reader = _asyncio_fd_reader(self.fd)
                if self._loop_reader is not None:
                    self._loop_reader.eager = self._eager
            if self._loop_reader is not None:
                self._check_open()
                return await self._loop_reader.receive(max_bytes)
            await anyio.lowlevel.checkpoint()
            try:
                while True:
                    self._check_open()
                    if not self._pollable:
                        data = await anyio.to_thread.run_sync(
                            os.read, self.fd, max_bytes, abandon_on_cancel=True
                        )
                        break
                    try:
                        data = ReadBuffer.for_this_thread().read(self.fd, max_bytes)
                        break
                    except BlockingIOError:
                        await anyio.wait_readable(self.fd)
            except OSError as exc:
                raise anyio.BrokenResourceError from exc
            if not data:
                raise anyio.EndOfStream
            return data

    def _stop_loop_reader(self) -> None:
        if self._loop_reader is not None:
            self._loop_reader.close()


def _asyncio_fd_reader(fd: int) -> LoopFdReader | None:
    """A registered-fd reader when running in an asyncio task (not trio, nor a trio
    guest on an asyncio loop); None where the loop cannot watch descriptors."""
    try:
        loop = asyncio.get_running_loop()
    except RuntimeError:
        return None
    if asyncio.current_task() is None or not hasattr(loop, "add_reader"):
        return None
    return LoopFdReader(loop, fd)


class FdSendStream(_FdStream, ByteSendStream):
    """Writes a file descriptor, all of each item, looping over partial writes.

    A send cancelled after part of its item was written leaves the reader with a
    torn message, so the stream then counts as broken.
    """

    def __init__(self, fd: int, *, close_fd: bool = False) -> None:
        super().__init__(fd, close_fd=close_fd)
        self._guard = anyio.ResourceGuard("writing to")
        self._atomic_bytes = atomic_write_bytes(fd) if self._pollable else 0
        self._torn = False
        self._sending = False

    @property
    def nowait_max_bytes(self) -> int:
        """The largest item :meth:`try_send_nowait` may write (0: it never writes)."""
        return self._atomic_bytes

    def try_send_nowait(self, item: bytes) -> bool:
        """Write all of ``item`` now if that can neither block nor tear it, else write
        nothing and return False (then :meth:`send` it). Only items up to
        :func:`atomic_write_bytes` qualify, and only while no :meth:`send` is under
        way. An error is left for the next :meth:`send` to report."""
        if self._sending or self._closed or self._torn or len(item) > self._atomic_bytes:
            return False
        try:
            written = os.write(self.fd, item)
        except OSError:  # BlockingIOError: the pipe is full; others recur in send()
            return False
        if written != len(item):  # never, by atomic_write_bytes: fail rather than garble
            self._torn = True
        return True

    async def send(self, item: bytes) -> None:
        with self._guard:
            self._sending = True
            try:
                await self._send(item)
            finally:
                self._sending = False

    async def _send(self, item: bytes) -> None:
        await anyio.lowlevel.checkpoint()
        if self._torn:
            raise anyio.BrokenResourceError("an earlier send was cancelled midway")
        remaining = memoryview(item)
        try:
            while remaining:
                self._check_open()
                if not self._pollable:
                    written = await anyio.to_thread.run_sync(os.write, self.fd, remaining)
                else:
                    try:
                        written = os.write(self.fd, remaining)
                    except BlockingIOError:
                        await anyio.wait_writable(self.fd)
                        continue
                remaining = remaining[written:]
        except OSError as exc:  # BrokenPipeError when the reader is gone
            raise anyio.BrokenResourceError from exc
        except BaseException:
            if 0 < len(remaining) < len(item):
                self._torn = True
            raise


def stdio_transport(
    *, max_message_bytes: int = DEFAULT_MAX_MESSAGE_BYTES, isolate: bool = True
) -> LineTransport:
    """Newline-delimited transport over this process's stdin (in) and stdout (out).

    Flushes :data:`sys.stdout` first so earlier buffered output cannot land in the
    middle of a message. Call once per process.

    Args:
        max_message_bytes: per-line limit for incoming messages.
        isolate: move the protocol to private copies of fds 0 and 1, then point fd 0
            at ``/dev/null`` and fd 1 at stderr, so later ``print()`` output goes to
            stderr and child processes neither write into nor read from the protocol
            stream. :meth:`~LineTransport.aclose` then closes the copies, which the
            editor sees as EOF. With ``isolate=False`` fds 0 and 1 are used (and left
            open) as they are.
    """
    sys.stdout.flush()
    if not isolate:
        return LineTransport(
            FdReceiveStream(0), FdSendStream(1), max_message_bytes=max_message_bytes
        )
    protocol_in, protocol_out = os.dup(0), os.dup(1)  # non-inheritable copies
    devnull = os.open(os.devnull, os.O_RDWR)
    try:
        os.dup2(devnull, 0)
        try:
            os.dup2(2, 1)
        except OSError:  # no usable stderr: drop stray output instead
            os.dup2(devnull, 1)
    finally:
        os.close(devnull)
    return LineTransport(
        FdReceiveStream(protocol_in, close_fd=True),
        FdSendStream(protocol_out, close_fd=True),
        max_message_bytes=max_message_bytes,
    )
