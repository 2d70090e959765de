"""The Streamable HTTP client's hand-over from its SSE readers to the connection's reader.

Several readers (the connection's stream, one per session) feed one connection. A memory
object stream costs a checkpoint on each side per message, so a reader gave up the loop
after every event and the connection woke once per event. Here a reader appends to a
deque and wakes the connection's reader only if it is parked (once for a whole burst);
a reader waits only while ``limit`` messages are queued. While the connection's reader is
parked on an empty inbox, each message is first offered to its eager receiver (a response
is settled without waking the reader at all), as the stdio transport does from its
readiness callback.
"""

from __future__ import annotations

from collections import deque
from typing import Generic, TypeVar

import anyio

from .._framing import EagerReceiver

T = TypeVar("T")


class Inbox(Generic[T]):
    """A FIFO of messages with one consumer (:meth:`get`) and any number of producers."""

    def __init__(self, limit: int) -> None:
        self._items: deque[T] = deque()
        self._limit = limit
        self._parked: anyio.Event | None = None  # the consumer waits on it
        self._room: anyio.Event | None = None  # producers wait on it
        self._closed = False
        self.eager: EagerReceiver | None = None
        """Offered each ``bytes`` message put while the consumer is parked on an empty
        inbox; one it takes is not queued."""

    def put_nowait(self, item: T) -> None:
        """Queue ``item`` (dropped once closed), or hand it to the eager receiver."""
        if self._closed:
            return
        parked = self._parked
        if parked is not None:
            eager = self.eager
            if eager is not None and not self._items and isinstance(item, bytes) and eager(item):
                return
            self._parked = None
            parked.set()
        self._items.append(item)

    async def put(self, item: T) -> None:
        """:meth:`put_nowait`, after waiting while ``limit`` messages are queued."""
        while len(self._items) >= self._limit and not self._closed:
            if self._room is None:
                self._room = anyio.Event()
            await self._room.wait()
        self.put_nowait(item)

    async def get(self) -> T:
        """The oldest message, without a checkpoint when one is queued; raises
        :class:`anyio.EndOfStream` once closed and empty."""
        items = self._items
        while not items:
            if self._closed:
                raise anyio.EndOfStream
            self._parked = parked = anyio.Event()
            try:
                await parked.wait()
            finally:
                self._parked = None
        item = items.popleft()
        room = self._room
        if room is not None and len(items) < self._limit:
            self._room = None
            room.set()
        return item

    def close(self) -> None:
        """No more messages: the consumer gets what is queued, then EOF; producers waiting
        for room return (their messages are dropped)."""
        self._closed = True
        for event in (self._parked, self._room):
            if event is not None:
                event.set()
        self._parked = self._room = None
