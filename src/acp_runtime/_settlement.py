"""The outgoing-request state machine: one record per request, one table per connection.

Every rule about when a ``$/cancel_request`` may go out lives here, in
:class:`PendingRequest`, so the public handles (:class:`~acp_runtime.SentRequest`,
:class:`~acp_runtime.RequestCancellationHandle`) and the dispatch loop only call into it.

A record has three coordinates:

* ``wire``: ``PREPARED`` (not yet on the wire) → ``PUBLISHED`` → ``SETTLED`` (a response
  was routed, or a local failure such as connection close).
* ``armed``: the once-only cancel flag (OUT-4). Spent by the first explicit or automatic
  cancel, and by settlement, which disarms *before* any callback runs (OUT-7).
* ``consumer``: who takes the outcome: nobody yet, an awaiting task, a callback, or
  nobody ever (detached or dropped).

Everything here is synchronous and runs on the event loop thread; the only async part,
waiting for the outcome, is :meth:`PendingRequest.wait`.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Coroutine
from typing import TYPE_CHECKING, Any, ClassVar, Protocol

from ._errors import RequestError
from ._jsonrpc import RequestId, encode_notification, encode_request, log_fields
from ._methods import JsonValue, Payload
from ._peer import Peer, on_wire
from ._turns import cancel_notification

if TYPE_CHECKING:
    from ._cancellation import CancellationMarker
    from ._loop import Waiter

log = logging.getLogger(__name__)

CANCEL_REQUEST_METHOD = "$/cancel_request"


class OutboxClosed(Exception):
    """The connection no longer accepts outgoing messages."""


class RequestLink(Protocol):
    """What a pending request needs from its connection."""

    @property
    def pending(self) -> PendingTable: ...

    def enqueue(self, message: bytes) -> int:
        """Queue one encoded message for the writer (FIFO); returns a ticket for
        :meth:`enqueue_after`. Raises :class:`OutboxClosed`."""
        ...

    def enqueue_after(self, message: bytes, ticket: int) -> None:
        """Queue a message that must follow the one ``ticket`` names, and otherwise
        goes first (a cancel: ahead of other output once its request has left the
        queue). Raises :class:`OutboxClosed`."""
        ...

    def call_soon(self, callback: Callable[[], None]) -> None:
        """Run ``callback`` soon on the loop; safe from finalizers."""
        ...

    def run_callback(self, callback: Callable[[], Coroutine[Any, Any, None]]) -> None:
        """Run a result callback as connection work (the response arrived earlier).
        Raises :class:`OutboxClosed` once the connection has finished."""
        ...

    def new_waiter(self) -> Waiter:
        """A wake-up for the task that awaits a request's outcome."""
        ...

    def in_dispatch_loop(self) -> bool:
        """True when called from the task that reads and dispatches incoming messages:
        awaiting an answer there would wait for itself. Called from a request handler
        that may go on alone (a typed one), the connection first hands the reading over
        to a new task and answers False."""
        ...


class _States:
    """Base of a small closed set of states, each a class attribute holding an instance.

    Not ``enum.Enum``: on Python 3.10 and 3.11 each read of an Enum member
    (``Wire.SETTLED``) goes through the slow attribute hook that ``EnumType.__getattr__``
    installs, about 850 instructions, and a request round trip read 14 of them (4 % of
    a ping, callgrind, ``bench/message_paths.py``). A plain class attribute costs a
    dictionary read.
    """

    __slots__ = ("value",)

    def __init__(self, value: str) -> None:
        self.value = value

    def __repr__(self) -> str:
        return f"<{type(self).__name__}.{self.value.upper()}>"


class Wire(_States):
    """Where a request is: not yet on the wire, on it, or settled."""

    __slots__ = ()
    PREPARED: ClassVar[Wire]
    PUBLISHED: ClassVar[Wire]
    SETTLED: ClassVar[Wire]


Wire.PREPARED, Wire.PUBLISHED, Wire.SETTLED = Wire("prepared"), Wire("published"), Wire("settled")


class Consumer(_States):
    """Who takes a request's outcome."""

    __slots__ = ()
    NONE: ClassVar[Consumer]
    AWAIT: ClassVar[Consumer]
    CALLBACK: ClassVar[Consumer]
    GONE: ClassVar[Consumer]
    """Detached, dropped or abandoned: the outcome is discarded."""


Consumer.NONE, Consumer.AWAIT = Consumer("none"), Consumer("await")
Consumer.CALLBACK, Consumer.GONE = Consumer("callback"), Consumer("gone")


ResultCallback = Callable[[JsonValue, "RequestError | None"], Coroutine[Any, Any, None]]
"""Receives the raw result, or the error (then the result is ``None``)."""


class PendingRequest:
    """One outgoing request and its settlement state."""

    __slots__ = (
        "_callback",
        "_sources",
        "_waiter",
        "armed",
        "cancels_session",
        "consumer",
        "error",
        "id",
        "link",
        "method",
        "params",
        "peer",
        "result",
        "ticket",
        "wire",
    )

    def __init__(
        self, link: RequestLink, request_id: int, method: str, params: Payload, peer: Peer
    ) -> None:
        self.link = link
        self.id = request_id
        self.method = method
        self.params = params
        self.peer = peer
        self.wire = Wire.PREPARED
        self.ticket = 0
        """Where the request went in the outgoing queue (see :meth:`RequestLink.enqueue`)."""
        self.armed = True
        self.cancels_session: str | None = None
        """For a prompt: the session whose ``session/cancel`` goes right after this
        request's ``$/cancel_request`` (see :mod:`~acp_runtime._turns`)."""
        self.consumer = Consumer.NONE
        self.result: JsonValue = None
        self.error: RequestError | None = None
        self._waiter: Waiter | None = None
        self._callback: ResultCallback | None = None
        self._sources: list[CancellationMarker] = []

    # -- publication ------------------------------------------------------------------

    def publish(self) -> None:
        """Register, then put the request on the outgoing queue (no-op if already done).

        Registering first means a connection close fails every request that may be on
        the wire; a closed connection settles the request locally at once.
        """
        if self.wire is not Wire.PREPARED:
            return
        method, params = on_wire(self.peer, self.method, self.params)
        self.params = None
        try:
            self.link.pending.register(self)
            self.wire = Wire.PUBLISHED
            self.ticket = self.link.enqueue(encode_request(self.id, method, params))
        except OutboxClosed:
            self.link.pending.discard(self)
            callback = self.settle(None, RequestError.connection_closed(self.method))
            if callback is not None:
                self.run_callback(callback)
        except (TypeError, ValueError):
            # Not JSON-encodable, so never on the wire: nothing to wait for or cancel.
            self.link.pending.discard(self)
            self.wire = Wire.SETTLED
            self.armed = False
            raise

    def run_callback(self, callback: Callable[[], Coroutine[Any, Any, None]]) -> None:
        """Run this request's result callback as connection work. Once the connection
        has finished nothing can run it: raise the connection-closed error to whoever
        selected the callback instead of dropping it silently."""
        try:
            self.link.run_callback(callback)
        except OutboxClosed:
            raise RequestError.connection_closed(self.method) from None

    # -- cancellation -----------------------------------------------------------------

    def cancel(self) -> None:
        """Send ``$/cancel_request`` once, if the request is on the wire and unsettled.

        A no-op (not remembered) before publication and after settlement (OUT-8, OUT-9).
        Raises :class:`RequestError` only when the cancel cannot even be queued.
        """
        if self.wire is not Wire.PUBLISHED or not self.armed:
            return
        self.armed = False
        method, params = self.peer.wrap(CANCEL_REQUEST_METHOD, {"requestId": self.id})
        try:
            self.link.enqueue_after(encode_notification(method, params), self.ticket)
            if self.cancels_session is not None:
                stop = self.peer.wrap(*cancel_notification(self.cancels_session))
                self.link.enqueue_after(encode_notification(*stop), self.ticket)
        except OutboxClosed:
            raise RequestError.connection_closed(CANCEL_REQUEST_METHOD) from None

    def cancel_quietly(self) -> None:
        """:meth:`cancel` for automatic paths, where nobody could act on an error."""
        try:
            self.cancel()
        except RequestError as error:
            log.debug(
                "automatic cancel of %s id=%r not sent: %s",
                self.method,
                self.id,
                error,
                extra=log_fields(self.method, self.id),
            )

    def abandon(self) -> None:
        """The consumer is gone (awaiting task cancelled, handle collected): cancel
        automatically if still armed, and discard the outcome when it comes (OUT-5)."""
        if self.consumer is Consumer.GONE:
            return
        self.consumer = Consumer.GONE
        self._stop_watching()
        self.cancel_quietly()

    def abandon_if_unconsumed(self) -> None:
        """For a collected handle: :meth:`abandon` from the loop if nobody consumed
        the request and it is still pending. Runs wherever the collector runs, so it
        only schedules, and never raises (the interpreter may be shutting down)."""
        try:
            if self.consumer is Consumer.NONE and self.wire is not Wire.SETTLED:
                self.link.call_soon(self.abandon)
        except Exception:  # pragma: no cover - module globals torn down at exit
            pass

    def detach(self) -> None:
        """Discard the outcome; no automatic cancel. The flag stays armed so a retained
        handle can still cancel explicitly while the request is pending (OUT-6)."""
        self.consumer = Consumer.GONE
        self._stop_watching()
        self._callback = None

    def watch(self, marker: CancellationMarker) -> None:
        """Remember a source whose cancellation is forwarded to this request (PROXY-2)."""
        self._sources.append(marker)

    def start_watching(self) -> None:
        """Observe the registered sources from now on (at consumption time)."""
        for marker in self._sources:
            if marker.is_cancelled():
                self.cancel_quietly()
            else:
                marker._add_callback(self.cancel_quietly)  # pyright: ignore[reportPrivateUsage]

    def _stop_watching(self) -> None:
        for marker in self._sources:
            marker._remove_callback(self.cancel_quietly)  # pyright: ignore[reportPrivateUsage]
        self._sources.clear()

    # -- consumption and settlement ---------------------------------------------------

    def consume(self, consumer: Consumer, callback: ResultCallback | None = None) -> None:
        """Select how the outcome is taken; only once per request."""
        if self.consumer is not Consumer.NONE:
            raise RuntimeError(f"request {self.method} id={self.id} was already consumed")
        self.consumer = consumer
        self._callback = callback

    def settle(
        self, result: JsonValue, error: RequestError | None
    ) -> Callable[[], Coroutine[Any, Any, None]] | None:
        """Record the outcome (a routed response or a local failure); first one wins.

        Disarms cancellation before anything else (OUT-7). Returns the result callback
        to run, if a callback consumer was selected; the caller decides where it runs.
        """
        if self.wire is Wire.SETTLED:
            return None
        self.armed = False
        self.wire = Wire.SETTLED
        self._stop_watching()
        if self.consumer is Consumer.GONE:
            log.debug(
                "discarding outcome of %s id=%r: no consumer",
                self.method,
                self.id,
                extra=log_fields(self.method, self.id),
            )
            return None
        self.result = result
        self.error = error
        if self._waiter is not None:
            self._waiter.wake()
        return self.take_callback()

    @property
    def has_result_callback(self) -> bool:
        return self._callback is not None

    def take_callback(self) -> Callable[[], Coroutine[Any, Any, None]] | None:
        """The callback bound to the outcome, once settled (None otherwise)."""
        callback = self._callback
        if callback is None or self.wire is not Wire.SETTLED:
            return None
        self._callback = None
        result, error = self.result, self.error
        self.result = self.error = None  # the callback owns the outcome now

        async def deliver() -> None:
            await callback(result, error)

        return deliver

    def waiter(self) -> Waiter | None:
        """What to await until settled; None if settled already."""
        if self.wire is Wire.SETTLED:
            return None
        if self._waiter is None:
            self._waiter = self.link.new_waiter()
        return self._waiter

    def fresh_waiter(self) -> Waiter | None:
        """:meth:`waiter`, new: the old one may have been spent by a timeout that
        cancelled the wait (an asyncio future is cancelled with its awaiting task)."""
        self._waiter = None
        return self.waiter()

    def __repr__(self) -> str:
        return (
            f"<PendingRequest {self.method} id={self.id} {self.wire.value} "
            f"armed={self.armed} consumer={self.consumer.value}>"
        )


class PendingTable:
    """Outgoing requests on the wire and not yet settled, by id.

    Our ids are ints we allocate, so a response id matches only if it is exactly an
    ``int`` (never a ``bool`` or the string form).
    """

    __slots__ = ("_closed", "_next_id", "_records")

    def __init__(self) -> None:
        self._records: dict[int, PendingRequest] = {}
        self._next_id = 0
        self._closed = False

    def allocate_id(self) -> int:
        self._next_id += 1
        return self._next_id

    @property
    def closed(self) -> bool:
        return self._closed

    def register(self, record: PendingRequest) -> None:
        if self._closed:
            raise OutboxClosed
        self._records[record.id] = record

    def discard(self, record: PendingRequest) -> None:
        if self._records.get(record.id) is record:
            del self._records[record.id]

    def get(self, request_id: RequestId) -> PendingRequest | None:
        """The record a response with ``request_id`` belongs to, left in the table."""
        return self._records.get(request_id) if type(request_id) is int else None

    def take(self, request_id: RequestId) -> PendingRequest | None:
        """Remove and return the record a response with ``request_id`` belongs to."""
        if type(request_id) is not int:
            return None
        return self._records.pop(request_id, None)

    def take_without_callback(self, request_id: RequestId) -> PendingRequest | None:
        """:meth:`take`, but only a record whose settlement runs no result callback
        (those must run in the dispatch loop, in order with incoming messages)."""
        record = self._records.get(request_id) if type(request_id) is int else None
        if record is None or record.has_result_callback:
            return None
        del self._records[record.id]
        return record

    def close(self) -> list[PendingRequest]:
        """Refuse new registrations; return (and forget) every pending record."""
        self._closed = True
        records = list(self._records.values())
        self._records.clear()
        return records

    def __len__(self) -> int:
        return len(self._records)
