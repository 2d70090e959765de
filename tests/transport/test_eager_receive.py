"""The eager receive path: messages that reach an idle transport are offered to the
connection in the readiness callback, and whatever it declines keeps its place in line.

The connection settles responses there (one event-loop iteration less per round trip on
asyncio pipes); everything else, and everything after it, must still take the ordinary
``receive`` path in arrival order.
"""

from __future__ import annotations

import os
from collections.abc import AsyncIterator
from itertools import pairwise

import anyio
import pytest
from anyio import wait_all_tasks_blocked
from anyio.lowlevel import checkpoint
from byte_streams import QueueReceiveStream
from hypothesis import given, settings
from hypothesis import strategies as st

from acp_runtime import (
    CancellationMarker,
    Connection,
    ConnectionBuilder,
    JsonValue,
    RequestError,
    Responder,
)
from acp_runtime._framing import EAGER_MAX_BYTES, LineReader
from acp_runtime._stdio import FdReceiveStream, FdSendStream
from acp_runtime.transports import LineTransport


def reader_with_limit(limit: int = 1024) -> LineReader:
    return LineReader(
        QueueReceiveStream(anyio.create_memory_object_stream[bytes](1)[1]), max_line_bytes=limit
    )


def test_offered_lines_stop_at_the_first_declined_one_which_is_returned_with_the_rest() -> None:
    taken: list[bytes] = []

    def take_unless_call(line: bytes) -> bool:
        if line.startswith(b"call"):
            return False
        taken.append(line)
        return True

    rest = reader_with_limit().offer_lines(b"r1\r\n\nr2\ncall\nr3\npart", take_unless_call)
    assert taken == [b"r1", b"r2"]
    assert rest == b"call\nr3\npart"


def test_a_trailing_partial_line_stays_buffered_and_completes_with_the_next_offer() -> None:
    reader, taken = reader_with_limit(), list[bytes]()
    assert reader.offer_lines(b'{"id":1', lambda line: taken.append(line) is None) == b""
    assert taken == []
    assert reader.offer_lines(b"}\n", lambda line: taken.append(line) is None) == b""
    assert taken == [b'{"id":1}']


def test_over_limit_lines_and_large_reads_are_left_to_receive() -> None:
    reader, taken = reader_with_limit(limit=8), list[bytes]()
    assert (
        reader.offer_lines(b"ok\n" + b"x" * 9 + b"\nok\n", lambda line: taken.append(line) is None)
        == b"x" * 9 + b"\nok\n"
    )
    assert taken == [b"ok"]
    big = b"y\n" * (EAGER_MAX_BYTES // 2 + 1)
    assert reader_with_limit().offer_lines(big, lambda line: True) == big


@settings(max_examples=150, deadline=None)
@given(
    lines=st.lists(
        (st.binary(max_size=12) | st.sampled_from([b" ", b"\t\r ", b"\xef\xbb\xbf{}"])).map(
            lambda b: b.replace(b"\n", b"")
        ),
        max_size=25,
    ),
    cuts=st.lists(st.integers(min_value=0, max_value=400), max_size=12),
    crlf=st.booleans(),
    declined=st.sets(st.integers(min_value=0, max_value=25)),
)
def test_eager_and_ordinary_receives_together_keep_every_line_in_order(
    lines: list[bytes], cuts: list[int], crlf: bool, declined: set[int]
) -> None:
    """Any split of the stream into reads, any pattern of declines: every non-blank line
    arrives exactly once, in order, whichever path takes it, and a byte-order mark at the
    start of the stream is dropped on either path."""
    data = b"".join(line + (b"\r\n" if crlf else b"\n") for line in lines)
    bounds = sorted({0, len(data), *(c for c in cuts if c < len(data))})
    chunks = [data[a:b] for a, b in pairwise(bounds)]
    expected = [line.removesuffix(b"\r") if not crlf else line for line in lines]
    if expected:  # a byte-order mark is dropped at the start of the stream only
        expected[0] = expected[0].removeprefix(b"\xef\xbb\xbf")
    expected = [line for line in expected if line.strip(b" \t\r")]  # blank ones are skipped

    async def scenario() -> list[bytes]:
        send, receive = anyio.create_memory_object_stream[bytes](100)
        reader = LineReader(QueueReceiveStream(receive))
        got: list[bytes] = []

        def eager(line: bytes) -> bool:
            if len(got) in declined:
                return False
            got.append(line)
            return True

        async def ordinary() -> None:
            while True:
                try:
                    got.append(await reader.receive())
                except anyio.EndOfStream:
                    return

        async with anyio.create_task_group() as tg:
            tg.start_soon(ordinary)
            for chunk in chunks:
                while not send.statistics().tasks_waiting_receive:
                    await checkpoint()  # until the reader is parked: nothing buffered
                if rest := reader.offer_lines(chunk, eager):
                    await send.send(rest)
            await send.aclose()
        return got

    assert anyio.run(scenario) == expected


# -- a connection over real pipes ---------------------------------------------------------


@pytest.fixture
async def over_pipes() -> AsyncIterator[tuple[LineTransport, int, int]]:
    """Our transport over two pipes, plus the peer's raw write and read descriptors."""
    to_us, from_peer = os.pipe()
    to_peer, from_us = os.pipe()
    transport = LineTransport(
        FdReceiveStream(to_us, close_fd=True), FdSendStream(from_us, close_fd=True)
    )
    try:
        yield transport, from_peer, to_peer
    finally:
        os.close(from_peer)
        os.close(to_peer)


def record_the_eager_path(cx: Connection, transport: LineTransport) -> list[bool]:
    """Offer ``cx`` what the readiness callback reads, as the connection does, recording
    each outcome (True: handled there; False: declined to the dispatch loop)."""
    outcomes: list[bool] = []
    handle = cx._settle_eagerly  # pyright: ignore[reportPrivateUsage]

    def spy(data: bytes) -> bool:
        outcomes.append(handle(data))
        return outcomes[-1]

    transport.set_eager_receiver(spy)
    return outcomes


async def read_request_ids(fd: int, count: int) -> None:
    """Wait until ``count`` requests have reached the peer's end (they are written at once)."""
    seen = b""
    with anyio.fail_after(5):
        while seen.count(b"\n") < count:
            await anyio.wait_readable(fd)
            seen += os.read(fd, 65536)


@pytest.mark.anyio
async def test_an_awaited_response_arriving_behind_a_notification_resumes_after_its_handler(
    over_pipes: tuple[LineTransport, int, int],
) -> None:
    """Ordering with the eager path: updates streamed before a response are handled
    before the awaiting task sees the response, even when both come in one read."""
    transport, peer_out, peer_in = over_pipes
    handled: list[JsonValue] = []

    async def on_update(method: str, params: JsonValue, cx: Connection) -> None:
        await checkpoint()  # a handler that yields: the response must still wait for it
        handled.append(params)

    builder = ConnectionBuilder().on_raw_notification(on_update)
    async with builder.connect(transport) as cx:
        sent = cx.send_raw_request("session/prompt")
        await read_request_ids(peer_in, 1)
        os.write(
            peer_out,
            b'{"jsonrpc":"2.0","method":"session/update","params":[1]}\n'
            b'{"jsonrpc":"2.0","method":"session/update","params":[2]}\n'
            b'{"jsonrpc":"2.0","id":1,"result":"done"}\n',
        )
        with anyio.fail_after(5):
            assert await sent == "done"
        assert handled == [[1], [2]]


@pytest.mark.anyio
async def test_idle_responses_settle_eagerly_on_asyncio_and_callbacks_keep_their_turn(
    over_pipes: tuple[LineTransport, int, int], anyio_backend: str
) -> None:
    """A response to an awaited request that reaches an idle connection is settled in
    the readiness callback on asyncio (trio: the ordinary path); a response whose result
    callback must run declines and runs in order with the notification behind it."""
    transport, peer_out, peer_in = over_pipes
    events: list[str] = []

    async def on_update(method: str, params: JsonValue, cx: Connection) -> None:
        events.append(f"update {params}")

    builder = ConnectionBuilder().on_raw_notification(on_update)
    async with builder.connect(transport) as cx:
        settled_eagerly = record_the_eager_path(cx, transport)
        awaited = cx.send_raw_request("a")
        await read_request_ids(peer_in, 1)
        await wait_all_tasks_blocked()
        os.write(peer_out, b'{"jsonrpc":"2.0","id":1,"result":"a"}\n')
        with anyio.fail_after(5):
            assert await awaited == "a"
        assert settled_eagerly == ([True] if anyio_backend == "asyncio" else [])

        async def on_result(outcome: JsonValue | RequestError) -> None:
            events.append(f"result {outcome}")

        cx.send_raw_request("b").on_receiving_result(on_result)
        await read_request_ids(peer_in, 1)
        await wait_all_tasks_blocked()
        os.write(
            peer_out,
            b'{"jsonrpc":"2.0","id":2,"result":"b"}\n'
            b'{"jsonrpc":"2.0","method":"session/update","params":[3]}\n',
        )
        with anyio.fail_after(5):
            while len(events) < 2:
                await checkpoint()
        assert events == ["result b", "update [3]"]
        assert settled_eagerly[1:] == ([False] if anyio_backend == "asyncio" else [])


@pytest.mark.anyio
async def test_a_response_read_while_a_handler_runs_waits_for_that_handler(
    over_pipes: tuple[LineTransport, int, int],
) -> None:
    """The race the eager path must not win: the response arrives in a later read while
    the dispatch loop is still inside the handler of an earlier notification."""
    transport, peer_out, peer_in = over_pipes
    entered, release = anyio.Event(), anyio.Event()
    order: list[str] = []

    async def on_update(method: str, params: JsonValue, cx: Connection) -> None:
        entered.set()
        await release.wait()
        order.append("update handled")

    async with ConnectionBuilder().on_raw_notification(on_update).connect(transport) as cx:
        sent = cx.send_raw_request("session/prompt")
        await read_request_ids(peer_in, 1)
        os.write(peer_out, b'{"jsonrpc":"2.0","method":"session/update","params":[1]}\n')
        with anyio.fail_after(5):
            await entered.wait()
        os.write(peer_out, b'{"jsonrpc":"2.0","id":1,"result":"done"}\n')
        await anyio.sleep(0.05)  # time for the readiness callback to see the response

        async def await_response() -> None:
            await sent
            order.append("response seen")

        async with anyio.create_task_group() as tg:
            tg.start_soon(await_response)
            await wait_all_tasks_blocked()
            release.set()
        assert order == ["update handled", "response seen"]


@pytest.mark.anyio
@pytest.mark.parametrize("observed", [False, True])
async def test_a_cancel_no_handler_observes_is_applied_eagerly_on_asyncio(
    over_pipes: tuple[LineTransport, int, int], anyio_backend: str, observed: bool
) -> None:
    """A ``$/cancel_request`` reaching an idle connection sets its request's marker in the
    readiness callback on asyncio (the cancelled work wakes a loop iteration sooner);
    with a handler observing cancels it takes the ordinary path, marker set first (IN-2)."""
    transport, peer_out, peer_in = over_pipes
    seen_by_handler: list[bool] = []
    markers: list[CancellationMarker] = []

    async def answer_when_cancelled(responder: Responder[JsonValue]) -> None:
        await responder.cancellation.cancelled()
        responder.respond_with_error(RequestError.request_cancelled())

    async def handle(method: str, params: JsonValue, responder: Responder[JsonValue]) -> None:
        markers.append(responder.cancellation)
        responder.connection.spawn(answer_when_cancelled, responder)

    async def on_cancel(method: str, params: JsonValue, cx: Connection) -> None:
        seen_by_handler.append(markers[0].is_cancelled())

    builder = ConnectionBuilder().on_raw_request(handle)
    if observed:
        builder.on_raw_notification(on_cancel)
    async with builder.connect(transport) as cx:
        eagerly = record_the_eager_path(cx, transport)
        os.write(peer_out, b'{"jsonrpc":"2.0","id":7,"method":"_long","params":{}}\n')
        with anyio.fail_after(5):
            while not markers:
                await checkpoint()
        await wait_all_tasks_blocked()
        os.write(
            peer_out, b'{"jsonrpc":"2.0","method":"$/cancel_request","params":{"requestId":7}}\n'
        )
        with anyio.fail_after(5):
            await read_request_ids(peer_in, 1)  # the -32800 answer
        assert markers[0].is_cancelled()
        eager_cancel = anyio_backend == "asyncio" and not observed
        assert eagerly[-1:] == (
            [True] if eager_cancel else [False] if anyio_backend == "asyncio" else []
        )
        assert seen_by_handler == ([True] if observed else [])
