"""A live JSON-RPC connection: one dispatch loop, one outgoing writer, two tables.

* The dispatch loop reads one message at a time, in arrival order. Notifications,
  responses (and their result callbacks) and ``$/cancel_request`` are handled *in* the
  loop, fully, before the next message is read. A request handler registered with
  ``inline=False`` (the default of typed handlers) starts in the loop too, so handlers
  start in arrival order and one that answers at once costs no task; the first time it
  suspends, the loop hands the reading over to a new task and the handler goes on in
  the old one, so it may simply ``await`` the peer (IN-5). Inline handlers (raw
  handlers, ``inline=True``) hold the loop like a notification handler; their long work
  must go to :meth:`Connection.spawn`.
* Every outgoing message (requests, notifications, responses, cancels) goes through one
  queue drained by the writer task (:mod:`~acp_runtime._outbox`): FIFO, except that
  cancellation goes first (an answer to a request the peer cancelled, a cancel of a
  request already written), and a request's ``$/cancel_request`` always follows it.
* Backpressure: while more than the high-water mark of output waits for the peer, the
  dispatch loop reads nothing; over the (lower) pace mark, awaiting
  :meth:`Connection.send_notification` (or :meth:`Connection.drain`) waits, until the
  peer has taken enough; under it, such awaits give the loop a turn every
  ``LOOP_TURN_BYTES``, so a stream never holds up the reading.
* Outgoing requests live in a :class:`~acp_runtime._settlement.PendingTable`; incoming
  ones in an :class:`~acp_runtime._cancellation.IncomingRequests` registry.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Coroutine, Generator, Sequence
from contextlib import nullcontext
from contextvars import copy_context
from dataclasses import dataclass, field
from functools import partial
from typing import TYPE_CHECKING, Any, Protocol, TypeVar, overload

import anyio
import anyio.abc
from anyio.abc import TaskGroup

from ._cancellation import IncomingRequests
from ._capabilities import INITIALIZE_METHOD, declared_capabilities, declares
from ._errors import RequestError
from ._jsonrpc import (
    EnvelopeHead,
    Invalid,
    Message,
    Notification,
    RawParams,
    Request,
    RequestId,
    Response,
    as_json,
    classify,
    decode,
    encode,
    encode_notification,
    error_message,
    is_request_id,
    log_fields,
    read_envelope_head,
)
from ._log_throttle import peer_log
from ._loop import Waiter, current_soon_caller, current_task_getter, current_waiter_factory
from ._methods import (
    JsonValue,
    NotificationMethod,
    Payload,
    RequestMethod,
    TypedNotification,
    TypedRequest,
    notification_method_of,
    request_method_of,
)
from ._observation import ConnectionObserver, ObservedPendingRequest, ObservedResponseSlot
from ._outbox import DEFAULT_HIGH_WATER_BYTES, DEFAULT_PACE_BYTES, Outbox
from ._peer import COUNTERPART, Peer, on_wire
from ._response_slot import ResponseSlot, answer_spawned_failure
from ._roles import Role, check_peer_handles, sides_peer_handles
from ._sent_request import SentRequest
from ._settlement import CANCEL_REQUEST_METHOD, OutboxClosed, PendingRequest, PendingTable
from ._successor import ENVELOPE_METHODS, peel_envelopes
from ._suspension import FINISHED, Resumed
from ._transport import MessageTooLarge, Transport
from ._turns import PROMPT_METHOD, RunningTurns, session_id_of

if TYPE_CHECKING:
    from typing_extensions import TypeVarTuple, Unpack

    PosArgs = TypeVarTuple("PosArgs")

log = logging.getLogger(__name__)

P = TypeVar("P")
R = TypeVar("R")

_LINE_EXCERPT = 200
"""How much of an unparsable message is echoed in the -32700 ``data`` (characters)."""

_UNPARSABLE: Any = object()

_MALFORMED_RESPONSE: JsonValue = {
    "reason": "malformed_response",
    "detail": 'a response needs "jsonrpc": "2.0" and exactly one of "result" and "error"',
}
"""``data`` of the -32600 that settles a request whose response was malformed."""

_CANCEL_OR_ENVELOPE = frozenset({CANCEL_REQUEST_METHOD, *ENVELOPE_METHODS})
"""Notification methods that may be a cancel, plain or wrapped."""

CLOSE_TIMEOUT = 5.0
"""Seconds the shutdown may spend on result callbacks and flushing queued messages."""

WRITE_BATCH_BYTES = 64 * 1024
"""Most bytes the writer hands a transport's ``send_many`` at once (a pipe's capacity)."""

WRITE_BURST_BYTES = 4 * 1024
"""Bytes a burst queues between tries of a transport's ``send_burst_nowait`` (see
:mod:`~acp_runtime._outbox`): a pipe's atomic write."""

LOOP_TURN_BYTES = 16 * 1024
"""Bytes sent between the event-loop turns a loop of awaited sends gives (see
:mod:`~acp_runtime._outbox`): the connection reads meanwhile, and on a transport without
``send_burst_nowait`` (ASGI, memory) the writer writes. Notifications per second of a
streaming agent there, interleaved runs (bench/README.md): WebSocket under uvicorn 41,000
at 4 KiB, 46,000 at 16 KiB, 47,000 at 64 KiB; under hypercorn 26,700 / 29,700 / 26,500;
Streamable HTTP level. On a pipe a turn costs about one loop iteration per 16 KiB."""


RequestRoute = Callable[[str, JsonValue, ResponseSlot, "Connection"], Coroutine[Any, Any, None]]
"""Decodes an incoming request's params, runs its handler, answers through the slot."""

NotificationRoute = Callable[[str, JsonValue, "Connection"], Awaitable[None]]
"""Decodes an incoming notification's params and runs its handler."""


class Forwardable(Protocol):
    """An incoming message a proxy forwards to another peer
    (:class:`~acp_runtime.ProxiedRequest` or :class:`~acp_runtime.ProxiedNotification`)."""

    def forward(self, connection: Connection, peer: Peer) -> None:
        """Send it to ``peer`` over ``connection``, re-issuing cancellation per hop."""
        ...


@dataclass
class Routes:
    """Handler routes by method name, frozen into each connection by the builder."""

    requests: dict[str, RequestRoute] = field(default_factory=dict[str, RequestRoute])
    notifications: dict[str, NotificationRoute] = field(
        default_factory=dict[str, NotificationRoute]
    )
    raw_request: RequestRoute | None = None
    raw_notification: NotificationRoute | None = None
    inline: set[str] = field(default_factory=set[str])
    """Methods of ``requests`` whose handler runs in the dispatch loop; the others run in
    a task of their own."""
    raw_request_inline: bool = True
    """Whether the ``raw_request`` fallback runs in the dispatch loop (the ordered layer)."""
    turns: dict[str, RequestMethod[Any, Any]] = field(
        default_factory=dict[str, "RequestMethod[Any, Any]"]
    )
    """Methods of ``requests`` that are prompt turns (``session/cancel`` stops them), with
    their binding (see :mod:`acp_runtime._turns`)."""


def _identity(value: JsonValue) -> JsonValue:
    return value


class _Drain:
    """What awaiting :meth:`Connection.drain` does; one per connection, reusable."""

    __slots__ = ("_outbox",)

    def __init__(self, outbox: Outbox) -> None:
        self._outbox = outbox

    def __await__(self) -> Generator[Any, None, None]:
        return self._outbox.drained()


class Connection:
    """One side of a running JSON-RPC connection. Created by :class:`ConnectionBuilder`."""

    def __init__(
        self,
        routes: Routes,
        role: Role,
        transport: Transport,
        task_group: TaskGroup,
        *,
        high_water_bytes: int = DEFAULT_HIGH_WATER_BYTES,
        pace_bytes: int = DEFAULT_PACE_BYTES,
        observer: ConnectionObserver | None = None,
    ) -> None:
        self.role: Role = role
        self._peer_sides = sides_peer_handles(role)
        self.counterpart: Peer = COUNTERPART
        """The default peer requests and notifications go to."""
        self._routes = routes
        self._transport = transport
        self._tg = task_group
        send_burst_now = getattr(transport, "send_burst_nowait", None)
        self._outbox = Outbox(
            getattr(transport, "send_nowait", None),
            send_burst_now=send_burst_now,
            burst_bytes=WRITE_BURST_BYTES,
            turn_bytes=LOOP_TURN_BYTES,
            high_water=high_water_bytes,
            pace=pace_bytes,
        )
        self._drain = _Drain(self._outbox)
        self._pending = PendingTable()
        self._incoming = IncomingRequests()
        self.running_turns = RunningTurns()
        """The prompt handlers waiting on this connection, by session; ``session/cancel``
        cancels them (see :mod:`acp_runtime._turns`)."""
        self.peer_capabilities: dict[str, JsonValue] | None = None
        """What the client declared in its ``initialize`` (None before one arrived):
        typed requests that need an undeclared capability are refused locally."""
        self._observer = observer
        """Instrumentation (:mod:`~acp_runtime._observation`); None, the default, costs one
        test per request."""
        self._record: Callable[[Connection, int, str, Payload, Peer], PendingRequest] = (
            PendingRequest if observer is None else partial(ObservedPendingRequest, observer)
        )
        """Makes an outgoing request's record; observed when the connection is instrumented."""
        self._call_soon = current_soon_caller()
        self._new_waiter = current_waiter_factory()
        self._current_task = current_task_getter()
        self._dispatch_task: object = None
        self._dispatching: ResponseSlot | None = None
        """The request whose (not inline) handler the dispatch loop is running, until it
        suspends: awaiting the peer there hands the reading over instead of raising
        :class:`DeadlockError`. What ``spawn`` serves, with ``_dispatching_inline``."""
        self._dispatching_inline: ResponseSlot | None = None
        """The request whose inline handler the dispatch loop is running."""
        self._serving: dict[object, tuple[ResponseSlot | None, anyio.CancelScope]] = {}
        """Handlers that went on in their own task after a hand-over, by task: the request
        and the scope the task read in, which now cancels only the handler."""
        self._reader_generation = 0
        """Bumped by each hand-over: the task reading with an older one stops reading."""
        self._reader_context = copy_context()
        """What each reader starts from: the first one (started from the same context) and
        the one after each hand-over."""
        self._reader_scope = anyio.CancelScope()
        self._incoming_closed = anyio.Event()
        self._writer_scope = anyio.CancelScope(shield=True)
        """Only the shutdown ends the writer: a cancelled ``connect`` block still flushes."""
        self._writer_started = False
        self._writer_done = anyio.Event()
        self._transport_error: Exception | None = None
        self._predecoded: tuple[bytes, JsonValue, Message] | None = None
        """A message the eager path parsed and declined, so the dispatch loop does not
        parse or classify it again."""
        self._cancels_eagerly = (
            CANCEL_REQUEST_METHOD not in routes.notifications and routes.raw_notification is None
        )
        """No handler observes ``$/cancel_request``: the eager path may apply one alone."""
        set_eager_receiver = getattr(transport, "set_eager_receiver", None)
        self._eager = set_eager_receiver is not None and set_eager_receiver(self._settle_eagerly)

    # -- RequestLink (used by settlement records) ---------------------------------------

    @property
    def pending(self) -> PendingTable:
        return self._pending

    def enqueue(self, message: bytes) -> int:
        """Queue one encoded message for the writer; raises :class:`OutboxClosed` once closed."""
        return self._outbox.put(message)

    def enqueue_urgent(self, message: bytes) -> None:
        self._outbox.put_urgent(message)

    def enqueue_after(self, message: bytes, ticket: int) -> None:
        self._outbox.put_after(message, ticket)

    def call_soon(self, callback: Callable[[], None]) -> None:
        self._call_soon(callback)

    def new_waiter(self) -> Waiter:
        return self._new_waiter()

    def in_dispatch_loop(self) -> bool:
        """See :meth:`RequestLink.in_dispatch_loop`: may hand the reading over."""
        if self._current_task() is not self._dispatch_task:
            return False
        if self._dispatching is not None:  # a handler about to await the peer: let go
            self._hand_over_reading()
            return False
        return True

    def run_callback(self, callback: Callable[[], Coroutine[Any, Any, None]]) -> None:
        try:
            self._tg.start_soon(callback)
        except RuntimeError:  # the connect block has ended: no task can run it
            raise OutboxClosed from None

    # -- sending ------------------------------------------------------------------------

    @overload
    def send_request(
        self, request: TypedRequest[R], /, *, peer: Peer | None = None
    ) -> SentRequest[R]: ...
    @overload
    def send_request(
        self, method: RequestMethod[P, R], params: P, /, *, peer: Peer | None = None
    ) -> SentRequest[R]: ...
    def send_request(self, *args: Any, peer: Peer | None = None) -> SentRequest[Any]:
        """Publish a request now and return its handle (OUT-1); ``await`` it for the result.

        Either ``send_request(PromptRequest(...))`` or ``send_request(METHOD, params)``.
        """
        request = self._prepare(args, peer)
        request._record.publish()  # pyright: ignore[reportPrivateUsage]
        return request

    @overload
    def prepare_request(
        self, request: TypedRequest[R], /, *, peer: Peer | None = None
    ) -> SentRequest[R]: ...
    @overload
    def prepare_request(
        self, method: RequestMethod[P, R], params: P, /, *, peer: Peer | None = None
    ) -> SentRequest[R]: ...
    def prepare_request(self, *args: Any, peer: Peer | None = None) -> SentRequest[Any]:
        """Like :meth:`send_request`, but not published until consumed (OUT-8)."""
        return self._prepare(args, peer)

    @overload
    def send_request_to(self, peer: Peer, request: TypedRequest[R], /) -> SentRequest[R]: ...
    @overload
    def send_request_to(
        self, peer: Peer, method: RequestMethod[P, R], params: P, /
    ) -> SentRequest[R]: ...
    def send_request_to(self, peer: Peer, *args: Any) -> SentRequest[Any]:
        """:meth:`send_request` to a specific peer; its cancel goes the same way (OUT-2)."""
        return self.send_request(*args, peer=peer)

    def send_raw_request(
        self, method: str, params: RawParams = None, *, peer: Peer | None = None
    ) -> SentRequest[JsonValue]:
        """Publish an untyped request (extension methods); the result is plain JSON."""
        request = self.prepare_raw_request(method, params, peer=peer)
        request._record.publish()  # pyright: ignore[reportPrivateUsage]
        return request

    def prepare_raw_request(
        self, method: str, params: RawParams = None, *, peer: Peer | None = None
    ) -> SentRequest[JsonValue]:
        """Like :meth:`send_raw_request`, but not published until consumed (OUT-8)."""
        request_id, payload = self._pending.allocate_id(), as_json(params)
        record = self._record(self, request_id, method, payload, peer or self.counterpart)
        return SentRequest(record, _identity)

    def _prepare(self, args: tuple[Any, ...], peer: Peer | None) -> SentRequest[Any]:
        binding, params = _request_binding(args)
        if binding.side not in self._peer_sides:
            check_peer_handles(self.role, binding)  # raises
        if binding.requires is not None and self.peer_capabilities is not None:
            if not declares(self.peer_capabilities, binding.requires):
                raise RequestError.capability_not_declared(binding.name, binding.requires)
        request_id, payload = self._pending.allocate_id(), binding.params.encode(params)
        record = self._record(self, request_id, binding.name, payload, peer or self.counterpart)
        if binding.name == PROMPT_METHOD:  # its cancel also sends session/cancel
            record.cancels_session = session_id_of(params)
        return SentRequest(record, binding.result.load)

    @overload
    def send_notification(
        self, notification: TypedNotification, /, *, peer: Peer | None = None
    ) -> Awaitable[None]: ...
    @overload
    def send_notification(
        self, method: NotificationMethod[P], params: P, /, *, peer: Peer | None = None
    ) -> Awaitable[None]: ...
    def send_notification(self, *args: Any, peer: Peer | None = None) -> Awaitable[None]:
        """Queue a notification at once; ``await`` the result to pace a stream of them.

        The notification is queued whether or not the result is awaited; awaiting it is
        :meth:`drain`. Raises :class:`RequestError` if the connection is closed.
        """
        binding: NotificationMethod[Any]
        if len(args) == 1:
            binding, params = notification_method_of(args[0]), args[0]
        else:
            binding, params = args
        if binding.side not in self._peer_sides:
            check_peer_handles(self.role, binding)  # raises
        payload = binding.params.encode(params)
        self._send_notification(binding.name, payload, peer or self.counterpart)
        return self._drain

    def send_raw_notification(
        self, method: str, params: RawParams = None, *, peer: Peer | None = None
    ) -> Awaitable[None]:
        """Queue an untyped notification; like :meth:`send_notification`."""
        self._send_notification(method, as_json(params), peer or self.counterpart)
        return self._drain

    def _send_notification(self, method: str, params: Payload, peer: Peer) -> None:
        wire_method, wire_params = on_wire(peer, method, params)
        try:
            self.enqueue(encode_notification(wire_method, wire_params))
        except OutboxClosed:
            raise RequestError.connection_closed(method) from None

    def drain(self) -> Awaitable[None]:
        """``await cx.drain()``: wait while the peer is behind on reading.

        Does not wait while the output queued for the peer is under the connection's
        pace mark (``ConnectionBuilder(pace_bytes=...)``): it costs nothing while the
        peer keeps up, but for a turn of the event loop every 16 KiB sent, never a
        cancellation point, in which the connection reads; over the mark, it waits until
        the peer has read the queue down to half the mark, or the connection closed.
        Code that sends in bulk (a stream of updates, many requests or answers) awaits
        it between sends, so that a peer that stops reading holds it up instead of
        filling memory.
        """
        return self._drain

    @property
    def outgoing_backlog(self) -> int:
        """Bytes of output queued for the peer (or being written) right now."""
        return self._outbox.backlog

    def send_cancel_request(self, request_id: RequestId) -> None:
        """Low level: ``$/cancel_request`` for a peer-side id you know (PROXY-5)."""
        self.send_cancel_request_to(self.counterpart, request_id)

    def send_cancel_request_to(self, peer: Peer, request_id: RequestId) -> None:
        """Low level: ``$/cancel_request`` for ``request_id`` to ``peer``, no bookkeeping.

        Prefer :meth:`SentRequest.cancel`, which knows the id and the peer and is
        once-only. Raises :class:`RequestError` if the connection is closed.
        """
        if not is_request_id(request_id):
            raise TypeError(f"not a JSON-RPC id: {request_id!r}")
        self.send_raw_notification(CANCEL_REQUEST_METHOD, {"requestId": request_id}, peer=peer)

    def send_proxied_message_to(self, peer: Peer, message: Forwardable) -> None:
        """Forward an incoming message to ``peer`` over this connection; cancellation
        is re-issued per hop, a raw ``$/cancel_request`` is dropped (PROXY-1, PROXY-4).
        See :func:`acp_runtime._proxied.send_proxied_message_to`."""
        message.forward(self, peer)

    # -- work -----------------------------------------------------------------------------

    def spawn(
        self, func: Callable[[Unpack[PosArgs]], Coroutine[Any, Any, Any]], *args: Unpack[PosArgs]
    ) -> None:
        """Run ``func(*args)`` concurrently with the dispatch loop, as connection work.

        It is cancelled when the connection closes. If it raises, the failure is logged and
        the connection goes on; spawned from a request's handler, the work also answers that
        request if it is still unanswered: a :class:`RequestError` as itself (so a
        cancelled turn's -32800 reaches the peer), anything else as a bare -32603.
        """
        task = self._current_task()
        if task is self._dispatch_task:
            slot = self._dispatching or self._dispatching_inline
        else:
            serving = self._serving.get(task)
            slot = None if serving is None else serving[0]
        self._tg.start_soon(self._run_spawned, slot, func, args)

    async def _run_spawned(
        self,
        slot: ResponseSlot | None,
        func: Callable[..., Coroutine[Any, Any, Any]],
        args: tuple[Any, ...],
    ) -> None:
        try:
            await func(*args)
        except Exception as error:  # cancellation is a BaseException and passes
            answer_spawned_failure(error, slot, func)

    @property
    def is_incoming_closed(self) -> bool:
        return self._incoming_closed.is_set()

    async def wait_incoming_closed(self) -> None:
        """Wait until the peer's side ended (EOF or a read error)."""
        await self._incoming_closed.wait()

    @property
    def transport_error(self) -> Exception | None:
        """The read or write failure that ended the connection; ``None`` after a clean EOF
        (or while it runs). Tells a broken pipe from a peer that closed normally."""
        return self._transport_error

    @property
    def pending_request_count(self) -> int:
        """Outgoing requests on the wire still waiting for their response."""
        return len(self._pending)

    @property
    def incoming_request_count(self) -> int:
        """Incoming requests not answered yet."""
        return len(self._incoming)

    async def wait_incoming_answered(self) -> None:
        """Wait until every incoming request so far has been answered (an agent that
        saw EOF answers the turns still in flight before it exits)."""
        await self._incoming.wait_empty()

    # -- the loops --------------------------------------------------------------------------

    async def _run_reader(
        self,
        scope: anyio.CancelScope | None = None,
        *,
        task_status: anyio.abc.TaskStatus[None] = anyio.TASK_STATUS_IGNORED,
    ) -> None:
        """Read until EOF, a read error or the writer failing, then settle what is pending;
        or until a request handler this task runs suspends, and a new reader (one started
        by the hand-over, reading in ``scope``) reads on.

        Cancelled from outside (the ``connect`` block is cancelled or fails), it settles
        nothing: the shutdown does, once the block's own code has unwound, so an
        ``await`` cancelled with the block is abandoned (OUT-5) rather than handed a
        connection-closed error inside a cancelled scope.
        """
        self._dispatch_task = self._current_task()
        generation = self._reader_generation
        if scope is None:  # the first reader
            scope = self._reader_scope
        task_status.started()
        with scope:
            await self._read_loop(generation)
        if generation == self._reader_generation:  # still the reader: the input ended
            await self._close_incoming()

    def _hand_over_reading(self) -> None:
        """The request handler the loop runs suspends: a new task reads on, this one
        stays with the handler (which may now await the peer)."""
        self._reader_generation += 1
        self._serving[self._dispatch_task] = (self._dispatching, self._reader_scope)
        self._dispatch_task = self._dispatching = None
        self._reader_scope = scope = anyio.CancelScope()
        # The new reader starts from the reader's context, not from the handler's.
        self._reader_context.run(self._tg.start_soon, partial(self._run_reader, scope))

    async def _read_loop(self, generation: int) -> None:
        outbox = self._outbox
        while generation == self._reader_generation:
            if outbox.backlog > outbox.high_water:  # the peer is not reading: stop too
                log.debug("outgoing backlog of %d bytes: reading paused", outbox.backlog)
                await self._drain
            try:
                data = await self._transport.receive()
            except anyio.EndOfStream:
                log.debug("incoming EOF")
                return
            except MessageTooLarge as exc:
                if await self._on_too_large(exc):
                    continue
                return
            except (anyio.BrokenResourceError, anyio.ClosedResourceError) as exc:
                log.warning("incoming transport failed: %r", exc)
                self._transport_error = self._transport_error or exc
                return
            await self._dispatch(data)

    async def _on_too_large(self, exc: MessageTooLarge) -> bool:
        """Answer or settle what a skipped over-limit message was, as far as its first
        bytes tell. False when the connection must fail (see :meth:`_on_too_large_response`)."""
        error = RequestError.invalid_request({"reason": "message_too_large", "limit": exc.limit})
        head = read_envelope_head(exc.prefix)
        if head is not None and not head.is_call and self._is_response(head):
            return await self._on_too_large_response(head, exc, error)
        peer_log.log(log, logging.WARNING, "incoming message over %d bytes skipped", exc.limit)
        self._reply_uncorrelated(error, head.id if head is not None and head.is_call else None)
        return True

    def _is_response(self, head: EnvelopeHead) -> bool:
        """A response by its keys, or by the id of one of our pending requests."""
        return head.is_response or (head.has_id and self._pending.get(head.id) is not None)

    async def _on_too_large_response(
        self, head: EnvelopeHead, exc: MessageTooLarge, error: RequestError
    ) -> bool:
        """Fail the request an over-limit response names. With no id to read, one of the
        pending requests lost its answer and nothing tells which: the connection fails
        as for a transport error (False), so that every pending request settles."""
        record = self._pending.take(head.id) if head.has_id else None
        if record is not None:
            peer_log.log(
                log,
                logging.WARNING,
                "response to %s id=%r over %d bytes: failing the request",
                record.method,
                record.id,
                exc.limit,
                extra=log_fields(record.method, record.id),
            )
            await self._settle(record, None, error)
        elif head.id_known:
            self._warn_unknown_response(head.id)
        elif len(self._pending):
            log.error("a response over %d bytes with no readable id: closing", exc.limit)
            self._transport_error = self._transport_error or exc
            return False
        else:
            peer_log.log(log, logging.WARNING, "response over %d bytes ignored", exc.limit)
        return True

    @staticmethod
    async def _settle(
        record: PendingRequest, result: JsonValue, error: RequestError | None
    ) -> None:
        """Settle a request taken from the table; its result callback runs here, in the loop."""
        callback = record.settle(result, error)
        if callback is not None:
            await callback()

    def _settle_eagerly(self, data: bytes) -> bool:
        """Settle a response, or apply a ``$/cancel_request`` no handler observes, from the
        transport's readiness callback (asyncio pipes).

        The transport offers a message here only while the dispatch loop is idle with
        nothing queued ahead of it, so handling it at once keeps arrival order and saves
        waking the reader task (for a cancel, the cancelled work wakes one loop iteration
        sooner). Requests, other notifications and responses whose result callback must
        run in the loop are declined and take the normal path.
        """
        try:
            value = decode(data)
        except ValueError:
            return False
        message = classify(value)
        if isinstance(message, Response):
            record = self._pending.take_without_callback(message.id)
            if record is not None:
                record.settle(message.result, message.error)
                return True
        elif (
            self._cancels_eagerly
            and isinstance(message, Notification)
            and message.method == CANCEL_REQUEST_METHOD
        ):
            self._apply_cancel(message.params)  # all the dispatch loop would do with it
            return True
        self._predecoded = (data, value, message)  # a call, or a callback's response
        return False

    async def _dispatch(self, data: bytes) -> None:
        predecoded, self._predecoded = self._predecoded, None
        if predecoded is not None and predecoded[0] == data:
            _, value, message = predecoded
        else:
            try:
                value = decode(data)
            except ValueError:
                value = _UNPARSABLE  # handled below, once the decoded text is gone with the error
            if value is _UNPARSABLE:
                self._on_unparsable(data)
                return
            message = classify(value)
        if isinstance(message, Request):
            await self._on_request(message)
        elif isinstance(message, Notification):
            await self._on_notification(message)
        elif isinstance(message, Response):
            await self._on_response(message)
        else:
            await self._on_invalid(message, value)

    async def _on_request(self, request: Request) -> None:
        method, observer = request.method, self._observer
        slot = (
            ResponseSlot(self, self._incoming, request.id, method)
            if observer is None
            else ObservedResponseSlot(
                observer, self, self._incoming, request.id, method, request.params
            )
        )
        if method == INITIALIZE_METHOD:
            self.peer_capabilities = declared_capabilities(request.params)
        routes = self._routes
        route = routes.requests.get(method)
        if route is not None:
            inline = method in routes.inline
        else:
            route, inline = routes.raw_request, routes.raw_request_inline
            if route is None:
                slot.answer_error(RequestError.method_not_found(request.method))
                return
        handling = route(method, request.params, slot, self)
        if observer is not None:  # the handler runs with the request's span current
            handling = _in_span(slot, handling)
        if inline:
            self._dispatching_inline = slot
            try:
                await handling
            finally:
                self._dispatching_inline = None
            return
        self._dispatching = slot  # runs here until it first suspends, then in this task alone
        try:
            yielded = next(handling.__await__(), FINISHED)  # its first step (_suspension)
            if yielded is not FINISHED:
                await self._go_on_alone(handling, yielded, request, slot)
        finally:
            if self._dispatching is slot:  # never handed over: still the loop
                self._dispatching = None
            else:
                self._serving.pop(self._current_task(), None)

    async def _go_on_alone(
        self,
        handling: Coroutine[Any, Any, None],
        yielded: object,
        request: Request,
        slot: ResponseSlot,
    ) -> None:
        """The handler suspended: the reading goes on in a new task (if awaiting the peer
        did not hand it over already), the handler in this one; a prompt turn becomes
        one ``session/cancel`` stops, before anything else can run."""
        if self._dispatching is slot:  # not handed over by awaiting the peer already
            self._hand_over_reading()
        binding = self._routes.turns.get(request.method)
        session_id = None if binding is None else session_id_of(request.params)
        if binding is None or session_id is None:
            await Resumed(handling, yielded)
            return
        scope = self._serving[self._current_task()][1]  # what it read in: now only its own
        turn = self.running_turns.start(session_id, scope, slot, binding)
        try:
            await Resumed(handling, yielded)
        finally:
            self.running_turns.end(turn)

    async def _on_notification(self, notification: Notification) -> None:
        # Envelopes are peeled: a wrapped cancel reaches the request with that (outer) id.
        if notification.method in _CANCEL_OR_ENVELOPE:  # the others skip two calls
            inner_method, inner_params = peel_envelopes(notification.method, notification.params)
            if inner_method == CANCEL_REQUEST_METHOD and not self._apply_cancel(inner_params):
                return
        route = self._routes.notifications.get(notification.method) or self._routes.raw_notification
        if route is None:
            log.debug(
                "unhandled notification %s ignored",
                notification.method,
                extra=log_fields(notification.method),
            )
            return
        await route(notification.method, notification.params, self)

    def _on_unparsable(self, data: bytes) -> None:
        """-32700 quoting the start of the line; only that much of it is decoded."""
        text = data[: 4 * _LINE_EXCERPT].decode(errors="replace")[:_LINE_EXCERPT]
        peer_log.log(log, logging.WARNING, "unparsable message: %s", text)
        self._reply_uncorrelated(RequestError.parse_error({"line": text}))

    def _apply_cancel(self, params: JsonValue) -> bool:
        """Update the marker before any handler runs (IN-2). False if malformed (IN-3)."""
        if (
            not isinstance(params, dict)
            or "requestId" not in params
            or not is_request_id(params["requestId"])
        ):
            peer_log.log(
                log, logging.WARNING, "malformed $/cancel_request params ignored: %.200r", params
            )
            return False
        self._incoming.cancel(params["requestId"])
        return True

    async def _on_response(self, response: Response) -> None:
        record = self._pending.take(response.id)
        if record is None:
            self._warn_unknown_response(response.id)
            return
        await self._settle(record, response.result, response.error)

    def _warn_unknown_response(self, request_id: RequestId) -> None:
        peer_log.log(
            log,
            logging.WARNING,
            "response for unknown request id %r ignored",
            request_id,
            extra=log_fields(None, request_id),
        )

    async def _on_invalid(self, message: Invalid, value: JsonValue) -> None:
        if isinstance(value, list):
            reason = "empty batch" if not value else "batches are not supported"
            self._reply_uncorrelated(RequestError.invalid_request(reason))
            return
        record = self._pending.take(message.response_id)
        if record is not None:  # a malformed answer still ends the request it names
            peer_log.log(
                log,
                logging.WARNING,
                "malformed response to %s id=%r: failing the request",
                record.method,
                record.id,
                extra=log_fields(record.method, record.id),
            )
            await self._settle(record, None, RequestError.invalid_request(_MALFORMED_RESPONSE))
            return
        peer_log.log(
            log,
            logging.WARNING,
            "invalid message (%s)%s",
            message.reason,
            "" if message.reply else "; ignored",
        )
        if message.reply:
            self._reply_uncorrelated(RequestError.invalid_request(message.reason))

    def _reply_uncorrelated(self, error: RequestError, request_id: RequestId = None) -> None:
        """Answer a message that reached no handler: with ``id: null`` unless its id
        could be read (an over-limit request)."""
        try:
            self.enqueue(encode(error_message(request_id, error)))
        except OutboxClosed:
            log.debug("connection closed; error reply dropped")

    async def _close_incoming(self) -> None:
        """Settle every pending outgoing request with a connection-closed error (idempotent)."""
        peer_log.flush()
        records = self._pending.close()
        callbacks = [
            callback
            for record in records
            if (callback := record.settle(None, RequestError.connection_closed(record.method)))
            is not None
        ]
        self._incoming_closed.set()
        if callbacks:
            with anyio.move_on_after(CLOSE_TIMEOUT, shield=True):
                for callback in callbacks:
                    await callback()

    async def _run_writer(self, *, task_status: anyio.abc.TaskStatus[None]) -> None:
        """Write queued messages in order; a backlog goes out in one ``send_many`` call
        when the transport has one (``LineTransport``: one write for many lines)."""
        task_status.started()
        self._writer_started = True
        send_many: Callable[[Sequence[bytes]], Awaitable[None]] | None = getattr(
            self._transport, "send_many", None
        )
        max_batch = 1 if send_many is None else WRITE_BATCH_BYTES
        with self._writer_scope:
            try:
                while batch := await self._outbox.take(max_batch):
                    if len(batch) == 1 or send_many is None:
                        await self._transport.send(batch[0])
                    else:
                        await send_many(batch)
                    self._outbox.sent()
            except (anyio.BrokenResourceError, anyio.ClosedResourceError) as exc:
                log.warning("outgoing transport failed: %r", exc)
                self._transport_error = self._transport_error or exc
                self._reader_scope.cancel()
            finally:
                self._outbox.close()
                self._writer_done.set()

    async def _shutdown(self) -> None:
        """Stop reading, settle pending requests, flush queued messages, close."""
        with anyio.CancelScope(shield=True):
            self._reader_scope.cancel()
            try:
                await self._close_incoming()  # result callbacks run here and may raise
            finally:
                self._outbox.close()
                try:
                    if self._writer_started:
                        with anyio.move_on_after(CLOSE_TIMEOUT):
                            await self._writer_done.wait()
                finally:
                    self._writer_scope.cancel()  # the shielded writer never outlives this
                    self._tg.cancel_scope.cancel()
                    if self._observer is not None:
                        self._observer.closed()
                await self._transport.aclose()


async def _in_span(slot: ResponseSlot, handling: Coroutine[Any, Any, None]) -> None:
    span = slot.span if isinstance(slot, ObservedResponseSlot) else None
    with nullcontext() if span is None else span.activated():
        await handling


def _request_binding(args: tuple[Any, ...]) -> tuple[RequestMethod[Any, Any], Any]:
    if len(args) == 1:
        return request_method_of(args[0]), args[0]
    if len(args) == 2 and isinstance(args[0], RequestMethod):
        return args[0], args[1]  # pyright: ignore[reportUnknownVariableType]
    raise TypeError("expected send_request(typed_params) or send_request(METHOD, params)")
