"""Fast paths of the sequential round trip (issue #6): a small message written at once
from synchronous code on a pipe, and a read side that stays registered with the
asyncio loop. Each keeps the FIFO order and the error semantics of the slow path."""

from __future__ import annotations

import asyncio
import itertools
import json
import os
import select
import socket
import sys
import threading
from collections.abc import Generator, Iterable, Iterator
from typing import Any

import anyio
import pytest

from acp_runtime import ConnectionBuilder, _fd_reader
from acp_runtime._outbox import Outbox
from acp_runtime._stdio import (
    ATOMIC_PIPE_WRITE_BYTES,
    FdReceiveStream,
    FdSendStream,
    atomic_write_bytes,
)
from acp_runtime.transports import LineTransport


@pytest.fixture
def pipe() -> Iterator[tuple[int, int]]:
    read_fd, write_fd = os.pipe()
    yield read_fd, write_fd
    for fd in (read_fd, write_fd):
        try:
            os.close(fd)
        except OSError:
            pass


def _drain(fd: int) -> bytes:
    os.set_blocking(fd, False)
    try:
        return os.read(fd, 1 << 20)
    except BlockingIOError:
        return b""
    finally:
        os.set_blocking(fd, True)


# -- Outbox: send_now only while nothing is queued ---------------------------------------


@pytest.mark.anyio
async def test_outbox_keeps_fifo_once_a_message_had_to_queue() -> None:
    sent_now: list[bytes] = []
    accept = False

    def send_now(message: bytes) -> bool:
        if accept:
            sent_now.append(message)
        return accept

    outbox = Outbox(send_now)
    outbox.put(b"first")  # refused: queued
    accept = True
    outbox.put(b"second")  # must queue behind "first", not overtake it
    assert sent_now == []
    assert await outbox.take(1024) == [b"first", b"second"]
    outbox.put(b"third")  # the batch is still being written: queued behind it
    assert sent_now == []
    outbox.sent()
    assert await outbox.take(1024) == [b"third"]
    outbox.sent()
    outbox.put(b"fourth")  # nothing queued or being written: goes out at once
    assert sent_now == [b"fourth"]


class _Bursts:
    """A ``send_burst_now`` whose peer has room for ``take`` more messages (0: refuses)."""

    def __init__(self) -> None:
        self.take = 0
        self.written: list[bytes] = []

    def __call__(self, messages: Iterable[bytes]) -> int:
        taken = list(itertools.islice(messages, self.take))
        self.take -= len(taken)
        self.written += taken
        return len(taken)


@pytest.mark.anyio
async def test_a_burst_is_written_while_it_queues_in_order() -> None:
    bursts = _Bursts()
    outbox = Outbox(lambda message: False, send_burst_now=bursts, burst_bytes=8)
    bursts.take = 2
    outbox.put(b"aaaa")  # 4 bytes queued since the last try: none yet
    outbox.put_urgent(b"!!!!")  # 8: tried
    assert bursts.written == [b"!!!!", b"aaaa"]  # urgent first, then FIFO
    assert outbox.backlog == 0
    outbox.put(b"bbbb")
    outbox.put(b"cccc")  # tried, refused: the next try waits for 16 bytes
    for message in (b"dddd", b"eeee", b"ffff"):
        outbox.put(message)
    assert len(bursts.written) == 2 and outbox.backlog == 20
    bursts.take = 100
    outbox.put(b"gggg")  # 16: all of it goes out, in order
    assert bursts.written[2:] == [c * 4 for c in (b"b", b"c", b"d", b"e", b"f", b"g")]
    assert outbox.backlog == 0
    outbox.put(b"hhhh")
    outbox.put(b"iiii")  # a write went through: tries come every 8 bytes again
    assert bursts.written[-2:] == [b"hhhh", b"iiii"]
    outbox.put_after(b"cancel", 2)  # "bbbb" is on the wire: its cancel goes urgent
    assert await outbox.take(1024) == [b"cancel"]


@pytest.mark.anyio
async def test_no_burst_while_the_taker_writes_a_batch() -> None:
    bursts = _Bursts()
    outbox = Outbox(send_burst_now=bursts, burst_bytes=4)
    bursts.take = 2
    outbox.put(b"aaaa")
    outbox.put(b"bbbb")
    assert bursts.written == [b"aaaa", b"bbbb"]
    outbox.put(b"cccc")  # refused
    assert await outbox.take(1024) == [b"cccc"]  # being written: a burst must not overtake it
    bursts.take = 10
    outbox.put(b"dddd")
    outbox.put(b"eeee")
    assert bursts.written == [b"aaaa", b"bbbb"]
    outbox.sent()
    outbox.put(b"ffff")
    outbox.put(b"gggg")
    assert bursts.written == [b"aaaa", b"bbbb", b"dddd", b"eeee", b"ffff", b"gggg"]


@pytest.mark.anyio
async def test_rel4_an_awaited_send_lets_the_writers_batch_out_when_a_burst_waits_for_it() -> None:
    """After a drain, the writer task may still hold a batch the pipe has not taken
    whole, and no burst may overtake it. A sender under the pace mark that never yielded
    then starved the peer until the pace mark: with 50,000 streamed chunks, 46,000 a
    second against 64,000 once fixed (interleaved runs, TS client). An awaited send now
    gives the writer a turn each time a burst waits for its batch."""
    bursts = _Bursts()  # its ``written`` is the wire: the writer's batches go there too
    outbox = Outbox(send_burst_now=bursts, burst_bytes=8)
    writable = anyio.Event()

    async def writer() -> None:
        while batch := await outbox.take(8):
            await writable.wait()  # the pipe was full: it takes the rest once the peer reads
            bursts.written += batch
            outbox.sent()

    async with anyio.create_task_group() as tg:
        outbox.put(b"head")
        tg.start_soon(writer)
        await anyio.wait_all_tasks_blocked()  # the writer holds [b"head"]
        bursts.take = 1000
        writable.set()  # the peer reads; the sender below yields only in `drained`
        sent = [b"%04d" % n for n in range(100)]
        for message in sent:
            outbox.put(message)
            await _Awaitable(outbox)
        wire = list(bursts.written)  # what went out while the sender sent
        outbox.close()
    assert wire[:1] == [b"head"]  # the writer finished its batch meanwhile
    assert wire[1:] == sent[: len(wire) - 1]  # then the stream, in order
    assert len(wire) > len(sent) // 2  # and it flowed: not all queued behind the batch


@pytest.mark.anyio
async def test_a_burst_that_drains_the_backlog_wakes_paced_senders() -> None:
    bursts = _Bursts()
    outbox = Outbox(send_burst_now=bursts, burst_bytes=8, high_water=6, low_water=2)
    outbox.put(b"aaaa")
    outbox.put(b"bbbb")  # refused: 8 bytes queued, over the mark
    waited = anyio.Event()

    async def pace() -> None:
        await _Awaitable(outbox)
        waited.set()

    async with anyio.create_task_group() as tg:
        tg.start_soon(pace)
        await anyio.wait_all_tasks_blocked()
        assert not waited.is_set()
        bursts.take = 10
        outbox.put_urgent(b"c" * 16)  # 16 bytes: tried, and it takes all
        with anyio.fail_after(5):
            await waited.wait()
    assert outbox.backlog == 0


class _Awaitable:
    def __init__(self, outbox: Outbox) -> None:
        self._outbox = outbox

    def __await__(self) -> Generator[Any, None, None]:
        return self._outbox.drained()


# -- FdSendStream / LineTransport.send_nowait ---------------------------------------------


@pytest.mark.anyio
async def test_send_nowait_writes_a_whole_line_at_once(pipe: tuple[int, int]) -> None:
    read_fd, write_fd = pipe
    transport = LineTransport(FdReceiveStream(read_fd), FdSendStream(write_fd))
    assert transport.send_nowait(b'{"a":1}')
    assert _drain(read_fd) == b'{"a":1}\n'


@pytest.mark.anyio
async def test_send_nowait_refuses_what_could_tear_or_block(pipe: tuple[int, int]) -> None:
    read_fd, write_fd = pipe
    transport = LineTransport(FdReceiveStream(read_fd), FdSendStream(write_fd))
    assert not transport.send_nowait(b"x" * ATOMIC_PIPE_WRITE_BYTES)  # + "\n" is too big
    assert not transport.send_nowait(b"a\nb")
    assert _drain(read_fd) == b""
    os.set_blocking(write_fd, False)
    try:
        while True:  # fill the pipe
            os.write(write_fd, b"." * 4096)
    except BlockingIOError:
        pass
    assert not transport.send_nowait(b"small")  # full pipe: nothing written, no error
    _drain(read_fd)


@pytest.mark.anyio
async def test_send_burst_nowait_writes_whole_lines_up_to_the_atomic_size(
    pipe: tuple[int, int],
) -> None:
    read_fd, write_fd = pipe
    transport = LineTransport(FdReceiveStream(read_fd), FdSendStream(write_fd))
    line = b"x" * 99  # 100 bytes with its newline
    assert transport.send_burst_nowait(iter([line] * 100)) == ATOMIC_PIPE_WRITE_BYTES // 100
    assert _drain(read_fd) == (line + b"\n") * (ATOMIC_PIPE_WRITE_BYTES // 100)
    assert transport.send_burst_nowait([b"a", b"b\nc", b"d"]) == 1  # stops before a bad one
    assert _drain(read_fd) == b"a\n"
    assert transport.send_burst_nowait([b"b\nc"]) == 0
    assert transport.send_burst_nowait([b"x" * ATOMIC_PIPE_WRITE_BYTES]) == 0  # too big alone
    assert _drain(read_fd) == b""


@pytest.mark.anyio
async def test_a_burst_reaches_a_full_pipe_as_the_peer_reads_without_a_checkpoint(
    pipe: tuple[int, int],
) -> None:
    """A handler's loop of un-awaited notifications: once the pipe is full the rest
    queues, and what the peer reads meanwhile is refilled from the loop itself."""
    incoming_read, incoming_write = os.pipe()  # the peer never writes: only EOF
    read_fd, write_fd = pipe
    received = bytearray()
    try:
        transport = LineTransport(FdReceiveStream(incoming_read), FdSendStream(write_fd))
        async with ConnectionBuilder(role="agent").connect(transport) as cx:
            text = "x" * 180
            sent = 0
            while not received:  # fill the pipe, then some
                cx.send_raw_notification("_note", {"n": sent, "text": text})
                sent += 1
                if sent > 2 * 65536 // 200:
                    received += _drain(read_fd)  # the peer reads a pipeful
            for _ in range(5 * ATOMIC_PIPE_WRITE_BYTES // 200):  # past the longest try gap
                cx.send_raw_notification("_note", {"n": sent, "text": text})
                sent += 1
            refilled = _drain(read_fd)  # still no checkpoint: the writer task never ran
            assert refilled
            received += refilled
            os.close(incoming_write)
            incoming_write = -1
            with anyio.fail_after(5):
                while received.count(b"\n") < sent:
                    await anyio.sleep(0.001)
                    received += _drain(read_fd)
        numbers = [json.loads(line)["params"]["n"] for line in received.splitlines()]
        assert numbers == list(range(sent))
    finally:
        for fd in (incoming_read, incoming_write):
            if fd >= 0:
                os.close(fd)


@pytest.mark.anyio
async def test_send_nowait_refuses_while_a_send_is_under_way(pipe: tuple[int, int]) -> None:
    read_fd, write_fd = pipe
    transport = LineTransport(FdReceiveStream(read_fd), FdSendStream(write_fd))
    big = b"y" * (1 << 20)  # more than the pipe holds: the send parks half-way
    received = bytearray()
    async with anyio.create_task_group() as tg:
        tg.start_soon(transport.send, big)
        with anyio.fail_after(5):
            while not _pipe_has_data(read_fd):
                await anyio.lowlevel.checkpoint()
        assert not transport.send_nowait(b"later")  # would land inside the big line
        with anyio.fail_after(5):
            while len(received) < len(big) + 1:
                received += await anyio.to_thread.run_sync(os.read, read_fd, 1 << 20)
    assert bytes(received) == big + b"\n"
    assert transport.send_nowait(b"later")
    assert _drain(read_fd) == b"later\n"


def _pipe_has_data(fd: int) -> bool:
    return bool(select.select([fd], [], [], 0)[0])


@pytest.mark.anyio
async def test_send_nowait_after_close_or_on_a_broken_pipe(pipe: tuple[int, int]) -> None:
    read_fd, write_fd = pipe
    stream = FdSendStream(write_fd)
    os.close(read_fd)
    assert not stream.try_send_nowait(b"x\n")  # EPIPE is left for send() to report
    with pytest.raises(anyio.BrokenResourceError):
        await stream.send(b"x\n")
    await stream.aclose()
    assert not stream.try_send_nowait(b"x\n")


linux_only = pytest.mark.skipif(sys.platform != "linux", reason="Linux Unix-socket semantics")


@pytest.fixture
def unix_socketpair() -> Iterator[tuple[socket.socket, socket.socket]]:
    """What Node.js gives a child for ``stdio: "pipe"`` (so what TS editors give agents)."""
    ours, peer = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
    with ours, peer:
        yield ours, peer


@linux_only
@pytest.mark.anyio
async def test_send_nowait_on_a_unix_stream_socket(
    unix_socketpair: tuple[socket.socket, socket.socket],
) -> None:
    ours, peer = unix_socketpair
    assert atomic_write_bytes(ours.fileno()) == ATOMIC_PIPE_WRITE_BYTES
    transport = LineTransport(FdReceiveStream(peer.fileno()), FdSendStream(ours.fileno()))
    assert transport.send_nowait(b'{"a":1}')
    assert _drain(peer.fileno()) == b'{"a":1}\n'
    assert not transport.send_nowait(b"x" * ATOMIC_PIPE_WRITE_BYTES)  # + "\n" is too big
    ours.setblocking(False)
    try:
        while True:  # fill the socket
            ours.send(b"." * 4096)
    except BlockingIOError:
        pass
    assert not transport.send_nowait(b"small")  # full: nothing written, no error


@linux_only
def test_a_small_send_buffer_lowers_the_atomic_size(
    unix_socketpair: tuple[socket.socket, socket.socket],
) -> None:
    ours, _ = unix_socketpair
    ours.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 1024)  # Linux raises it to its minimum
    buffer = ours.getsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF)
    assert atomic_write_bytes(ours.fileno()) == min(ATOMIC_PIPE_WRITE_BYTES, buffer // 2 - 64)
    assert ours.fileno() >= 0  # the probe left the descriptor open


@linux_only
def test_a_socket_that_cannot_be_described_gets_no_send_nowait(
    unix_socketpair: tuple[socket.socket, socket.socket], monkeypatch: pytest.MonkeyPatch
) -> None:
    ours, _ = unix_socketpair

    def undescribable(*args: object, **kwargs: object) -> socket.socket:
        raise OSError("unknown socket")

    monkeypatch.setattr(socket, "socket", undescribable)
    assert atomic_write_bytes(ours.fileno()) == 0


def test_no_send_nowait_where_writes_may_split() -> None:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as tcp:
        assert atomic_write_bytes(tcp.fileno()) == 0
    with open(os.devnull, "wb") as devnull:
        assert atomic_write_bytes(devnull.fileno()) == 0


@linux_only
@pytest.mark.anyio
async def test_a_short_write_fails_the_stream_instead_of_garbling_it(
    unix_socketpair: tuple[socket.socket, socket.socket], monkeypatch: pytest.MonkeyPatch
) -> None:
    ours, _ = unix_socketpair
    stream = FdSendStream(ours.fileno())

    def short_write(fd: int, data: bytes) -> int:
        return len(data) - 1

    monkeypatch.setattr(os, "write", short_write)
    assert stream.try_send_nowait(b"abc\n")  # part of it is out: it cannot be queued again
    monkeypatch.undo()
    assert not stream.try_send_nowait(b"def\n")
    with pytest.raises(anyio.BrokenResourceError):
        await stream.send(b"def\n")


# -- the registered-fd reader (asyncio) ------------------------------------------------------


@pytest.mark.parametrize("anyio_backend", ["asyncio"])
@pytest.mark.anyio
async def test_reader_registers_the_fd_once_across_messages(
    pipe: tuple[int, int], monkeypatch: pytest.MonkeyPatch
) -> None:
    read_fd, write_fd = pipe
    loop = asyncio.get_running_loop()
    registrations: list[int] = []
    add_reader = loop.add_reader

    def counting_add_reader(fd: int, callback: object) -> None:
        registrations.append(fd)
        add_reader(fd, callback)  # type: ignore[arg-type]

    monkeypatch.setattr(loop, "add_reader", counting_add_reader)
    stream = FdReceiveStream(read_fd)
    for i in range(5):
        os.write(write_fd, b"%d" % i)
        with anyio.fail_after(5):
            assert await stream.receive() == b"%d" % i
    assert registrations == [read_fd]
    await stream.aclose()


@pytest.mark.parametrize("anyio_backend", ["asyncio"])
@pytest.mark.anyio
async def test_reader_pauses_when_unconsumed_and_resumes(
    pipe: tuple[int, int], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(_fd_reader, "PAUSE_BYTES", 10)
    monkeypatch.setattr(_fd_reader, "READ_BYTES", 8)
    # a thread state of its own: the thread's shared buffer made at 8 bytes must not outlive
    # this test (a later test in the same process would read into it)
    monkeypatch.setattr(_fd_reader, "_thread_state", threading.local())
    read_fd, write_fd = pipe
    stream = FdReceiveStream(read_fd)
    os.write(write_fd, b"a" * 8)
    with anyio.fail_after(5):
        assert await stream.receive(4) == b"aaaa"  # the rest stays buffered
    os.write(write_fd, b"b" * 30)
    received = b""
    with anyio.fail_after(5):
        while len(received) < 34:
            received += await stream.receive()
    assert received == b"aaaa" + b"b" * 30
    os.close(write_fd)
    with anyio.fail_after(5), pytest.raises(anyio.EndOfStream):
        await stream.receive()
    await stream.aclose()


@pytest.mark.anyio
async def test_close_wakes_a_parked_receive(pipe: tuple[int, int]) -> None:
    read_fd, _ = pipe
    stream = FdReceiveStream(read_fd)
    outcome: list[BaseException] = []
    parked = anyio.Event()

    async def receive() -> None:
        parked.set()
        try:
            await stream.receive()
        except (anyio.ClosedResourceError, anyio.BrokenResourceError) as exc:
            outcome.append(exc)

    async with anyio.create_task_group() as tg:
        tg.start_soon(receive)
        with anyio.fail_after(5):
            await parked.wait()
            await anyio.wait_all_tasks_blocked()
            await stream.aclose()
    assert len(outcome) == 1


@pytest.mark.anyio
async def test_cancelled_receive_loses_no_data(pipe: tuple[int, int]) -> None:
    read_fd, write_fd = pipe
    stream = FdReceiveStream(read_fd)
    with anyio.move_on_after(0.01):
        await stream.receive()
    os.write(write_fd, b"kept")
    with anyio.fail_after(5):
        assert await stream.receive() == b"kept"
    await stream.aclose()


# -- end to end: a request is on the wire when send_request returns --------------------------


@pytest.mark.anyio
async def test_request_and_its_cancel_reach_the_pipe_in_order_without_the_writer(
    pipe: tuple[int, int],
) -> None:
    incoming_read, incoming_write = os.pipe()  # the peer never writes: only EOF
    try:
        read_fd, write_fd = pipe
        transport = LineTransport(FdReceiveStream(incoming_read), FdSendStream(write_fd))
        async with ConnectionBuilder(role="client").connect(transport) as cx:
            sent = cx.send_raw_request("_x/slow", {"n": 1})
            first = _drain(read_fd)  # no checkpoint since send: the writer task has not run
            assert json.loads(first)["method"] == "_x/slow"
            sent.cancel()
            second = _drain(read_fd)
            cancel = json.loads(second)
            assert cancel["method"] == "$/cancel_request"
            assert cancel["params"] == {"requestId": json.loads(first)["id"]}
            os.close(incoming_write)  # EOF from the peer ends the connection
    finally:
        for fd in (incoming_read, incoming_write):
            try:
                os.close(fd)
            except OSError:
                pass


@pytest.mark.anyio
async def test_a_descriptor_closed_behind_the_stream_is_a_broken_resource() -> None:
    read_fd, write_fd = os.pipe()
    stream = FdReceiveStream(read_fd)
    os.close(read_fd)
    try:
        with anyio.fail_after(5), pytest.raises(anyio.BrokenResourceError):
            await stream.receive()
    finally:
        os.close(write_fd)


def _open_fds() -> set[str]:
    return set(os.listdir("/proc/self/fd"))


@pytest.mark.skipif(not os.path.isdir("/proc/self/fd"), reason="needs /proc")
@pytest.mark.anyio
async def test_a_failed_spawn_closes_every_pipe_end() -> None:
    from acp_runtime import spawn_agent

    before = _open_fds()
    with pytest.raises(OSError):
        async with spawn_agent(["/nonexistent/agent-binary"]):
            pass
    assert _open_fds() == before
