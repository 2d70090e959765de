"""OutboundStream: queued events leave in order, a burst as one write of at most the
limit, each byte counted once as taken; one reader at a time; finish ends or discards."""

from __future__ import annotations

import anyio
import pytest

from acp_runtime.remote._outbound_streams import KEEP_ALIVE, OutboundStream, sse_event

pytestmark = pytest.mark.anyio


async def test_a_burst_leaves_in_order_in_writes_of_at_most_the_limit() -> None:
    taken: list[int] = []
    stream = OutboundStream("s", taken.append)
    events = [sse_event(b'{"n":%d}' % i) for i in range(10)]
    for event in events:
        assert stream.push(event)
    size = len(events[0])
    writes = []
    while chunk := stream.take(3 * size):
        writes.append(chunk)
    assert b"".join(writes) == b"".join(events)
    assert [len(w) for w in writes] == [3 * size, 3 * size, 3 * size, size]
    assert sum(taken) == sum(len(e) for e in events)
    big = sse_event(b"x" * 100)
    stream.push(big)
    assert stream.take(10) == big  # one event even past the limit


async def test_wait_times_out_for_a_keep_alive_and_wakes_on_push_or_finish() -> None:
    stream = OutboundStream(None, lambda _: None)
    assert await stream.wait(0.01) is False
    async with anyio.create_task_group() as tg:
        tg.start_soon(stream.wait, 5)
        await anyio.sleep(0.01)
        stream.push(KEEP_ALIVE)
    with anyio.fail_after(1):
        assert await stream.wait(5) is True
    assert stream.take(100) == KEEP_ALIVE
    stream.finish(discard=False)
    with anyio.fail_after(1):
        assert await stream.wait(5) is True
    assert not stream.push(b"late")


async def test_one_reader_and_finish_discards_what_is_queued() -> None:
    stream = OutboundStream("s", lambda _: None)
    token = stream.acquire()
    assert token is not None and stream.acquire() is None
    stream.release(object())  # not the reader: nothing happens
    assert stream.has_reader
    stream.release(token)
    assert stream.acquire() is not None
    stream.push(b"abc")
    assert stream.finish(discard=True) == 3
    assert stream.take(10) == b""


def test_a_message_with_line_breaks_is_written_compact_as_one_event() -> None:
    assert sse_event(b'{\n  "a": "\\u00e9\\n",\r\n  "b": [1, 2]\n}') == (
        b'data: {"a":"\xc3\xa9\\n","b":[1,2]}\n\n'
    )
    assert sse_event(b'{"a":1}') == b'data: {"a":1}\n\n'
