"""Newline-delimited framing: line splitting, limits, bounded memory, writes."""

from __future__ import annotations

import socket
import tracemalloc
from collections.abc import Iterator
from itertools import pairwise

import anyio
import pytest
from anyio.abc import SocketStream
from byte_streams import QueueReceiveStream, ScriptedReceiveStream, SlowSendStream
from hypothesis import given, settings
from hypothesis import strategies as st

from acp_runtime._framing import LineReader
from acp_runtime.transports import LineTransport, MessageTooLarge

TooLarge = tuple[str, bytes]  # ("too_large", prefix)


BOM = b"\xef\xbb\xbf"


def transport_over(chunks: list[bytes], limit: int = 1024) -> LineTransport:
    return LineTransport(ScriptedReceiveStream(chunks), SlowSendStream(), max_message_bytes=limit)


async def receive_all(transport: LineTransport | LineReader) -> list[bytes | TooLarge]:
    """Every receive outcome until EOF: a message, or ("too_large", prefix)."""
    results: list[bytes | TooLarge] = []
    with anyio.fail_after(5):
        while True:
            try:
                results.append(await transport.receive())
            except MessageTooLarge as exc:
                results.append(("too_large", exc.prefix))
            except anyio.EndOfStream:
                return results


def one_byte_chunks(data: bytes) -> list[bytes]:
    return [data[i : i + 1] for i in range(len(data))]


@pytest.mark.anyio
async def test_messages_split_across_one_byte_reads_are_reassembled() -> None:
    wire = b'{"id":1}\n{"id":2}\n'
    assert await receive_all(transport_over(one_byte_chunks(wire))) == [b'{"id":1}', b'{"id":2}']


@pytest.mark.anyio
async def test_many_messages_in_one_read_come_out_one_at_a_time() -> None:
    wire = b"".join(b'{"n":%d}\n' % i for i in range(100))
    assert await receive_all(transport_over([wire], limit=len(wire))) == [
        b'{"n":%d}' % i for i in range(100)
    ]


@pytest.mark.anyio
async def test_crlf_line_endings_are_stripped_even_when_split_between_reads() -> None:
    chunks = [b'{"a":1}\r', b'\n{"b":2}\r\n']
    assert await receive_all(transport_over(chunks)) == [b'{"a":1}', b'{"b":2}']


@pytest.mark.anyio
async def test_a_carriage_return_inside_a_line_is_kept() -> None:
    assert await receive_all(transport_over([b"a\rb\n"])) == [b"a\rb"]


@pytest.mark.anyio
async def test_blank_lines_are_skipped() -> None:
    chunks = [b"\n\r\n", b'{"a":1}\n\n\n', b"\r\n", b'{"b":2}\n']
    assert await receive_all(transport_over(chunks)) == [b'{"a":1}', b'{"b":2}']


@pytest.mark.anyio
async def test_partial_final_line_is_returned_at_eof_then_end_of_stream() -> None:
    transport = transport_over([b'{"a":1}\n{"b"', b":2}"])
    assert await receive_all(transport) == [b'{"a":1}', b'{"b":2}']
    with pytest.raises(anyio.EndOfStream):
        await transport.receive()


@pytest.mark.anyio
async def test_over_limit_line_raises_message_too_large_then_the_next_line_arrives() -> None:
    big = b'{"id":7,"x":"' + b"y" * 200 + b'"}'
    chunks = [big[:50], big[50:], b'\n{"ok":1}\n']
    assert await receive_all(transport_over(chunks, limit=64)) == [
        ("too_large", big[:64]),
        b'{"ok":1}',
    ]


@pytest.mark.anyio
async def test_over_limit_line_inside_one_read_is_rejected_and_reading_resumes() -> None:
    chunks = [b"x" * 11 + b"\n" + b"ok\n"]
    assert await receive_all(transport_over(chunks, limit=10)) == [("too_large", b"x" * 10), b"ok"]


@pytest.mark.anyio
async def test_over_limit_line_without_newline_before_eof_raises_then_end_of_stream() -> None:
    transport = transport_over([b"z" * 30, b"z" * 30], limit=16)
    with anyio.fail_after(5):
        with pytest.raises(MessageTooLarge) as caught:
            await transport.receive()
        assert caught.value.limit == 16
        assert caught.value.prefix == b"z" * 16
        with pytest.raises(anyio.EndOfStream):
            await transport.receive()


@pytest.mark.anyio
async def test_line_of_exactly_the_limit_passes_even_when_its_crlf_is_split() -> None:
    chunks = [b"0123456789\r", b"\n", b"0123456789A\n"]
    assert await receive_all(transport_over(chunks, limit=10)) == [
        b"0123456789",
        ("too_large", b"0123456789"),
    ]


@pytest.mark.anyio
async def test_invalid_utf8_passes_through_as_bytes() -> None:
    assert await receive_all(transport_over([b"\xff\xfe{\x80}\n"])) == [b"\xff\xfe{\x80}"]


def endless_line(total: int, chunk: bytes) -> Iterator[bytes]:
    """``total`` bytes of one line in reads of ``chunk`` (one object, reused: no allocation)."""
    for _ in range(total // len(chunk)):
        yield chunk
    yield b'\n{"after":true}\n'


@pytest.mark.anyio
async def test_64_mib_line_with_small_limit_is_skipped_in_bounded_memory() -> None:
    limit, chunk = 1024 * 1024, b"x" * 65536
    reader = LineReader(
        ScriptedReceiveStream(endless_line(64 * 1024 * 1024, chunk)), max_line_bytes=limit
    )
    tracemalloc.start()
    try:
        with anyio.fail_after(30):
            with pytest.raises(MessageTooLarge):
                await reader.receive()
            assert await reader.receive() == b'{"after":true}'
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    # The limit, a read chunk, bytearray over-allocation; buffering the line would be 64 MiB.
    assert peak < 3 * limit, f"peak {peak} bytes"


@pytest.mark.anyio
async def test_send_appends_a_newline_and_writes_once() -> None:
    sink = SlowSendStream()
    transport = LineTransport(ScriptedReceiveStream([]), sink)
    await transport.send(b'{"id":1}')
    await transport.send(b'{"id":2}')
    assert bytes(sink.data) == b'{"id":1}\n{"id":2}\n'
    assert sink.send_calls == 2


@pytest.mark.anyio
async def test_concurrent_sends_never_interleave() -> None:
    sink = SlowSendStream()
    transport = LineTransport(ScriptedReceiveStream([]), sink)
    messages = [b'{"n":%d,"pad":"%s"}' % (i, b"p" * i) for i in range(50)]
    with anyio.fail_after(5):
        async with anyio.create_task_group() as tg:
            for message in messages:
                tg.start_soon(transport.send, message)
    lines = bytes(sink.data).split(b"\n")
    assert lines[-1] == b""
    assert sorted(lines[:-1]) == sorted(messages)


@pytest.mark.anyio
async def test_send_rejects_a_message_containing_a_newline() -> None:
    sink = SlowSendStream()
    transport = LineTransport(ScriptedReceiveStream([]), sink)
    with pytest.raises(ValueError):
        await transport.send(b'{"a":\n1}')
    assert sink.data == b""


@pytest.mark.anyio
async def test_send_eof_closes_only_the_outgoing_side() -> None:
    source, sink = ScriptedReceiveStream([b"still\nreading\n"]), SlowSendStream()
    transport = LineTransport(source, sink)
    await transport.send_eof()
    assert sink.closed and not source.closed
    with pytest.raises(anyio.ClosedResourceError):
        await transport.send(b"{}")
    assert await receive_all(transport) == [b"still", b"reading"]


@pytest.mark.anyio
async def test_aclose_closes_both_streams_is_idempotent_and_stops_receive() -> None:
    source, sink = ScriptedReceiveStream([b"unread\n"]), SlowSendStream()
    transport = LineTransport(source, sink)
    await transport.aclose()
    await transport.aclose()
    assert source.closed and sink.closed
    with pytest.raises(anyio.ClosedResourceError):
        await transport.receive()


@pytest.mark.anyio
async def test_concurrent_receives_are_refused() -> None:
    send, receive = anyio.create_memory_object_stream[bytes](1)
    transport = LineTransport(QueueReceiveStream(receive), SlowSendStream())
    with anyio.fail_after(5):
        async with anyio.create_task_group() as tg:
            tg.start_soon(transport.receive)
            await anyio.wait_all_tasks_blocked()
            with pytest.raises(anyio.BusyResourceError):
                await transport.receive()
            await send.send(b"done\n")
    send.close()
    receive.close()


# --- property: any messages, any line endings, any read boundaries ---------------------------

line_messages = (
    st.binary(max_size=40)
    | st.sampled_from([b" ", b"\t \r", BOM, BOM + b"{}", BOM[:2] + b"{}", b" {}"])
).map(lambda m: m.replace(b"\n", b"").rstrip(b"\r"))


@st.composite
def wires(draw: st.DrawFn) -> tuple[list[bytes], bytes, list[int], int, bool]:
    messages = draw(st.lists(line_messages, max_size=12))
    endings = [draw(st.sampled_from([b"\n", b"\r\n"])) for _ in messages]
    final_terminated = draw(st.booleans())
    wire = b"".join(m + e for m, e in zip(messages, endings, strict=True))
    if messages and not final_terminated:
        wire = wire[: -len(endings[-1])]
    cuts = sorted(draw(st.lists(st.integers(0, len(wire)), max_size=8)))
    limit = draw(st.integers(1, 48))
    return messages, wire, cuts, limit, final_terminated


@settings(max_examples=150, deadline=None)
@given(wires())
def test_any_chunking_yields_the_messages_in_order_with_limits_applied(
    case: tuple[list[bytes], bytes, list[int], int, bool],
) -> None:
    messages, wire, cuts, limit, _ = case
    bounds = [0, *cuts, len(wire)]
    chunks = [wire[a:b] for a, b in pairwise(bounds) if b > a]
    if messages and messages[0].startswith(BOM):  # dropped at the start of the stream only
        messages = [messages[0][len(BOM) :], *messages[1:]]
    expected: list[bytes | TooLarge] = [
        m if len(m) <= limit else ("too_large", m[:limit])
        for m in messages
        if len(m) > limit or m.strip(b" \t\r")  # blank: empty or white space only
    ]
    got = anyio.run(receive_all, transport_over(chunks, limit=limit))
    assert got == expected


@settings(max_examples=150, deadline=None)
@given(wires(), st.integers(1, 48))
def test_long_lines_collected_without_copies_follow_the_same_rules(
    case: tuple[list[bytes], bytes, list[int], int, bool], long_line_bytes: int
) -> None:
    """The same property with the long-line path (LONG_LINE_BYTES) taken by short lines."""
    messages, wire, cuts, limit, _ = case
    bounds = [0, *cuts, len(wire)]
    chunks = [wire[a:b] for a, b in pairwise(bounds) if b > a]
    if messages and messages[0].startswith(BOM):
        messages = [messages[0][len(BOM) :], *messages[1:]]
    expected: list[bytes | TooLarge] = [
        m if len(m) <= limit else ("too_large", m[:limit])
        for m in messages
        if len(m) > limit or m.strip(b" \t\r")
    ]
    reader = LineReader(
        ScriptedReceiveStream(chunks), max_line_bytes=limit, long_line_bytes=long_line_bytes
    )
    assert anyio.run(receive_all, reader) == expected


async def received_in_peak(reader: LineReader) -> tuple[bytes, int]:
    """One line from ``reader`` and tracemalloc's peak (bytes) while it was read."""
    tracemalloc.start()
    try:
        with anyio.fail_after(30):
            line = await reader.receive()
        return line, tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


@pytest.mark.anyio
async def test_a_long_line_is_handed_over_without_a_copy_of_it() -> None:
    size, chunk = 48 * 1024 * 1024, b"x" * 65536
    reader = LineReader(ScriptedReceiveStream(endless_line(size, chunk)), max_line_bytes=2 * size)
    line, peak = await received_in_peak(reader)
    assert len(line) == size and line.count(b"x") == size
    # The line, the buffer's growth headroom (an eighth, allocated but never written,
    # so not resident) and a read chunk; cut out of a shared buffer it costs twice that.
    assert peak < size + size // 8 + 1024 * 1024, f"peak {peak / 2**20:.1f} MiB"
    assert await reader.receive() == b'{"after":true}'


@pytest.mark.anyio
async def test_a_long_line_keeps_its_bytes_across_reads_and_a_cancelled_receive() -> None:
    send, receive = anyio.create_memory_object_stream[bytes](8)
    reader = LineReader(QueueReceiveStream(receive), max_line_bytes=64, long_line_bytes=4)
    with anyio.fail_after(5):
        await send.send(b"0123456")  # past long_line_bytes: collected on the long path
        with anyio.CancelScope() as scope:
            async with anyio.create_task_group() as tg:
                tg.start_soon(reader.receive)
                await anyio.wait_all_tasks_blocked()
                scope.cancel()
        await send.send(b"789\r")
        await send.send(b"\nnext\n")
        assert await reader.receive() == b"0123456789"
        assert await reader.receive() == b"next"
    send.close()
    receive.close()


@pytest.mark.anyio
async def test_a_cancelled_receive_loses_no_bytes() -> None:
    send, receive = anyio.create_memory_object_stream[bytes](4)
    transport = LineTransport(QueueReceiveStream(receive), SlowSendStream())
    with anyio.fail_after(5):
        await send.send(b'{"part":')
        with anyio.CancelScope() as scope:
            async with anyio.create_task_group() as tg:
                tg.start_soon(transport.receive)
                await anyio.wait_all_tasks_blocked()  # the partial line is buffered
                scope.cancel()
        await send.send(b"1}\n")
        assert await transport.receive() == b'{"part":1}'
    send.close()
    receive.close()


@pytest.mark.anyio
async def test_send_eof_on_a_socket_half_closes_it() -> None:
    left, right = socket.socketpair()
    ours = await SocketStream.from_socket(left)
    theirs = await SocketStream.from_socket(right)
    transport, peer = LineTransport(ours, ours), LineTransport(theirs, theirs)
    with anyio.fail_after(5):
        await transport.send(b'{"last":1}')
        await transport.send_eof()
        assert await peer.receive() == b'{"last":1}'
        with pytest.raises(anyio.EndOfStream):
            await peer.receive()
        await peer.send(b'{"reply":2}')  # the other direction still works
        assert await transport.receive() == b'{"reply":2}'
    await transport.aclose()
    await peer.aclose()
