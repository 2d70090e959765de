"""Proxies: forward messages between connections, cancelling hop by hop.

Request ids are per connection, so a ``$/cancel_request`` is meaningless on any other
connection than the one it arrived on. Cancellation therefore crosses a proxy as a
*fresh* ``$/cancel_request`` carrying the next hop's id, sent by the forwarded
request's :class:`~acp_runtime.SentRequest` when the upstream marker is set
(``forward_response_to``, PROXY-1). :func:`send_proxied_message_to` forwards requests
that way and drops raw cancels instead of tunnelling them (PROXY-4).

Two shapes of proxy are provided:

* :class:`Proxy`: a component between two connections, upstream (towards the client)
  and downstream (towards the agent), for example a process that speaks ACP on stdio and
  spawns its agent.
* :class:`ConductedProxy`: a component run by a conductor over one connection; it
  learns it is a proxy from ``_proxy/initialize`` and reaches its successor through
  ``_proxy/successor`` envelopes (:mod:`acp_runtime._successor`).

Both forward whatever no user handler claims; typed handlers registered on their
builders run first, which is how a proxy intercepts a method (see ``docs/proxies.md``).
"""

from __future__ import annotations

import logging
from collections.abc import AsyncGenerator
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING

import anyio

from ._builder import ConnectionBuilder
from ._errors import RequestError
from ._handlers import RawNotificationHandler, RawRequestHandler
from ._log_throttle import peer_log
from ._methods import JsonValue
from ._peer import COUNTERPART
from ._proxied import ProxiedNotification, ProxiedRequest, send_proxied_message_to
from ._successor import (
    ENVELOPE_METHODS,
    PROXY_INITIALIZE_METHOD,
    SUCCESSOR,
    SuccessorPeer,
    open_envelope,
)

if TYPE_CHECKING:
    from ._connection import Connection
    from ._responder import Responder
    from ._transport import Transport

log = logging.getLogger(__name__)

INITIALIZE_METHOD = "initialize"

DRAIN_TIMEOUT = 30.0
"""Seconds :meth:`Proxy.serve` keeps answering the client's requests after its EOF."""


class Proxy:
    """A proxy between an upstream connection (to the client) and a downstream one (to
    the agent).

    Each side's builder gets raw fallbacks that forward to the other side with
    :func:`send_proxied_message_to`; register typed handlers on
    :attr:`upstream_builder` / :attr:`downstream_builder` to intercept methods (they run
    first) and reach the other side through :attr:`downstream` / :attr:`upstream`.
    By default the proxy plays an agent upstream and a client downstream, so typed
    registrations are checked against those roles. The builders' raw fallbacks belong to
    the forwarding: give an extension method a typed :class:`~acp_runtime.RequestMethod`
    binding to intercept it.
    """

    def __init__(
        self,
        upstream: ConnectionBuilder | None = None,
        downstream: ConnectionBuilder | None = None,
    ) -> None:
        self.upstream_builder = upstream or ConnectionBuilder(role="agent")
        self.downstream_builder = downstream or ConnectionBuilder(role="client")
        self.upstream_builder.on_raw_request(self._request_from_upstream)
        self.upstream_builder.on_raw_notification(self._notification_from_upstream)
        self.downstream_builder.on_raw_request(self._request_from_downstream)
        self.downstream_builder.on_raw_notification(self._notification_from_downstream)
        self._upstream: Connection | None = None
        self._downstream: Connection | None = None
        self._ready: anyio.Event | None = None

    @property
    def upstream(self) -> Connection:
        """The connection to the client side (while connected)."""
        if self._upstream is None:
            raise RuntimeError("the proxy is not connected")
        return self._upstream

    @property
    def downstream(self) -> Connection:
        """The connection to the agent side (while connected)."""
        if self._downstream is None:
            raise RuntimeError("the proxy is not connected")
        return self._downstream

    @asynccontextmanager
    async def connect(self, upstream: Transport, downstream: Transport) -> AsyncGenerator[Proxy]:
        """Run both connections for the duration of the block.

        Downstream connects first, so a request from upstream always finds it;
        messages from downstream wait (briefly) until upstream is connected.
        """
        if self._ready is not None:
            raise RuntimeError("the proxy is already connected")
        self._ready = anyio.Event()
        try:
            async with self.downstream_builder.connect(downstream) as down:
                self._downstream = down
                async with self.upstream_builder.connect(upstream) as up:
                    self._upstream = up
                    self._ready.set()
                    yield self
        finally:
            self._upstream = self._downstream = self._ready = None

    async def serve(
        self, upstream: Transport, downstream: Transport, *, drain_timeout: float = DRAIN_TIMEOUT
    ) -> None:
        """Forward until either side closes, then close both.

        When the client side ends first (EOF), the requests it already sent are still
        answered before closing, waiting at most ``drain_timeout`` seconds; requests
        still unanswered then are abandoned (the client has stopped sending anyway).
        """
        draining = _AnsweredBeforeEof(upstream, drain_timeout)
        async with self.connect(draining, downstream):
            draining.connection = self.upstream
            async with anyio.create_task_group() as tg:

                async def close_when_closed(connection: Connection) -> None:
                    await connection.wait_incoming_closed()
                    tg.cancel_scope.cancel()

                tg.start_soon(close_when_closed, self.upstream)
                tg.start_soon(close_when_closed, self.downstream)

    async def _peer_of_downstream(self) -> Connection:
        if self._ready is not None and not self._ready.is_set():
            await self._ready.wait()
        return self.upstream

    async def _request_from_upstream(
        self, method: str, params: JsonValue, responder: Responder[JsonValue]
    ) -> None:
        send_proxied_message_to(
            self.downstream, COUNTERPART, ProxiedRequest(method, params, responder)
        )

    async def _notification_from_upstream(
        self, method: str, params: JsonValue, cx: Connection
    ) -> None:
        send_proxied_message_to(self.downstream, COUNTERPART, ProxiedNotification(method, params))

    async def _request_from_downstream(
        self, method: str, params: JsonValue, responder: Responder[JsonValue]
    ) -> None:
        upstream = await self._peer_of_downstream()
        send_proxied_message_to(upstream, COUNTERPART, ProxiedRequest(method, params, responder))

    async def _notification_from_downstream(
        self, method: str, params: JsonValue, cx: Connection
    ) -> None:
        upstream = await self._peer_of_downstream()
        send_proxied_message_to(upstream, COUNTERPART, ProxiedNotification(method, params))


class ConductedProxy:
    """A proxy component in a conductor's chain: one connection, to the conductor.

    Plain messages come from (and go back to) the predecessor; messages for the
    successor travel in ``_proxy/successor`` envelopes (:class:`SuccessorPeer`). What no
    user handler on :attr:`builder` claims is forwarded: plain traffic to the successor,
    enveloped traffic (unwrapped) to the predecessor. The conductor initializes the
    component with ``_proxy/initialize``, which is forwarded to the successor as
    ``initialize``; a plain ``initialize`` is refused with -32600.

    A wrapped request's responder answers under the outer id, and a ``$/cancel_request``
    for that id, wrapped or plain, sets its marker; the forwarded request then sends its
    own cancel (PROXY-1).
    """

    def __init__(
        self, builder: ConnectionBuilder | None = None, *, successor: SuccessorPeer = SUCCESSOR
    ) -> None:
        self.builder = builder or ConnectionBuilder(role="untyped")
        self.successor = successor
        self.initialized_as_proxy = False
        """Set once ``_proxy/initialize`` arrived: the component knows it is a proxy."""
        self._successor_requests: dict[str, RawRequestHandler] = {}
        self._successor_notifications: dict[str, RawNotificationHandler] = {}
        self.builder.on_raw_request(self._on_request)
        self.builder.on_raw_notification(self._on_notification)

    def on_request_from_successor(self, method: str, handler: RawRequestHandler) -> ConductedProxy:
        """Handle ``method`` coming from the successor instead of forwarding it to the
        predecessor. ``handler`` gets the inner params; its responder answers under the
        envelope's (outer) id, and its marker is set by a cancel for that id."""
        self._successor_requests[method] = handler
        return self

    def on_notification_from_successor(
        self, method: str, handler: RawNotificationHandler
    ) -> ConductedProxy:
        """Handle notification ``method`` coming from the successor instead of forwarding it."""
        self._successor_notifications[method] = handler
        return self

    async def _on_request(
        self, method: str, params: JsonValue, responder: Responder[JsonValue]
    ) -> None:
        connection = responder.connection
        if method == PROXY_INITIALIZE_METHOD:
            self.initialized_as_proxy = True
            forwarded = ProxiedRequest(INITIALIZE_METHOD, params, responder)
            send_proxied_message_to(connection, self.successor, forwarded)
        elif method == INITIALIZE_METHOD:
            raise RequestError.invalid_request(
                f"proxies must be initialized with `{PROXY_INITIALIZE_METHOD}`"
            )
        elif method in ENVELOPE_METHODS:
            envelope = open_envelope(method, params)
            if envelope is None:
                raise RequestError.invalid_params(
                    {
                        "reason": "malformed_envelope",
                        "expected": '{"method": str, "params"?: object|array}',
                    }
                )
            handler = self._successor_requests.get(envelope.method)
            if handler is not None:
                result = await handler(envelope.method, envelope.params, responder)
                if result is not None:
                    responder.respond(result)
                return
            inner = ProxiedRequest(envelope.method, envelope.params, responder)
            send_proxied_message_to(connection, COUNTERPART, inner)
        else:
            send_proxied_message_to(
                connection, self.successor, ProxiedRequest(method, params, responder)
            )

    async def _on_notification(self, method: str, params: JsonValue, cx: Connection) -> None:
        envelope = open_envelope(method, params)
        if envelope is not None:
            handler = self._successor_notifications.get(envelope.method)
            if handler is not None:
                await handler(envelope.method, envelope.params, cx)
                return
            forwarded = ProxiedNotification(envelope.method, envelope.params)
            send_proxied_message_to(cx, COUNTERPART, forwarded)
        elif method in ENVELOPE_METHODS:
            peer_log.log(log, logging.WARNING, "malformed %s notification ignored", method)
        else:
            send_proxied_message_to(cx, self.successor, ProxiedNotification(method, params))


class _AnsweredBeforeEof:
    """A transport that holds back the peer's EOF until every request it sent has been
    answered, so a client that half-closes still gets its answers through the proxy.

    Needs no parsing: answers leave through :meth:`send`, and the connection's
    ``incoming_request_count`` already dropped when an answer is queued.
    """

    def __init__(self, inner: Transport, timeout: float) -> None:
        self.inner = inner
        self.connection: Connection | None = None
        self._timeout = timeout
        self._answered: anyio.Event | None = None

    def _outstanding(self) -> int:
        return 0 if self.connection is None else self.connection.incoming_request_count

    async def receive(self) -> bytes:
        try:
            return await self.inner.receive()
        except anyio.EndOfStream:
            with anyio.move_on_after(self._timeout):
                while self._outstanding():
                    self._answered = anyio.Event()
                    await self._answered.wait()
            if self._outstanding():
                log.warning(
                    "%d request(s) unanswered %.0f s after EOF", self._outstanding(), self._timeout
                )
            raise

    async def send(self, message: bytes) -> None:
        await self.inner.send(message)
        if self._answered is not None and not self._outstanding():
            self._answered.set()

    async def aclose(self) -> None:
        await self.inner.aclose()
