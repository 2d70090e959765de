"""One SSE stream's queue on the Streamable HTTP server: what the agent sent to it, kept
until its one reader takes it, so output that races the client's GET is not lost.

A stream knows nothing of limits; its connection counts the bytes it holds (and closes
itself past its bounds) through the ``on_taken`` callback.
"""

from __future__ import annotations

import json
from collections import deque
from collections.abc import Callable

import anyio

KEEP_ALIVE = b":\n\n"
"""The SSE comment TS 2.4.0 sends to a waiting reader: ignored by every parser, it keeps
proxies and clients (Node's fetch gives up on a body after 300 s without a chunk) from
calling the stream dead."""

_LF = 0x0A  # byte values: ``b"\n" in data`` costs a dropped TypeError on Python 3.11
_CR = 0x0D


def sse_event(message: bytes) -> bytes:
    """One message as one SSE event, exactly as TS writes it: ``data: <json>\\n\\n``. The
    runtime's JSON texts are compact, so no re-encoding; one with a line break (JSON
    whitespace: a relayed text) is written compact first, or it would end the event."""
    if _LF in message or _CR in message:
        message = json.dumps(
            json.loads(message), separators=(",", ":"), ensure_ascii=False
        ).encode()
    return b"data: " + message + b"\n\n"


class OutboundStream:
    """A queue of SSE events with at most one reader at a time."""

    __slots__ = ("_events", "_finished", "_on_taken", "_reader", "_wake", "session_id")

    def __init__(self, session_id: str | None, on_taken: Callable[[int], None]) -> None:
        self.session_id = session_id
        """None for the connection's stream."""
        self._events: deque[bytes] = deque()
        self._on_taken = on_taken
        self._reader: object | None = None
        self._finished = False
        self._wake = anyio.Event()

    @property
    def has_reader(self) -> bool:
        return self._reader is not None

    @property
    def has_queued(self) -> bool:
        return bool(self._events)

    @property
    def finished(self) -> bool:
        return self._finished

    def push(self, event: bytes) -> bool:
        """Queue one event; False (and nothing queued) once the stream has finished."""
        if self._finished:
            return False
        self._events.append(event)
        self._wake.set()
        return True

    def acquire(self) -> object | None:
        """A token for the one reader, or None when the stream already has one (409).
        A finished stream still gives what it holds, then EOF."""
        if self._reader is not None:
            return None
        self._reader = object()
        return self._reader

    def release(self, token: object) -> None:
        if self._reader is token:
            self._reader = None

    def take(self, limit: int) -> bytes:
        """The queued events joined, oldest first, as many as fit in ``limit`` bytes (at
        least one): one write for a burst of notifications instead of one each. Empty
        when nothing is queued."""
        events = self._events
        if not events:
            return b""
        if len(events) == 1:
            taken = events.popleft()
        else:
            batch = [events.popleft()]
            size = len(batch[0])
            while events and size + len(events[0]) <= limit:
                size += len(events[0])
                batch.append(events.popleft())
            taken = b"".join(batch)
        self._on_taken(len(taken))
        return taken

    async def wait(self, seconds: float) -> bool:
        """Wait until an event is queued or the stream finishes: False after ``seconds``
        without either (time for a keep-alive comment)."""
        if self._events or self._finished:
            return True
        if self._wake.is_set():
            self._wake = anyio.Event()
        with anyio.move_on_after(seconds):
            await self._wake.wait()
            return True
        return False

    def finish(self, *, discard: bool) -> int:
        """No more events; the reader ends after what is queued, or at once with
        ``discard``. Returns the bytes discarded."""
        self._finished = True
        dropped = 0
        if discard:
            dropped = sum(len(event) for event in self._events)
            self._events.clear()
        self._wake.set()
        return dropped
