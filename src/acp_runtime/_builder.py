"""Build a connection: pick a role, register handlers, then connect a transport.

Handlers are looked up by method name, typed bindings first, then the raw fallback.
Registration checks the role against the binding's side (an agent cannot register a
client method by mistake); the ``"untyped"`` role checks nothing.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator, Mapping
from contextlib import asynccontextmanager
from typing import TypeVar

import anyio

from ._connection import Connection, Routes
from ._handlers import (
    NotificationHandler,
    RawNotificationHandler,
    RawRequestHandler,
    RequestHandler,
    cancel_turn_route,
    raw_notification_route,
    raw_request_route,
    typed_notification_route,
    typed_request_route,
)
from ._methods import NotificationMethod, RequestMethod
from ._observation import Instrumentation
from ._outbox import DEFAULT_HIGH_WATER_BYTES, DEFAULT_PACE_BYTES
from ._roles import Role, check_handles, validate_role
from ._transport import Transport
from ._turns import CANCEL_METHOD, PROMPT_METHOD

P = TypeVar("P")
R = TypeVar("R")


class ConnectionBuilder:
    """Collects handlers for one role; can connect any number of transports.

    ``high_water_bytes`` is each connection's backpressure mark: while more output than
    that waits for a peer that does not read it, the connection stops reading. Over
    ``pace_bytes`` (at most the high-water mark), awaited sends and
    :meth:`Connection.drain` wait (see :mod:`acp_runtime._outbox`).
    """

    def __init__(
        self,
        role: Role = "untyped",
        *,
        high_water_bytes: int = DEFAULT_HIGH_WATER_BYTES,
        pace_bytes: int = DEFAULT_PACE_BYTES,
    ) -> None:
        if high_water_bytes < 1:
            raise ValueError("high_water_bytes must be positive")
        if pace_bytes < 1:
            raise ValueError("pace_bytes must be positive")
        self.role: Role = validate_role(role)
        self.high_water_bytes = high_water_bytes
        self.pace_bytes = pace_bytes
        self._routes = Routes()
        self._instrumentation: Instrumentation | None = None

    def on_request(
        self, method: RequestMethod[P, R], handler: RequestHandler[P, R], *, inline: bool = False
    ) -> ConnectionBuilder:
        """Handle ``method``: ``async (params, responder) -> result | None``.

        The handler runs in a task of its own, started in arrival order before the next
        message is read, so it may ``await`` requests to the peer. ``inline=True`` runs
        it in the dispatch loop instead, like a notification handler: nothing else is
        read until it returns, and awaiting the peer there raises
        :class:`~acp_runtime.DeadlockError` (see docs/ordering.md).
        """
        check_handles(self.role, method)
        self._claim(method.name, self._routes.requests)
        self._routes.requests[method.name] = typed_request_route(method, handler)
        if inline:
            self._routes.inline.add(method.name)
        if method.name == PROMPT_METHOD:  # a prompt turn: session/cancel stops it
            self._routes.turns[method.name] = method
        return self

    def on_notification(
        self, method: NotificationMethod[P], handler: NotificationHandler[P]
    ) -> ConnectionBuilder:
        """Handle ``method``: ``async (params, connection) -> None``.

        A handler for ``$/cancel_request`` observes cancellations; the runtime has
        already updated the request's marker before it runs (IN-2).
        """
        check_handles(self.role, method)
        self._claim(method.name, self._routes.notifications)
        self._routes.notifications[method.name] = typed_notification_route(method, handler)
        return self

    def on_raw_request(
        self, handler: RawRequestHandler, *, inline: bool = True
    ) -> ConnectionBuilder:
        """Fallback for requests with no typed handler (extension methods).

        Inline by default: the ordered raw layer, where a handler runs in the dispatch
        loop and spawns what awaits the peer (proxies forward from here).
        ``inline=False`` runs each request in its own task, as typed handlers do.
        """
        if self._routes.raw_request is not None:
            raise ValueError("a raw request handler is already registered")
        self._routes.raw_request = raw_request_route(handler)
        self._routes.raw_request_inline = inline
        return self

    def on_raw_notification(self, handler: RawNotificationHandler) -> ConnectionBuilder:
        """Fallback for notifications with no typed handler (extension methods)."""
        if self._routes.raw_notification is not None:
            raise ValueError("a raw notification handler is already registered")
        self._routes.raw_notification = raw_notification_route(handler)
        return self

    def instrument(self, instrumentation: Instrumentation) -> ConnectionBuilder:
        """Observe every request of the connections built from now on, for example with
        OpenTelemetry spans (:func:`acp_runtime.otel.instrument`). Off by default, and
        then free: nothing is called per request."""
        if self._instrumentation is not None:
            raise ValueError("an instrumentation is already registered")
        self._instrumentation = instrumentation
        return self

    @staticmethod
    def _claim(name: str, table: Mapping[str, object]) -> None:
        if name in table:
            raise ValueError(f"a handler for {name!r} is already registered")

    @asynccontextmanager
    async def connect(self, transport: Transport) -> AsyncGenerator[Connection, None]:
        """Run a connection over ``transport`` for the duration of the block.

        Leaving the block closes it, also when it is cancelled: pending outgoing requests
        fail with a connection-closed error (a request awaited by the cancelled code is
        abandoned instead: one ``$/cancel_request``), queued messages are flushed (bounded
        by ``CLOSE_TIMEOUT``), spawned work is cancelled and the transport closed. If
        spawned work raises, the block is cancelled and the error propagates.
        """
        notifications = dict(self._routes.notifications)
        if PROMPT_METHOD in self._routes.requests and CANCEL_METHOD not in notifications:
            notifications[CANCEL_METHOD] = cancel_turn_route  # session/cancel stops turns
        routes = Routes(
            dict(self._routes.requests),
            notifications,
            self._routes.raw_request,
            self._routes.raw_notification,
            set(self._routes.inline),
            self._routes.raw_request_inline,
            dict(self._routes.turns),
        )
        async with anyio.create_task_group() as tg:
            instrumentation = self._instrumentation
            connection = Connection(
                routes,
                self.role,
                transport,
                tg,
                high_water_bytes=self.high_water_bytes,
                pace_bytes=self.pace_bytes,
                observer=None if instrumentation is None else instrumentation.connection(self.role),
            )
            try:  # the writer is shielded, so from its start only the shutdown ends it
                await tg.start(connection._run_writer)  # pyright: ignore[reportPrivateUsage]
                await tg.start(connection._run_reader)  # pyright: ignore[reportPrivateUsage]
                yield connection
            finally:
                await connection._shutdown()  # pyright: ignore[reportPrivateUsage]

    async def serve(self, transport: Transport) -> None:
        """Serve until the peer closes its side, then flush and close."""
        async with self.connect(transport) as connection:
            await connection.wait_incoming_closed()
