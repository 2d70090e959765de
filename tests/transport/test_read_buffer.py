"""``ReadBuffer``: what ``os.read`` returns, without allocating the whole read size each time."""

from __future__ import annotations

import os
import threading
import tracemalloc
from collections.abc import Iterator

import pytest

from acp_runtime._fd_reader import READ_BYTES, ReadBuffer


@pytest.fixture
def pipe() -> Iterator[tuple[int, int]]:
    read_fd, write_fd = os.pipe()
    yield read_fd, write_fd
    for fd in (read_fd, write_fd):
        try:
            os.close(fd)
        except OSError:
            pass


def test_reads_what_arrived_up_to_the_limit(pipe: tuple[int, int]) -> None:
    read_fd, write_fd = pipe
    buffer = ReadBuffer(16)
    os.write(write_fd, b"0123456789abcdefXYZ")
    assert buffer.read(read_fd, 64) == b"0123456789abcdef"  # at most the buffer
    assert buffer.read(read_fd, 2) == b"XY"  # at most max_bytes
    first = buffer.read(read_fd, 16)
    assert first == b"Z" and type(first) is bytes
    os.write(write_fd, b"next")
    assert buffer.read(read_fd, 16) == b"next"
    assert first == b"Z"  # earlier results are copies, not views of the reused buffer
    os.close(write_fd)
    assert buffer.read(read_fd, 16) == b""  # EOF, as os.read says it


def test_a_small_message_costs_a_small_allocation(pipe: tuple[int, int]) -> None:
    """``os.read(fd, 256 KiB)`` allocates 256 KiB for every read, however little arrived
    (and, past the allocator's mmap threshold, maps and unmaps it each time)."""
    read_fd, write_fd = pipe
    buffer = ReadBuffer(READ_BYTES)
    message = b'{"jsonrpc":"2.0","id":1,"result":{}}\n'
    tracemalloc.start()
    try:
        for _ in range(3):
            os.write(write_fd, message)
            tracemalloc.reset_peak()
            assert buffer.read(read_fd, READ_BYTES) == message
            _, peak = tracemalloc.get_traced_memory()
            assert peak < 4096
    finally:
        tracemalloc.stop()


def test_the_readers_of_a_thread_share_one_buffer_and_threads_do_not() -> None:
    """Every reader of a thread (pipes, the asyncio WebSocket socket) reads into the same
    :data:`READ_BYTES` buffer, not 256 KiB per descriptor; another thread has its own."""
    mine = ReadBuffer.for_this_thread()
    assert ReadBuffer.for_this_thread() is mine and len(mine.view) == READ_BYTES
    theirs: list[ReadBuffer] = []
    worker = threading.Thread(target=lambda: theirs.append(ReadBuffer.for_this_thread()))
    worker.start()
    worker.join()
    assert theirs[0] is not mine


def test_a_read_through_the_shared_buffer_is_a_copy(pipe: tuple[int, int]) -> None:
    read_fd, write_fd = pipe
    os.write(write_fd, b"first")
    first = ReadBuffer.for_this_thread().read(read_fd, 64)
    os.write(write_fd, b"SECOND")
    assert ReadBuffer.for_this_thread().read(read_fd, 64) == b"SECOND"
    assert first == b"first"
