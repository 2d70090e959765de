"""The connection's outgoing FIFO: encoded messages waiting for the writer task.

Queuing never blocks (responses, cancels and notifications are queued from
synchronous code, including finalizer callbacks), so the queue is unbounded. The
writer takes everything queued so far in one go, which lets a framed transport put a
backlog on the wire in one write: fewer system calls, and fewer wake-ups of the peer.
When nothing is queued, a message may go out at once through ``send_now`` (a
transport's non-blocking write), saving the writer task's wake-up.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable

import anyio

from .settlement import OutboxClosed


class Outbox:
    """FIFO of encoded messages; :meth:`put` from anywhere on the loop, one taker."""

    __slots__ = ("_closed", "_items", "_send_now", "_wakeup")

    def __init__(self, send_now: Callable[[bytes], bool] | None = None) -> None:
        """``send_now(message)`` writes a message at once and returns True, or writes
        nothing and returns False; it is tried only while the queue is empty, so it
        must also refuse while the taker is still writing an earlier batch."""
        self._send_now = send_now
        self._items: deque[bytes] = deque()
        self._closed = False
        self._wakeup: anyio.Event | None = None

    def put(self, message: bytes) -> None:
        """Queue one message; raises :class:`OutboxClosed` once closed."""
        if self._closed:
            raise OutboxClosed
        if not self._items and self._send_now is not None and self._send_now(message):
            return
        self._items.append(message)
        self._wake()

    def close(self) -> None:
        """Refuse new messages; the taker still gets those already queued."""
        self._closed = True
        self._wake()

    async def take(self, max_bytes: int) -> list[bytes]:
        """Wait for a message, then return it with those queued behind it, up to
        ``max_bytes`` in total (always at least one). ``[]`` once closed and drained."""
        items = self._items
        while not items:
            if self._closed:
                return []
            self._wakeup = wakeup = anyio.Event()
            await wakeup.wait()
        first = items.popleft()
        batch, size = [first], len(first)
        while items and size + len(items[0]) <= max_bytes:
            message = items.popleft()
            batch.append(message)
            size += len(message)
        return batch

    def _wake(self) -> None:
        wakeup, self._wakeup = self._wakeup, None
        if wakeup is not None:
            wakeup.set()
