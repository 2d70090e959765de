"""Handles for outgoing requests: :class:`SentRequest` and :class:`RequestCancellationHandle`.

Both are thin views over one :class:`~acp_runtime._settlement.PendingRequest`; the
record holds the shared once-only cancellation state (OUT-4).
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Coroutine, Generator
from typing import TYPE_CHECKING, Any, Generic, Protocol, TypeVar

import anyio
from pydantic import ValidationError

from ._errors import DeadlockError, RequestError
from ._jsonrpc import RequestId
from ._methods import JsonValue
from ._settlement import Consumer, PendingRequest, Wire

if TYPE_CHECKING:
    from typing_extensions import Self

    from ._cancellation import CancellationMarker

log = logging.getLogger(__name__)

R = TypeVar("R")


def validation_summary(error: ValidationError) -> list[JsonValue]:
    """The ``loc``/``msg``/``type`` of each pydantic error: enough to fix the input,
    without echoing it back."""
    return [
        {"loc": [str(part) for part in item["loc"]], "msg": item["msg"], "type": item["type"]}
        for item in error.errors(include_url=False, include_input=False)
    ]


class ResponseTarget(Protocol):
    """An incoming request that a forwarded request answers: what
    :meth:`SentRequest.forward_response_to` needs of a :class:`~acp_runtime.Responder`."""

    @property
    def cancellation(self) -> CancellationMarker: ...

    def respond_with_error(self, error: RequestError) -> None: ...

    def respond_raw(self, result: JsonValue) -> None: ...


class RequestCancellationHandle:
    """A cancel-only view of an outgoing request, shared with its :class:`SentRequest`.

    Any number may exist; they share one once-only cancellation state with the request
    and its automatic cancellation (OUT-4). Dropping one does nothing (OUT-10).
    """

    __slots__ = ("_record",)

    def __init__(self, record: PendingRequest) -> None:
        self._record = record

    @property
    def request_id(self) -> RequestId:
        return self._record.id

    def cancel(self) -> None:
        """Ask the peer to cancel the request; see :meth:`SentRequest.cancel`."""
        self._record.cancel()

    def __repr__(self) -> str:
        return f"<RequestCancellationHandle {self._record.method} id={self._record.id}>"


class SentRequest(Generic[R]):
    """An outgoing request; ``await`` it for the typed result (OUT-1).

    Awaiting raises :class:`RequestError` with the peer's error. A request is consumed
    by exactly one of: awaiting, :meth:`on_receiving_result`, :meth:`forward_response_to`
    or :meth:`detach`. Until then, if the handle is garbage-collected while the request
    is pending, ``$/cancel_request`` is sent automatically (OUT-5); likewise if the task
    awaiting it is cancelled.
    """

    __slots__ = ("__weakref__", "_decode", "_record")

    def __init__(self, record: PendingRequest, decode: Callable[[JsonValue], R]) -> None:
        self._record = record
        self._decode = decode

    def __del__(self) -> None:
        # Collected unconsumed (OUT-5): only hand the cancel to the loop, no I/O here.
        # Cheaper than a weakref.finalize per request, which the hot path would pay.
        self._record.abandon_if_unconsumed()

    @property
    def id(self) -> int:
        """Our JSON-RPC id for the request (allocated even before publication)."""
        return self._record.id

    @property
    def method(self) -> str:
        return self._record.method

    @property
    def is_published(self) -> bool:
        return self._record.wire is not Wire.PREPARED

    def cancel(self) -> None:
        """Send ``$/cancel_request`` for this request, the same way it was sent (OUT-2).

        The caller still gets the peer's real answer (OUT-3). Once-only (OUT-4); a no-op,
        not remembered, before publication (OUT-8) and after the response was routed
        (OUT-7). Returning is not an acknowledgment (OUT-9). Raises
        :class:`RequestError` only if the connection cannot take the notification.
        """
        self._record.cancel()

    def cancellation_handle(self) -> RequestCancellationHandle:
        """A handle that can cancel this request after it is consumed."""
        return RequestCancellationHandle(self._record)

    def forward_cancellation_from(self, marker: CancellationMarker) -> Self:
        """Cancel this request when ``marker`` (an incoming request's) is set (PROXY-2).

        Observed from consumption until settlement; a marker already set at consumption
        sends the cancel at once.
        """
        self._record.watch(marker)
        return self

    def detach(self) -> None:
        """Let the request run on the peer and discard its answer; no automatic cancel
        (OUT-6). Publishes a prepared request."""
        self._take(Consumer.GONE)
        self._record.detach()
        self._record.publish()

    def on_receiving_result(self, callback: Callable[[R | RequestError], Awaitable[None]]) -> None:
        """Publish and have ``callback`` receive the result (or the error) later.

        The callback runs on the dispatch loop, in order with incoming messages, so it
        must return quickly (spawn long work). If it raises, the connection fails.
        Raises the connection-closed :class:`RequestError` (and never calls ``callback``)
        if the connection has already finished.
        """
        decode, method = self._decode, self._record.method

        async def deliver(result: JsonValue, error: RequestError | None) -> None:
            outcome: R | RequestError
            if error is not None:
                outcome = error
            else:
                try:
                    outcome = _decode_result(decode, result, method)
                except RequestError as decode_error:
                    outcome = decode_error
            await callback(outcome)

        self._consume_with(deliver)

    def forward_response_to(self, responder: ResponseTarget) -> None:
        """Answer ``responder`` (an incoming request) with this request's answer,
        unchanged, and forward its cancellation here (PROXY-1). Raises like
        :meth:`on_receiving_result` if this connection has already finished."""

        async def deliver(result: JsonValue, error: RequestError | None) -> None:
            if error is not None:
                responder.respond_with_error(error)
            else:
                responder.respond_raw(result)

        self._record.watch(responder.cancellation)
        self._consume_with(deliver)

    def __await__(self) -> Generator[Any, None, R]:
        # A generator, not a coroutine awaited through its own __await__ (two objects and
        # a frame less per request); what _refuse_deadlock and _outcome do, inline.
        record = self._record
        if record.wire is not Wire.SETTLED and record.link.in_dispatch_loop():
            raise self._deadlock_error()
        self._take(Consumer.AWAIT)
        waiter = record.waiter()
        if waiter is not None:
            try:
                yield from waiter.__await__()
            except BaseException:
                record.abandon()
                raise
        if record.error is not None:
            raise record.error
        return _decode_result(self._decode, record.result, record.method)

    async def cancel_after(self, seconds: float) -> R:
        """Await the answer, but cancel the request if none came within ``seconds``,
        then keep waiting for the peer's real answer (OUT-3) and return it.

        One call for "wait with a timeout, cancel, take the real answer": for a prompt,
        the cancel is ``$/cancel_request`` and ``session/cancel``, and the answer is the
        turn's own (``stop_reason="cancelled"`` from an agent that stopped, or whatever
        it answered). A peer that never answers keeps it waiting: bound the whole call
        with ``anyio.fail_after`` if that can happen. Consumes the request like ``await``.
        """
        self._refuse_deadlock()
        record = self._take(Consumer.AWAIT)
        try:
            with anyio.move_on_after(seconds):
                waiter = record.waiter()
                if waiter is not None:
                    await waiter
            if record.wire is not Wire.SETTLED:
                record.cancel_quietly()
                waiter = record.fresh_waiter()  # the first one may be spent by the timeout
                if waiter is not None:
                    await waiter
        except BaseException:
            record.abandon()
            raise
        return self._outcome(record)

    def _refuse_deadlock(self) -> None:
        if self._record.wire is not Wire.SETTLED and self._record.link.in_dispatch_loop():
            raise self._deadlock_error()

    def _deadlock_error(self) -> DeadlockError:
        return DeadlockError(
            f"awaiting the answer to {self._record.method} inside a handler would hang: "
            "this handler runs in the loop that delivers answers. Spawn the work that "
            "awaits (cx.spawn) and return; sending without awaiting is fine"
        )

    def _outcome(self, record: PendingRequest) -> R:
        if record.error is not None:
            raise record.error
        return _decode_result(self._decode, record.result, record.method)

    def _consume_with(
        self, deliver: Callable[[JsonValue, RequestError | None], Coroutine[Any, Any, None]]
    ) -> None:
        record = self._take(Consumer.CALLBACK, deliver)
        ready = record.take_callback()  # already settled: run it as connection work
        if ready is not None:
            record.run_callback(ready)

    def _take(self, consumer: Consumer, callback: Any = None) -> PendingRequest:
        record = self._record
        record.consume(consumer, callback)
        record.publish()
        if consumer is not Consumer.GONE:
            record.start_watching()
        return record

    def __repr__(self) -> str:
        return f"<SentRequest {self._record!r}>"


def _decode_result(decode: Callable[[JsonValue], R], result: JsonValue, method: str) -> R:
    try:
        return decode(result)
    except ValidationError as error:
        raise RequestError.invalid_result(method, validation_summary(error)) from None
