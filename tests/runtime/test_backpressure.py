"""Backpressure (REL-4): a peer that stops reading holds the connection up, and
cancellation still goes first.

The peer end is a memory pair with no buffer, so the connection's writer blocks on its
first message until the test reads: exactly a peer that never reads. Over the
high-water mark the connection stops reading (the peer's sends stop being taken) and
paced senders wait; once the peer has read the backlog down to the low-water mark,
everything resumes. Answers to cancelled requests, and cancels of requests already
written, go ahead of the queued output; a cancel never overtakes its own request.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Generator, Sequence
from contextlib import asynccontextmanager
from typing import Any

import anyio
import anyio.lowlevel
import pytest
from anyio import wait_all_tasks_blocked

from acp_runtime import Connection, ConnectionBuilder, JsonValue, Responder, memory_pair
from acp_runtime._connection import LOOP_TURN_BYTES
from acp_runtime._outbox import DEFAULT_PACE_BYTES, Outbox
from acp_runtime.testing import WirePeer
from acp_runtime.transports import DEFAULT_HIGH_WATER_BYTES

from .helpers import ASK, Answer, Ask, cancel, pipe_transports, request, result

pytestmark = pytest.mark.anyio

MARK = 2000
ANSWER = {"blob": "x" * 200}
ANSWER_BYTES = len(b'{"jsonrpc":"2.0","id":10,"result":{"blob":"' + b"x" * 200 + b'"}}')


async def pong(method: str, params: JsonValue, responder: Responder[JsonValue]) -> JsonValue:
    return ANSWER


@asynccontextmanager
async def unread_peer(builder: ConnectionBuilder) -> AsyncIterator[tuple[Connection, WirePeer]]:
    """A connection whose peer reads only when the test says (no buffer either way)."""
    ours, theirs = memory_pair(max_buffer=0)
    async with builder.connect(ours) as cx:
        yield cx, WirePeer(theirs)


class Sender:
    """Sends requests from a task, counting those the connection has taken."""

    def __init__(self, peer: WirePeer, count: int) -> None:
        self.peer = peer
        self.count = count
        self.taken = 0

    async def run(self) -> None:
        for n in range(self.count):
            await self.peer.send(request(n, "ping"))
            self.taken += 1


def test_the_default_mark_keeps_a_stalled_peer_far_under_64_mib() -> None:
    assert DEFAULT_HIGH_WATER_BYTES <= 16 * 1024 * 1024
    assert Outbox().high_water == DEFAULT_HIGH_WATER_BYTES
    assert Outbox(high_water=100).low_water == 50
    with pytest.raises(ValueError, match="high_water_bytes"):
        ConnectionBuilder(high_water_bytes=0)


def test_the_pace_mark_is_lower_than_the_high_water_mark_and_never_above_it() -> None:
    assert Outbox().pace == DEFAULT_PACE_BYTES == 256 * 1024 < DEFAULT_HIGH_WATER_BYTES
    assert Outbox().low_water == DEFAULT_PACE_BYTES // 2
    assert Outbox(high_water=100).pace == 100  # a mark under the pace mark paces too
    assert Outbox(high_water=100, pace=40).low_water == 20
    assert ConnectionBuilder(pace_bytes=4096).pace_bytes == 4096
    with pytest.raises(ValueError, match="pace_bytes"):
        ConnectionBuilder(pace_bytes=0)


async def test_rel4_over_the_pace_mark_senders_wait_while_the_connection_still_reads() -> None:
    """Between the pace mark and the high-water mark an awaited stream waits, but requests
    are still read and answered: only the stream is held up, so two peers streaming at
    each other cannot stop each other's reading."""
    progress: list[int] = []

    async def stream_or_pong(
        method: str, params: JsonValue, responder: Responder[JsonValue]
    ) -> JsonValue:
        async def updates() -> None:
            for n in range(50):
                await cx.send_raw_notification("tick", {"n": n, "pad": "y" * 100})
                progress.append(n)

        if method == "ping":
            return "pong"
        cx = responder.connection
        cx.spawn(updates)
        return "streaming"

    pacing = ConnectionBuilder(high_water_bytes=100 * MARK, pace_bytes=MARK)
    builder = pacing.on_raw_request(stream_or_pong)
    async with unread_peer(builder) as (cx, peer), anyio.create_task_group() as tg:
        await peer.send(request("s", "stream"))
        await wait_all_tasks_blocked()
        assert 0 < len(progress) < 50  # held up at the pace mark
        sender = Sender(peer, 5)
        tg.start_soon(sender.run)
        await wait_all_tasks_blocked()
        assert sender.taken == 5  # over the pace mark, under the high one: still reading
        assert cx.incoming_request_count == 0  # and answering
        messages = [await peer.receive() for _ in range(56)]
        assert [m["params"]["n"] for m in messages if "params" in m] == list(range(50))
        assert sorted(str(m["id"]) for m in messages if "id" in m) == ["0", "1", "2", "3", "4", "s"]
        assert progress == list(range(50))


async def test_rel4_over_the_mark_the_connection_stops_reading_until_the_peer_drains() -> None:
    builder = ConnectionBuilder(high_water_bytes=MARK).on_raw_request(pong)
    async with unread_peer(builder) as (cx, peer), anyio.create_task_group() as tg:
        sender = Sender(peer, 100)
        tg.start_soon(sender.run)
        await wait_all_tasks_blocked()
        # Stopped: just over the mark of answers queued, the rest of the requests unread.
        assert sender.taken == MARK // ANSWER_BYTES + 1
        assert MARK < cx.outgoing_backlog <= MARK + ANSWER_BYTES
        assert cx.incoming_request_count == 0  # every request taken was answered
        answers = [await peer.receive() for _ in range(100)]
        assert [answer["id"] for answer in answers] == list(range(100))
        assert sender.taken == 100
    assert cx.outgoing_backlog == 0


async def test_rel4_awaited_notifications_wait_while_the_peer_is_behind() -> None:
    progress: list[int] = []

    async def stream(method: str, params: JsonValue, responder: Responder[JsonValue]) -> None:
        async def updates() -> None:
            for n in range(50):
                await cx.send_raw_notification("tick", {"n": n, "pad": "y" * 100})
                progress.append(n)
            responder.respond("done")

        cx = responder.connection
        cx.spawn(updates)

    builder = ConnectionBuilder(high_water_bytes=MARK).on_raw_request(stream)
    async with unread_peer(builder) as (cx, peer):
        await peer.send(request("s", "stream"))
        await wait_all_tasks_blocked()
        assert 0 < len(progress) < 50  # held up: the peer reads nothing
        assert cx.outgoing_backlog <= MARK + 200
        messages = [await peer.receive() for _ in range(51)]
        assert [m["params"]["n"] for m in messages[:50]] == list(range(50))
        assert messages[50] == {"jsonrpc": "2.0", "id": "s", "result": "done"}
        assert progress == list(range(50))


async def test_rel4_drain_under_the_mark_returns_at_once_without_a_checkpoint() -> None:
    async with unread_peer(ConnectionBuilder()) as (cx, peer):
        cx.send_raw_notification("one")  # queued: the peer does not read
        with anyio.CancelScope() as scope:
            scope.cancel()
            await cx.send_raw_notification("two")  # a checkpoint would raise Cancelled here
            await cx.drain()
        assert not scope.cancelled_caught
        assert [(await peer.receive())["method"] for _ in range(2)] == ["one", "two"]


class AsyncOnlyTransport:
    """Writes that need the writer task and a scheduling point, as an ASGI server's
    ``send`` does: no ``send_nowait`` and no ``send_burst_nowait``. Reads nothing."""

    def __init__(self) -> None:
        self.sent: list[bytes] = []
        self._closed = anyio.Event()

    async def send(self, message: bytes) -> None:
        await self.send_many([message])

    async def send_many(self, messages: Sequence[bytes]) -> None:
        await anyio.lowlevel.checkpoint()
        self.sent.extend(messages)

    async def receive(self) -> bytes:
        await self._closed.wait()
        raise anyio.EndOfStream

    async def aclose(self) -> None:
        self._closed.set()


async def test_rel4_a_loop_of_awaited_sends_streams_on_a_transport_without_burst_writes() -> None:
    """Without a turn for the writer, a handler's loop of awaited sends over such a
    transport would hold everything until it returned. An awaited send gives the loop a
    turn once ``LOOP_TURN_BYTES`` have queued since the writer last took the queue; that
    turn is never a cancellation point, and a few small sends get none."""
    transport = AsyncOnlyTransport()
    pad = "x" * 100
    count = 10 * LOOP_TURN_BYTES // 100  # ten turns' worth of ~150-byte messages
    async with ConnectionBuilder().connect(transport) as cx:
        with anyio.CancelScope() as scope:
            scope.cancel()
            for n in range(3):  # well under a turn's bytes: no turn, so nothing written yet
                await cx.send_raw_notification("tick", {"n": n, "pad": pad})
            assert transport.sent == []
            backlogs = []
            for n in range(3, count):
                await cx.send_raw_notification("tick", {"n": n, "pad": pad})
                backlogs.append(cx.outgoing_backlog)
            assert len(transport.sent) > count * 3 // 4  # written while the loop ran
        assert not scope.cancelled_caught
        assert max(backlogs) < 4 * LOOP_TURN_BYTES  # (trio: a turn may take ~3 to come)
    assert [json.loads(m)["params"]["n"] for m in transport.sent] == list(range(count))


async def test_rel4_in5_an_awaited_send_gives_the_loop_a_turn_every_turn_bytes() -> None:
    """Also where every message goes out at once from ``put`` (a pipe the peer keeps
    reading): the bytes written at once count, so a loop of awaited sends lets other
    tasks run (the connection's reader among them) once per ``turn_bytes``."""
    outbox = Outbox(lambda message: True, turn_bytes=1000)
    turns = []

    async def other() -> None:
        turns.append("other")

    async with anyio.create_task_group() as tg:
        tg.start_soon(other)
        for _ in range(50):
            outbox.put(b"x" * 200)
            await _Awaiting(outbox)
            turns.append("sender")
    assert outbox.backlog == 0  # all of it went out at once
    # Only at a turn (every fifth send reaches 1000 bytes): on asyncio the first one, on
    # trio, whose scheduler may run the sender again first, one of the next few.
    assert turns.index("other") % 5 == 4
    assert turns.index("other") < 20


async def test_in5_a_stream_of_awaited_sends_lets_the_connection_read_its_cancel() -> None:
    """IN-5 for streams: a typed handler streaming awaited notifications over a pipe whose
    peer keeps up never reaches the pace mark (here as high as the high-water mark), so
    no send waits; the turn every ``LOOP_TURN_BYTES`` still lets the loop run, the peer
    read the first updates and cancel, and the connection read that cancel mid-stream."""
    total = 4000  # ~600 KB: the whole stream fits under the pace mark
    sent: list[int] = []

    async def stream(params: Ask, responder: Responder[Answer]) -> Answer:
        cx = responder.connection
        for n in range(total):
            if responder.cancellation.is_cancelled():
                break
            await cx.send_raw_notification("tick", {"n": n, "pad": "y" * 100})
            sent.append(n)
        return Answer(text=f"sent {len(sent)}")

    agent, peer = pipe_transports()
    builder = ConnectionBuilder(pace_bytes=DEFAULT_HIGH_WATER_BYTES).on_request(ASK, stream)
    async with builder.connect(agent):
        await peer.send(json.dumps(request(1, "test/ask", {"question": "go"})).encode())
        with anyio.fail_after(10):
            first = json.loads(await peer.receive())
            assert first["method"] == "tick"
            await peer.send(json.dumps(cancel(1)).encode())
            while "id" not in (message := json.loads(await peer.receive())):
                pass
        await peer.aclose()
    assert message == result(1, {"text": f"sent {len(sent)}"})
    assert len(sent) < total // 2  # without the turns: all 4000, then the cancel
    assert len(sent) * 150 < 8 * LOOP_TURN_BYTES


class _Awaiting:
    def __init__(self, outbox: Outbox) -> None:
        self.outbox = outbox

    def __await__(self) -> Generator[Any, None, None]:
        return self.outbox.drained()


async def test_rel4_a_sender_waiting_on_a_peer_that_goes_away_is_released() -> None:
    ours, theirs = memory_pair(max_buffer=0)
    async with ConnectionBuilder(high_water_bytes=MARK).connect(ours) as cx:
        for _ in range(20):
            cx.send_raw_notification("tick", {"pad": "z" * 200})
        assert cx.outgoing_backlog > MARK
        async with anyio.create_task_group() as tg:

            async def waiter() -> None:
                with anyio.fail_after(5):
                    await cx.drain()

            tg.start_soon(waiter)
            await wait_all_tasks_blocked()
            await theirs.aclose()  # the writer fails: nobody will ever read the rest


async def test_rel4_the_answer_to_a_cancelled_request_goes_ahead_of_queued_answers() -> None:
    async def handle(method: str, params: JsonValue, responder: Responder[JsonValue]) -> JsonValue:
        if method == "slow":
            work = responder.cancellation.run_until_cancelled(anyio.sleep_forever())
            responder.connection.spawn(responder.respond_with, work)
            return None
        return ANSWER

    async with unread_peer(ConnectionBuilder().on_raw_request(handle)) as (_cx, peer):
        await peer.send(request("slow", "slow"))
        for n in range(1, 6):
            await peer.send(request(n, "bulk"))  # answer 1 is being written, 2..5 queued
        await peer.send(cancel("slow"))
        await wait_all_tasks_blocked()
        ids = [(await peer.receive())["id"] for _ in range(6)]
        assert ids == [1, "slow", 2, 3, 4, 5]


async def test_rel4_a_cancel_goes_first_once_its_request_is_written_and_never_before_it() -> None:
    async with unread_peer(ConnectionBuilder()) as (cx, peer):
        written = cx.send_raw_request("a")
        await wait_all_tasks_blocked()  # the writer has taken "a" and waits for the peer
        queued = cx.send_raw_request("b")
        for n in range(3):
            cx.send_raw_notification("note", {"n": n})
        written.cancel()  # "a" is on its way: the cancel goes next
        queued.cancel()  # "b" is still queued: the cancel stays behind it
        wire = [await peer.receive() for _ in range(7)]
        assert [(m.get("method"), m.get("id", m.get("params"))) for m in wire] == [
            ("a", written.id),
            ("$/cancel_request", {"requestId": written.id}),
            ("b", queued.id),
            ("note", {"n": 0}),
            ("note", {"n": 1}),
            ("note", {"n": 2}),
            ("$/cancel_request", {"requestId": queued.id}),
        ]
        written.detach()
        queued.detach()


async def test_rel4_outbox_lanes_and_backlog_accounting() -> None:
    """The writer's view: urgent first, byte counts until the batch is written."""
    outbox = Outbox(high_water=10)
    first = outbox.put(b"12345")
    assert first == 1 and outbox.backlog == 5 and not outbox.over_high_water
    outbox.put(b"678901")
    assert outbox.over_high_water
    outbox.put_urgent(b"!")
    outbox.put_after(b"after-first", first)  # "12345" not taken yet: behind it
    assert await outbox.take(100) == [b"!", b"12345", b"678901", b"after-first"]
    assert outbox.backlog == 23  # still being written
    outbox.put_after(b"urgent-now", first)  # taken: goes first
    outbox.put(b"later")
    outbox.sent()
    assert outbox.backlog == len(b"urgent-now") + len(b"later")
    assert await outbox.take(100) == [b"urgent-now", b"later"]
