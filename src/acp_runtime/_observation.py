"""Request observation: the hooks a tracing library plugs into, off by default.

A connection without an observer creates plain :class:`~acp_runtime._response_slot.ResponseSlot`
and :class:`~acp_runtime._settlement.PendingRequest` objects, so its hot paths pay one
attribute test and nothing else. With one (:meth:`ConnectionBuilder.instrument`), each
request is an :class:`ObservedResponseSlot` or an :class:`ObservedPendingRequest`
instead, which tell the request's :class:`RequestSpan` the moments that matter: it started,
a cancel was asked for, it was answered. Nothing here imports a tracing library;
:mod:`acp_runtime.otel` is the OpenTelemetry implementation.

Notifications are not observed: a prompt turn streams thousands of ``session/update``
messages, and a span (or event) each would cost more than the turn. A
``$/cancel_request`` shows up as an event on the request it cancels.
"""

from __future__ import annotations

from collections.abc import Callable, Coroutine
from contextlib import AbstractContextManager
from typing import Any, Protocol

from ._cancellation import IncomingRequests
from ._errors import RequestError
from ._jsonrpc import RequestId
from ._methods import JsonValue, Payload
from ._peer import Peer
from ._response_slot import ResponseLink, ResponseSlot
from ._roles import Role
from ._settlement import PendingRequest, RequestLink, Wire


class RequestSpan(Protocol):
    """What an instrumentation keeps for one request, incoming or outgoing.

    Exactly one of :meth:`answered` and :meth:`abandoned` is called, at most once; after
    it nothing else is.
    """

    def cancel_requested(self) -> None:
        """``$/cancel_request`` arrived for it (incoming) or was queued for it (outgoing)."""
        ...

    def answered(self, error: RequestError | None) -> None:
        """Its answer was handed to the writer (incoming; dropped if the connection had
        closed), or it settled (outgoing: a response, or a local failure such as the
        connection closing); ``None`` is a result."""
        ...

    def abandoned(self, reason: str) -> None:
        """It ended with no answer: an outgoing request whose params could not be encoded
        (``reason`` says which)."""
        ...

    def activated(self) -> AbstractContextManager[object]:
        """The context an incoming request's handler runs in, so that the work it spawns
        and the requests it sends are this request's children."""
        ...


class ConnectionObserver(Protocol):
    """One connection's instrumentation; made per connection by an :class:`Instrumentation`."""

    def incoming_request(
        self, method: str, request_id: RequestId, params: JsonValue
    ) -> RequestSpan:
        """A request arrived (``method`` as on the wire: possibly an envelope)."""
        ...

    def outgoing_request(self, method: str, request_id: RequestId, peer: Peer) -> RequestSpan:
        """A request is being put on the wire for ``peer``."""
        ...

    def closed(self) -> None:
        """The connection has shut down: end whatever is still open (incoming requests
        nobody answered). Calls for those spans after this are to be ignored."""
        ...


class Instrumentation(Protocol):
    """What :meth:`ConnectionBuilder.instrument` takes: a :class:`ConnectionObserver` per
    connection the builder connects."""

    def connection(self, role: Role) -> ConnectionObserver: ...


class ObservedResponseSlot(ResponseSlot):
    """A :class:`ResponseSlot` that reports its request to a span: the cancel (from the
    marker), and the answer, once."""

    __slots__ = ("span",)

    def __init__(
        self,
        observer: ConnectionObserver,
        link: ResponseLink,
        registry: IncomingRequests,
        request_id: RequestId,
        method: str,
        params: JsonValue,
    ) -> None:
        super().__init__(link, registry, request_id, method)
        span = observer.incoming_request(method, request_id, params)
        self.span: RequestSpan | None = span
        self.marker._add_callback(span.cancel_requested)  # pyright: ignore[reportPrivateUsage]

    def _send(self, result: Payload, error: RequestError | None) -> None:
        if self.answered:  # a duplicate: only the warning
            super()._send(result, error)
            return
        super()._send(result, error)  # a result that fails to encode answers -32603 inside
        span, self.span = self.span, None  # so the innermost call reports, the outer not
        if span is not None and self.answered:
            span.answered(error)


class ObservedPendingRequest(PendingRequest):
    """A :class:`PendingRequest` with a span from publication to settlement, and an
    event when its ``$/cancel_request`` is queued."""

    __slots__ = ("observer", "span")

    def __init__(
        self,
        observer: ConnectionObserver,
        link: RequestLink,
        request_id: int,
        method: str,
        params: Payload,
        peer: Peer,
    ) -> None:
        super().__init__(link, request_id, method, params, peer)
        self.observer = observer
        self.span: RequestSpan | None = None

    def publish(self) -> None:
        if self.wire is not Wire.PREPARED:
            return
        span = self.span = self.observer.outgoing_request(self.method, self.id, self.peer)
        try:
            super().publish()
        except (TypeError, ValueError) as error:  # not encodable: never on the wire
            self.span = None
            span.abandoned(f"params not encodable: {type(error).__name__}")
            raise

    def cancel(self) -> None:
        if self.wire is not Wire.PUBLISHED or not self.armed:
            return
        super().cancel()  # raises when the cancel cannot even be queued
        if self.span is not None:
            self.span.cancel_requested()

    def settle(
        self, result: JsonValue, error: RequestError | None
    ) -> Callable[[], Coroutine[Any, Any, None]] | None:
        if self.wire is not Wire.SETTLED:
            span, self.span = self.span, None
            if span is not None:
                span.answered(error)
        return super().settle(result, error)
