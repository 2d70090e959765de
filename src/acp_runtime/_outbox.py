"""The connection's outgoing queue: encoded messages waiting for the writer task.

Queuing never blocks (responses, cancels and notifications are queued from synchronous
code, including finalizer callbacks); instead the queue counts its bytes, from the
moment a message is queued until the writer's send of it returns, and says when that
backlog passes the *high-water mark*: the connection then stops reading (so no more
requests come in to answer) and paced senders wait (:meth:`Outbox.drained`) until the
peer has taken enough for the backlog to fall to the *low-water mark*.

Two lanes, written in this order: *urgent* (answers to requests the peer cancelled, and
cancels of requests already handed to the writer) and *bulk* (everything else, FIFO).
So cancellation is never stuck behind megabytes of other output, while a cancel whose
request is still queued stays behind it: the peer never sees a cancel for an id it has
not seen.

The writer takes everything queued so far in one go, which lets a framed transport put a
backlog on the wire in one write: fewer system calls, and fewer wake-ups of the peer.
When nothing is queued, a message may go out at once through ``send_now`` (a
transport's non-blocking write), saving the writer task's wake-up.

A handler that sends a burst without yielding (a loop of un-awaited notifications)
fills the pipe, then queues the rest: the writer task runs only once the handler
returns, and the peer, which reads faster than the pipe refills, sits idle meanwhile.
So while messages queue, every ``burst_bytes`` of them :meth:`Outbox.put` also tries
``send_burst_now``, one non-blocking write of as many queued messages as it takes:
the peer reads the burst while the rest of it is being produced. A burst never
overtakes a batch the writer task still holds (the pipe took only part of it): then an
awaited send gives the writer a turn instead, or a stream of awaited sends under the pace
mark would leave the peer without data until the pace mark.

A sender that awaits its message (:meth:`Outbox.drained`) gives the event loop a turn
once ``turn_bytes`` have been sent or queued since the last turn (or since the taker last
took the queue, which needs one). So a loop of awaited sends never holds the loop for
long, whatever the transport: the connection reads what the peer sent meanwhile (a
``$/cancel_request`` for the very stream), and where every write is asynchronous (an
ASGI server's ``send``, a memory stream) the writer task takes the queue, so the stream
flows instead of waiting for the handler to return. Without it, a stream to a peer that
reads as fast as the pipe fills never reaches the pace mark, the only other place an
awaited send suspends: 10,000 chunks went out before the connection read the ping sent
with them, or the cancel.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Generator, Iterable
from itertools import chain
from typing import Any

import anyio
import anyio.lowlevel

from ._settlement import OutboxClosed

BurstSender = Callable[[Iterable[bytes]], int]
"""Writes as many of the given messages (from the first) as one non-blocking write
takes whole, and returns how many (0: none); it must refuse while the taker's batch is
being written."""

DEFAULT_HIGH_WATER_BYTES = 16 * 1024 * 1024
"""Backlog at which a connection stops reading: a peer that stops reading costs about
this much memory (plus what handlers already running still send), far under 64 MiB."""

DEFAULT_PACE_BYTES = 256 * 1024
"""Backlog over which an awaited send waits. Lower than the high-water mark, because a
stream paces itself without stopping the reading: two peers that both stop reading
wait for each other forever, while a sender that waits holds up only its own stream.
With the high-water mark alone, a stream of 50,000 small chunks sat in the queue whole
and raised the agent's peak RSS by 5 MB; from 256 KiB up, the CPU per chunk is the same.
Not higher, because an answer queues behind the stream: with the TS client reading a
10,000-chunk stream, a ping answered meanwhile took 31-56 ms (p99) behind a 1 MiB mark,
13-23 ms behind 256 KiB, and 13-32 ms from the TS agent (bench/README.md)."""


class Outbox:
    """Two FIFO lanes of encoded messages; :meth:`put` from anywhere on the loop, one taker.

    Tickets order a message against others: :meth:`put` returns the bulk lane's count
    of messages so far, and :meth:`put_after` uses it to tell whether that message has
    already gone to the writer.
    """

    __slots__ = (
        "_bulk",
        "_burst_bytes",
        "_burst_min",
        "_closed",
        "_drained",
        "_in_flight",
        "_send_burst_now",
        "_send_now",
        "_since_burst",
        "_since_turn",
        "_taken",
        "_tickets",
        "_turn_bytes",
        "_urgent",
        "_wakeup",
        "_writer_turn_due",
        "backlog",
        "high_water",
        "low_water",
        "pace",
    )

    def __init__(
        self,
        send_now: Callable[[bytes], bool] | None = None,
        *,
        send_burst_now: BurstSender | None = None,
        burst_bytes: int = 0,
        turn_bytes: int = 0,
        high_water: int = DEFAULT_HIGH_WATER_BYTES,
        low_water: int | None = None,
        pace: int = DEFAULT_PACE_BYTES,
    ) -> None:
        """``send_now(message)`` writes a message at once and returns True, or writes
        nothing and returns False; it is tried only while the queue is empty, so it
        must also refuse while the taker is still writing an earlier batch.
        ``send_burst_now`` (see :data:`BurstSender`) is tried each time another
        ``burst_bytes`` have queued (0: never). An awaited :meth:`drained` gives the
        loop a turn once ``turn_bytes`` have been sent or queued since the last one (0:
        never), and waits over ``pace`` bytes (at most ``high_water``); ``low_water``
        defaults to half of that."""
        if high_water < 1 or pace < 1:
            raise ValueError("high_water and pace must be positive")
        self._send_now = send_now
        self._send_burst_now = send_burst_now if burst_bytes > 0 else None
        self._burst_min = self._burst_bytes = burst_bytes
        self._since_burst = 0  # bytes queued since send_burst_now was last tried
        self._turn_bytes = turn_bytes
        self._since_turn = 0  # bytes sent or queued since a sender or the taker had a turn
        self._writer_turn_due = False  # a burst was due while the taker held a batch
        self._urgent: deque[bytes] = deque()
        self._bulk: deque[bytes] = deque()
        self._closed = False
        self._wakeup: anyio.Event | None = None
        self._drained: anyio.Event | None = None
        self._tickets = 0  # bulk messages queued so far
        self._taken = 0  # bulk messages handed to the taker so far
        self._in_flight = 0  # bytes of the batch being written
        self.high_water = high_water
        self.pace = min(pace, high_water)
        self.low_water = self.pace // 2 if low_water is None else min(low_water, self.pace)
        self.backlog = 0
        """Bytes queued or being written."""

    def put(self, message: bytes) -> int:
        """Queue one message in the bulk lane; returns its ticket (0: already sent).
        Raises :class:`OutboxClosed` once closed."""
        if self._closed:
            raise OutboxClosed
        if self._send_now is not None and not self.backlog and self._send_now(message):
            self._since_turn += len(message)
            return 0
        self._bulk.append(message)
        self._tickets += 1
        self._queued(len(message))
        return self._tickets

    def put_urgent(self, message: bytes) -> None:
        """Queue one message ahead of every bulk message still queued."""
        if self._closed:
            raise OutboxClosed
        if self._send_now is not None and not self.backlog and self._send_now(message):
            self._since_turn += len(message)
            return
        self._urgent.append(message)
        self._queued(len(message))

    def put_after(self, message: bytes, ticket: int) -> None:
        """Queue a message that must follow the one ``ticket`` names: urgent once that
        one has gone to the writer, else in the bulk lane behind it."""
        if ticket <= self._taken:
            self.put_urgent(message)
        else:
            self.put(message)

    @property
    def over_high_water(self) -> bool:
        return self.backlog > self.high_water

    def drained(self) -> Generator[Any, None, None]:
        """What awaiting a drain does (an ``__await__``): no wait while the backlog is
        under the pace mark (and no checkpoint but the turns below: pacing costs
        nothing while the peer keeps up); once over it, wait until the backlog is down
        to the low-water mark or the queue closed. Everyone who comes meanwhile waits
        too. The loop gets a turn first (a scheduling point that is never a cancellation
        point) when a burst was due while the writer held a batch, and, with
        ``turn_bytes``, once that much has been sent since the last turn."""
        if self._writer_turn_due or (self._turn_bytes and self._since_turn >= self._turn_bytes):
            self._writer_turn_due = False
            self._since_turn = 0
            yield from anyio.lowlevel.cancel_shielded_checkpoint().__await__()
        if self.backlog <= self.pace and self._drained is None:
            return
        while self.backlog > self.low_water and not self._closed:
            if self._drained is None:
                self._drained = anyio.Event()
            yield from self._drained.wait().__await__()

    def close(self) -> None:
        """Refuse new messages; the taker still gets those already queued."""
        self._closed = True
        self._wake()
        self._wake_drained()

    async def take(self, max_bytes: int) -> list[bytes]:
        """Wait for a message, then return it with those queued behind it (urgent ones
        first), up to ``max_bytes`` in total (always at least one). ``[]`` once closed
        and drained. Call :meth:`sent` when the batch is written."""
        urgent, bulk = self._urgent, self._bulk
        while not (urgent or bulk):
            if self._closed:
                return []
            self._wakeup = wakeup = anyio.Event()
            await wakeup.wait()
        batch: list[bytes] = []
        size = 0
        while urgent and (not batch or size + len(urgent[0]) <= max_bytes):
            message = urgent.popleft()
            batch.append(message)
            size += len(message)
        taken = len(batch)
        while bulk and (not batch or size + len(bulk[0]) <= max_bytes):
            message = bulk.popleft()
            batch.append(message)
            size += len(message)
        self._taken += len(batch) - taken
        self._in_flight = size
        self._since_turn = 0
        return batch

    def sent(self) -> None:
        """The batch :meth:`take` returned is written: its bytes leave the backlog."""
        size, self._in_flight = self._in_flight, 0
        self._release(size)

    def _release(self, size: int) -> None:
        """``size`` queued bytes are written: out of the backlog, and those waiting for a
        drain woken once it is down to the low-water mark."""
        self.backlog -= size
        if self._drained is not None and self.backlog <= self.low_water:
            self._wake_drained()

    def _queued(self, size: int) -> None:
        self.backlog += size
        self._since_turn += size
        self._wake()
        if self._send_burst_now is not None:
            self._since_burst += size
            if self._since_burst >= self._burst_bytes:
                self._since_burst = 0
                self._write_burst(self._send_burst_now)

    def _write_burst(self, send_burst_now: BurstSender) -> None:
        """Write what is queued through ``send_burst_now`` until it is all out or a
        write is refused; never while the taker holds a batch (it goes first). After a
        refusal (the peer is behind) the next try waits for twice as many bytes, up to
        four times ``burst_bytes``: a full pipe is not probed every few messages."""
        if self._in_flight:  # the taker's batch goes first: an awaited send lets it run
            self._writer_turn_due = True
            return
        urgent, bulk = self._urgent, self._bulk
        while urgent or bulk:
            count = send_burst_now(chain(urgent, bulk) if urgent else bulk)
            if not count:
                self._burst_bytes = min(2 * self._burst_bytes, 4 * self._burst_min)
                break
            self._burst_bytes = self._burst_min
            size = 0
            while urgent and count:
                size += len(urgent.popleft())
                count -= 1
            self._taken += count
            for _ in range(count):
                size += len(bulk.popleft())
            self._release(size)

    def _wake(self) -> None:
        wakeup, self._wakeup = self._wakeup, None
        if wakeup is not None:
            wakeup.set()

    def _wake_drained(self) -> None:
        drained, self._drained = self._drained, None
        if drained is not None:
            drained.set()
