"""One agent, several protocol versions: the first ``initialize`` picks the handlers.

ACP negotiates its version in ``initialize`` alone (``params.protocolVersion``), so one
agent can serve v1 and v2 clients on the same kind of transport. :class:`VersionRouter`
reads messages until a valid ``initialize``, answers what comes before it, then hands
the transport to the builder of the chosen version, that ``initialize`` first. Later
messages reach that builder's connection unchanged; a connection is never re-routed.

The rules are those of the TypeScript SDK's ``agentProtocolRouter`` (2.4.0):

* the highest configured version at or below the requested one; a v1-only router always
  picks v1 (the legacy fallback); none fits: ``-32022`` with
  ``{"requested", "supported"}``;
* a ``protocolVersion`` that is not an integer from 0 to 65535: ``-32602``;
* before ``initialize``: other requests get ``-32600`` with data
  ``"first ACP request must be initialize"``, notifications and responses are ignored,
  a batch or an invalid message gets ``-32600`` with id ``null``, unparsable JSON
  ``-32700``; none of these closes the connection;
* on the v2 route the ``initialize`` id must be a string or an integer, else
  ``-32600`` with id ``null``.

It serves any :class:`~acp_runtime._transport.Transport`, like a
:class:`~acp_runtime.ConnectionBuilder`: ``await router.serve(transport)``.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncGenerator, Awaitable, Callable, Iterable, Sequence
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from dataclasses import dataclass
from typing import Final

import anyio

from ._builder import ConnectionBuilder
from ._capabilities import INITIALIZE_METHOD
from ._connection import Connection
from ._errors import RequestError
from ._framing import EagerReceiver
from ._initialize_params import PROTOCOL_V1, PROTOCOL_V2, initialize_params_for
from ._jsonrpc import (
    Invalid,
    Notification,
    Request,
    RequestId,
    classify,
    decode,
    encode,
    error_message,
    request_message,
)
from ._methods import JsonValue
from ._transport import MessageTooLarge, Transport

log = logging.getLogger(__name__)

MAX_PROTOCOL_VERSION: Final = 0xFFFF

FIRST_REQUEST_MUST_BE_INITIALIZE: Final = "first ACP request must be initialize"
"""``data`` of the -32600 answer to a request other than ``initialize`` before it."""
INVALID_PROTOCOL_VERSION: Final = "initialize.protocolVersion must be a valid ACP protocol version"
"""``data`` of the -32602 answer to an ``initialize`` without a usable version."""
V2_REQUEST_ID_RULE: Final = "ACP v2 request IDs must be strings or integers"
"""``data`` of the -32600 answer to a v2 ``initialize`` with a ``null`` id."""

_LINE_EXCERPT = 200
"""How much of an unparsable message is echoed in the -32700 ``data`` (as connections do)."""


class VersionRouter:
    """Serves a transport with the builder of the protocol version the client asks for.

    ``VersionRouter(v1=builder_v1, v2=builder_v2)``; at least one of them. The builders
    are agents (or untyped) and serve every connection the router serves, as a
    :class:`~acp_runtime.ConnectionBuilder` does.
    """

    def __init__(
        self, *, v1: ConnectionBuilder | None = None, v2: ConnectionBuilder | None = None
    ) -> None:
        routes = {
            version: builder
            for version, builder in ((PROTOCOL_V1, v1), (PROTOCOL_V2, v2))
            if builder is not None
        }
        if not routes:
            raise ValueError("a version router needs a builder for v1, v2 or both")
        for version, builder in routes.items():
            if builder.role == "client":
                raise ValueError(f"the v{version} builder is a client; a router serves agents")
        self._routes = routes

    @property
    def supported_versions(self) -> list[int]:
        """The configured protocol versions, lowest first (the ``-32022`` data lists them)."""
        return sorted(self._routes)

    def select(self, requested: int) -> int | None:
        """The version that serves a client asking for ``requested``, or None if none does."""
        if PROTOCOL_V2 not in self._routes:
            return PROTOCOL_V1  # v1 only: the legacy fallback serves every request
        if requested >= PROTOCOL_V2:
            return PROTOCOL_V2
        if PROTOCOL_V1 in self._routes and requested >= PROTOCOL_V1:
            return PROTOCOL_V1
        return None

    async def accept(self, transport: Transport) -> Routed | None:
        """Read until a valid ``initialize`` and return the chosen route, ready to connect.

        Returns None, after closing ``transport``, when the peer leaves (EOF, a read or
        write failure) before one arrives. Otherwise the transport belongs to the
        :class:`Routed`: connect or serve it, which closes it in the end. Cancelled,
        this closes the transport too.
        """
        try:
            routed = await self._read_until_initialize(transport)
        except BaseException:
            with anyio.CancelScope(shield=True):
                await transport.aclose()
            raise
        if routed is None:
            with anyio.CancelScope(shield=True):
                await transport.aclose()
        return routed

    @asynccontextmanager
    async def connect(self, transport: Transport) -> AsyncGenerator[Connection, None]:
        """Route ``transport``, then run the chosen builder's connection for the block.

        The block starts once a valid ``initialize`` has arrived; that request is the
        first the connection handles. Raises :class:`anyio.EndOfStream` if the peer
        leaves before (use :meth:`accept` to learn the chosen version).
        """
        routed = await self.accept(transport)
        if routed is None:
            raise anyio.EndOfStream
        async with routed.connect() as connection:
            yield connection

    async def serve(self, transport: Transport) -> None:
        """Route ``transport`` and serve it with the chosen builder until the peer closes.

        A peer that leaves before ``initialize`` ends it quietly (the transport closed).
        """
        routed = await self.accept(transport)
        if routed is not None:
            await routed.serve()

    async def _read_until_initialize(self, transport: Transport) -> Routed | None:
        while True:
            try:
                data = await transport.receive()
            except anyio.EndOfStream:
                log.debug("incoming EOF before initialize")
                return None
            except MessageTooLarge as exc:
                log.warning("incoming message over %d bytes skipped", exc.limit)
                reason: JsonValue = {"reason": "message_too_large", "limit": exc.limit}
                verdict: _Verdict = _Reply(None, RequestError.invalid_request(reason))
            except (anyio.BrokenResourceError, anyio.ClosedResourceError) as exc:
                log.warning("incoming transport failed before initialize: %r", exc)
                return None
            else:
                verdict = self._judge(data)
            if isinstance(verdict, _Initialize):
                replay = _ReplayFirst(verdict.message, transport)
                return Routed(verdict.version, self._routes[verdict.version], replay)
            if verdict is None:
                continue
            try:
                await transport.send(encode(error_message(verdict.request_id, verdict.error)))
            except (anyio.BrokenResourceError, anyio.ClosedResourceError) as exc:
                log.warning("outgoing transport failed before initialize: %r", exc)
                return None

    def _judge(self, data: bytes) -> _Verdict:
        """What a message before ``initialize`` gets: routed, answered, or ignored (None)."""
        try:
            value = decode(data)
        except ValueError:
            text = data.decode(errors="replace")
            return _Reply(None, RequestError.parse_error({"line": text[:_LINE_EXCERPT]}))
        if isinstance(value, list):
            reason = "empty batch" if not value else "batches are not supported"
            return _Reply(None, RequestError.invalid_request(reason))
        if _is_response_shaped(value):
            return None  # nothing is waiting for an answer yet
        message = classify(value)
        if isinstance(message, Notification):
            return None
        if isinstance(message, Invalid):
            return _Reply(None, RequestError.invalid_request(message.reason))
        assert isinstance(message, Request)  # responses were ruled out above
        if message.method != INITIALIZE_METHOD:
            error = RequestError.invalid_request(FIRST_REQUEST_MUST_BE_INITIALIZE)
            return _Reply(message.id, error)
        return self._route_initialize(message, data)

    def _route_initialize(self, message: Request, data: bytes) -> _Verdict:
        params = message.params
        if not isinstance(params, dict):
            return _Reply(message.id, RequestError.invalid_params(INVALID_PROTOCOL_VERSION))
        requested = _protocol_version(params.get("protocolVersion"))
        if requested is None:
            return _Reply(message.id, RequestError.invalid_params(INVALID_PROTOCOL_VERSION))
        selected = self.select(requested)
        if selected is None:
            error = RequestError.unsupported_protocol_version(requested, self.supported_versions)
            return _Reply(message.id, error)
        if selected == PROTOCOL_V2 and message.id is None:
            return _Reply(None, RequestError.invalid_request(V2_REQUEST_ID_RULE))
        routed_params = initialize_params_for(params, requested, selected)
        if routed_params is not params:
            data = encode(request_message(message.id, INITIALIZE_METHOD, routed_params))
        log.debug("initialize for version %d routed to v%d", requested, selected)
        return _Initialize(selected, data)


@dataclass(frozen=True)
class Routed:
    """A transport routed to one version's builder; its ``initialize`` comes first."""

    protocol_version: int
    """The chosen version (1 or 2)."""
    builder: ConnectionBuilder
    transport: Transport
    """The routed transport: the ``initialize`` as the builder should see it, then the
    rest of the original transport."""

    def connect(self) -> AbstractAsyncContextManager[Connection]:
        """:meth:`ConnectionBuilder.connect` of the chosen builder on the routed transport."""
        return self.builder.connect(self.transport)

    async def serve(self) -> None:
        """:meth:`ConnectionBuilder.serve` of the chosen builder on the routed transport."""
        await self.builder.serve(self.transport)


@dataclass(frozen=True)
class _Reply:
    request_id: RequestId
    error: RequestError


@dataclass(frozen=True)
class _Initialize:
    version: int
    message: bytes
    """The ``initialize`` request to replay (re-encoded if its params were rewritten)."""


_Verdict = _Reply | _Initialize | None


class _ReplayFirst:
    """A transport whose first message is one already read from ``inner``; the rest is
    ``inner``'s. The fast paths a connection looks for (``send_nowait``,
    ``send_burst_nowait``, ``send_many``, ``set_eager_receiver``) are ``inner``'s own
    where it has them."""

    send_nowait: Callable[[bytes], bool]
    send_burst_nowait: Callable[[Iterable[bytes]], int]
    send_many: Callable[[Sequence[bytes]], Awaitable[None]]
    set_eager_receiver: Callable[[EagerReceiver | None], bool]

    def __init__(self, first: bytes, inner: Transport) -> None:
        self.inner = inner
        self._first: bytes | None = first
        for name in ("send_nowait", "send_burst_nowait", "send_many", "set_eager_receiver"):
            method = getattr(inner, name, None)
            if method is not None:
                setattr(self, name, method)

    async def receive(self) -> bytes:
        first, self._first = self._first, None
        if first is not None:
            return first
        return await self.inner.receive()

    async def send(self, message: bytes) -> None:
        await self.inner.send(message)

    async def aclose(self) -> None:
        await self.inner.aclose()


def _is_response_shaped(value: JsonValue) -> bool:
    """A response, however malformed (as the TypeScript router tells them apart)."""
    return (
        isinstance(value, dict)
        and "method" not in value
        and ("id" in value or "result" in value or "error" in value)
    )


def _protocol_version(value: JsonValue) -> int | None:
    """``value`` as a protocol version: an integer (``2.0`` counts, as in JSON) in range."""
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    if type(value) is int and 0 <= value <= MAX_PROTOCOL_VERSION:
        return value
    return None
