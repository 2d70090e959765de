"""OpenTelemetry spans for every request a connection receives or sends (extra ``[otel]``).

Needs only ``opentelemetry-api``; an application that configured the SDK (or any other
provider) gets the spans where it sends its others::

    from acp_runtime.otel import instrument

    builder = instrument(ConnectionBuilder(role="agent"))

One span per request: ``SERVER`` for an incoming one, from its arrival until its answer is
handed to the writer; ``CLIENT`` for an outgoing one, from publication until it settles
(its response, or a local failure such as the connection closing). The span is named
after the method and carries the JSON-RPC attributes of the OpenTelemetry conventions
(``rpc.system``, ``rpc.method``, ``rpc.jsonrpc.request_id``, ``rpc.jsonrpc.error_code``...)
and ``acp.role``, ``acp.peer``, ``acp.outcome``. A ``$/cancel_request`` received or sent is
a ``cancel_requested`` event; the answer after it a ``cancel_answered`` event with the
latency in ``acp.cancel.latency_ms``. An incoming request's handler runs with its span
current, so work it spawns and requests it sends are children. Notifications get no spans
(see :mod:`acp_runtime._observation`).

The core never imports this module: a connection built without :func:`instrument` does
not touch OpenTelemetry at all.
"""

from __future__ import annotations

import time
from contextlib import AbstractContextManager

try:
    from opentelemetry import trace
except ImportError as error:  # pragma: no cover - depends on the environment
    raise ImportError(
        "acp_runtime.otel needs the OpenTelemetry API: install the extra "
        "acp-typed-runtime[otel] (acp-typed[otel] from a clone, or opentelemetry-api)"
    ) from error

from ._builder import ConnectionBuilder
from ._errors import RequestError
from ._jsonrpc import RequestId
from ._methods import JsonValue
from ._observation import ConnectionObserver, RequestSpan
from ._peer import COUNTERPART, Peer
from ._roles import Role
from ._successor import ENVELOPE_METHODS, SUCCESSOR, peel_envelopes

__all__ = ["TRACER_NAME", "Tracing", "instrument"]

TRACER_NAME = "acp_runtime"
"""The instrumentation scope of the spans (``otel.scope.name``)."""

CANCEL_REQUESTED = "cancel_requested"
CANCEL_ANSWERED = "cancel_answered"
CANCEL_LATENCY = "acp.cancel.latency_ms"


class Tracing:
    """An :class:`~acp_runtime._observation.Instrumentation` that makes OpenTelemetry spans.

    ``tracer_provider`` defaults to the global one (``trace.set_tracer_provider``), looked
    up when a span starts, so it may be configured after this is created.
    """

    def __init__(self, tracer_provider: trace.TracerProvider | None = None) -> None:
        self.tracer = trace.get_tracer(TRACER_NAME, tracer_provider=tracer_provider)

    def connection(self, role: Role) -> ConnectionObserver:
        return _ConnectionSpans(self.tracer, role)


def instrument(
    builder: ConnectionBuilder, *, tracer_provider: trace.TracerProvider | None = None
) -> ConnectionBuilder:
    """Give every connection ``builder`` connects from now on OpenTelemetry spans;
    returns the builder."""
    builder.instrument(Tracing(tracer_provider))
    return builder


class _ConnectionSpans:
    """One connection's open spans, so that its shutdown ends those nobody answered."""

    __slots__ = ("_base", "_open", "_tracer")

    def __init__(self, tracer: trace.Tracer, role: Role) -> None:
        self._tracer = tracer
        self._base: dict[str, str] = {
            "rpc.system": "jsonrpc",
            "rpc.jsonrpc.version": "2.0",
            "acp.role": role,
        }
        self._open: set[_Span] = set()

    def incoming_request(
        self, method: str, request_id: RequestId, params: JsonValue
    ) -> RequestSpan:
        peer = COUNTERPART
        attributes = dict(self._base)
        if method in ENVELOPE_METHODS:  # a proxy's successor speaks through envelopes
            attributes["acp.envelope"] = method
            method, _ = peel_envelopes(method, params)
            peer = SUCCESSOR
        return self._start(method, request_id, peer, attributes, trace.SpanKind.SERVER)

    def outgoing_request(self, method: str, request_id: RequestId, peer: Peer) -> RequestSpan:
        return self._start(method, request_id, peer, dict(self._base), trace.SpanKind.CLIENT)

    def _start(
        self,
        method: str,
        request_id: RequestId,
        peer: Peer,
        attributes: dict[str, str],
        kind: trace.SpanKind,
    ) -> _Span:
        attributes["rpc.method"] = method
        attributes["rpc.jsonrpc.request_id"] = _id_text(request_id)
        attributes["acp.peer"] = peer.name
        span = _Span(self, self._tracer.start_span(method, kind=kind, attributes=attributes))
        self._open.add(span)
        return span

    def ended(self, span: _Span) -> None:
        self._open.discard(span)

    def closed(self) -> None:
        for span in list(self._open):
            span.end_unanswered("connection_closed", "connection closed before the answer")


class _Span:
    """A :class:`~acp_runtime._observation.RequestSpan` over one OpenTelemetry span."""

    __slots__ = ("_cancelled_at", "_owner", "_span")

    def __init__(self, owner: _ConnectionSpans, span: trace.Span) -> None:
        self._owner = owner
        self._span: trace.Span | None = span
        self._cancelled_at: int | None = None

    def cancel_requested(self) -> None:
        if self._span is not None and self._cancelled_at is None:
            self._cancelled_at = time.monotonic_ns()
            self._span.add_event(CANCEL_REQUESTED)

    def answered(self, error: RequestError | None) -> None:
        span = self._take()
        if span is None:
            return
        if self._cancelled_at is not None:
            latency_ms = (time.monotonic_ns() - self._cancelled_at) / 1e6
            span.add_event(CANCEL_ANSWERED, {CANCEL_LATENCY: latency_ms})
        if error is None:
            span.set_attribute("acp.outcome", "result")
        else:
            outcome = "connection_closed" if error.is_connection_closed else "error"
            span.set_attribute("acp.outcome", outcome)
            span.set_attribute("rpc.jsonrpc.error_code", error.code)
            span.set_attribute("rpc.jsonrpc.error_message", error.message)
            span.set_status(trace.StatusCode.ERROR, f"{error.message} ({error.code})")
        span.end()

    def abandoned(self, reason: str) -> None:
        self.end_unanswered("abandoned", reason)

    def end_unanswered(self, outcome: str, description: str) -> None:
        """End with no answer on the wire: ``outcome`` and an error status."""
        span = self._take()
        if span is None:
            return
        span.set_attribute("acp.outcome", outcome)
        span.set_status(trace.StatusCode.ERROR, description)
        span.end()

    def activated(self) -> AbstractContextManager[object]:
        return trace.use_span(
            self._span or trace.INVALID_SPAN,
            end_on_exit=False,
            record_exception=False,
            set_status_on_exception=False,
        )

    def _take(self) -> trace.Span | None:
        span, self._span = self._span, None
        if span is not None:
            self._owner.ended(self)
        return span


def _id_text(request_id: RequestId) -> str:
    """The id as the conventions want it, a string: ``7``, ``abc``, ``null``."""
    if isinstance(request_id, str):
        return request_id
    return "null" if request_id is None else str(request_id)
