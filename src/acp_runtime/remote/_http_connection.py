"""One ACP connection of the Streamable HTTP server, seen from both sides.

To the runtime it is a :class:`~acp_runtime._transport.Transport`: ``receive`` yields what
the client POSTed, ``send`` routes each agent message to the SSE stream it belongs on
(TS 2.4.0's rules: a response to its request's stream, the ``session/load`` answer to the
connection stream, anything with ``params.sessionId`` to that session's stream, the rest
to the connection stream). To the HTTP handlers it holds those streams, the routes of
requests still unanswered, and the bounds: queued bytes (past them the agent's sends
wait; a stall past the timeout closes the connection), session streams without a reader,
an idle timeout, and a shorter one while a request is in progress (the client is gone).
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Final, cast

import anyio

from .._jsonrpc import IdKey, id_key, is_request_id
from ._message_route import quick_route
from ._outbound_streams import OutboundStream, sse_event

log = logging.getLogger(__name__)

DEFAULT_MAX_BUFFERED_BYTES: Final = 64 * 1024 * 1024
DEFAULT_STALL_TIMEOUT: Final = 60.0
DEFAULT_MAX_UNREAD_SESSION_STREAMS: Final = 1024
DEFAULT_IDLE_TIMEOUT: Final = 600.0
DEFAULT_CLIENT_GONE_TIMEOUT: Final = 10.0
DEFAULT_MAX_ID_LENGTH: Final = 1024
DEFAULT_KEEP_ALIVE: Final = 15.0

SESSION_LOAD: Final = "session/load"

Route = str | None
"""Where a message goes: a session id's stream, or None for the connection stream."""


@dataclass(frozen=True, slots=True)
class HttpLimits:
    """The per-connection bounds (defaults as the TS 2.4.0 server's, plus the idle and
    client-gone timeouts it lacks)."""

    max_buffered_bytes: int = DEFAULT_MAX_BUFFERED_BYTES
    """SSE bytes queued across a connection's streams before the agent's sends wait."""
    stall_timeout: float = DEFAULT_STALL_TIMEOUT
    """Seconds at ``max_buffered_bytes`` with nothing read before the connection closes."""
    max_unread_session_streams: int = DEFAULT_MAX_UNREAD_SESSION_STREAMS
    """Session streams holding output with no reader; one more closes the connection."""
    idle_timeout: float = DEFAULT_IDLE_TIMEOUT
    """Seconds with no request in progress and no reader before the connection closes."""
    max_id_length: int = DEFAULT_MAX_ID_LENGTH
    """Longest request or session id, in characters (longer: 400)."""
    keep_alive: float = DEFAULT_KEEP_ALIVE
    """Seconds between ``:`` comments to a waiting reader."""
    client_gone_timeout: float = DEFAULT_CLIENT_GONE_TIMEOUT
    """Seconds a connection with a request in progress (the client's, not yet answered,
    or the agent's, not yet answered by the client) may have no SSE reader and no POST
    under way: then its client is gone, and the connection closes, cancelling its turns
    as a WebSocket's end does (a client reconnecting its streams within it is not gone)."""

    def __post_init__(self) -> None:
        # every way of building a server takes these (zero keep-alive: a busy loop)
        timers = (self.keep_alive, self.stall_timeout, self.idle_timeout, self.client_gone_timeout)
        if not all(value > 0 for value in timers):  # NaN fails too
            raise ValueError(
                "keep_alive, stall_timeout, idle_timeout and client_gone_timeout must be positive"
            )


class ConnectionClosed(Exception):
    """The connection ended while a request was using it (answered 404, as TS does)."""


@dataclass(slots=True)  # made per message: not frozen, which costs three times as much
class _Outgoing:
    """What routing needs of an agent message."""

    is_response: bool
    key: IdKey | None
    session_id: str | None
    result_session_id: str | None


def _string_field(value: object, name: str) -> str | None:
    if not isinstance(value, dict):
        return None
    field = cast("dict[str, object]", value).get(name)
    return field if isinstance(field, str) and field else None


def _quick_outgoing(message: bytes) -> _Outgoing | None:
    """:func:`_outgoing` without parsing, for the layouts the runtime's own encoders write
    (:func:`~acp_runtime.remote._message_route.quick_route`); None for anything else, which
    is then parsed. Saves a JSON parse per notification streamed."""
    quick = quick_route(message)
    if quick is None:
        return None
    key = None if quick.id is None else id_key(quick.id)
    return _Outgoing(quick.is_response, key, quick.session_id, None)


def _outgoing(message: bytes) -> _Outgoing:
    quick = _quick_outgoing(message)
    if quick is not None:
        return quick
    try:
        value: object = json.loads(message)
    except ValueError:
        value = None
    if not isinstance(value, dict):
        return _Outgoing(False, None, None, None)
    value = cast("dict[str, object]", value)
    request_id = value.get("id")
    key = id_key(request_id) if "id" in value and is_request_id(request_id) else None
    if "method" in value:
        return _Outgoing(False, key, _string_field(value.get("params"), "sessionId"), None)
    return _Outgoing(True, key, None, _string_field(value.get("result"), "sessionId"))


class HttpConnection:
    """The state of one ``Acp-Connection-Id`` (see the module docstring)."""

    def __init__(self, connection_id: str, limits: HttpLimits) -> None:
        self.connection_id = connection_id
        self.limits = limits
        self._inbound_send, self._inbound = anyio.create_memory_object_stream[bytes](0)
        self.connection_stream = OutboundStream(None, self._taken)
        self._sessions: dict[str, OutboundStream] = {}
        self._unread_sessions = 0
        self._request_routes: dict[IdKey, Route] = {}
        self._client_response_routes: dict[IdKey, Route] = {}
        self.buffered_bytes = 0
        self._progress = anyio.Event()
        self._room_wanted = False
        self._idle_since = anyio.current_time()
        self._busy = 0
        self._closed = False
        self._agent_ended = False
        self.closed_event = anyio.Event()
        self._initialize_key: IdKey | None = None
        self._initialize_answer: bytes | None = None
        self._initialized = anyio.Event()
        self.on_close: Callable[[HttpConnection], None] | None = None
        self.host_scope: anyio.CancelScope | None = None

    # -- the Transport the runtime serves ------------------------------------------------

    async def receive(self) -> bytes:
        try:
            return await self._inbound.receive()
        except (anyio.ClosedResourceError, anyio.BrokenResourceError):
            raise anyio.EndOfStream from None

    async def send(self, message: bytes) -> None:
        if self._closed:
            raise anyio.ClosedResourceError
        self._accept(message)
        await self._wait_for_room()

    async def send_many(self, messages: Sequence[bytes]) -> None:
        """A burst the connection's writer had queued, in one call: each message routed,
        and a wait for room only where the bound is reached (one message past it at most,
        as with :meth:`send`)."""
        if self._closed:
            raise anyio.ClosedResourceError
        bound = self.limits.max_buffered_bytes
        for message in messages:
            if self._closed or self.buffered_bytes >= bound:
                await self._wait_for_room()  # raises once closed
            self._accept(message)
        await self._wait_for_room()

    def _accept(self, message: bytes) -> None:
        """Route an agent message, or keep it as the ``initialize`` answer."""
        outgoing = _outgoing(message)
        if self._initialize_key is not None and outgoing.is_response:
            if outgoing.key == self._initialize_key:
                self._initialize_key = None
                self._initialize_answer = message
                self._initialized.set()
                return
        self._route(message, outgoing)

    async def aclose(self) -> None:
        """Nothing to do: the server closes the connection (DELETE, limits, shutdown)."""

    # -- what the HTTP handlers use ------------------------------------------------------

    @property
    def closed(self) -> bool:
        return self._closed

    async def initialize(self, request_key: IdKey, body: bytes) -> bytes:
        """Hand the ``initialize`` request to the runtime and wait for its answer."""
        self._initialize_key = request_key
        await self.deliver(body)
        await self._initialized.wait()
        if self._initialize_answer is None:
            raise ConnectionClosed
        return self._initialize_answer

    async def deliver(self, body: bytes) -> None:
        """Pass one client message to the runtime; waits while it is not reading."""
        try:
            await self._inbound_send.send(body)
        except (anyio.ClosedResourceError, anyio.BrokenResourceError):
            raise ConnectionClosed from None

    def expect_response(self, request_key: IdKey, method: str, route: Route) -> None:
        """Where the answer to a client request goes (``session/load``'s: the connection
        stream, for a client that has not opened that session's stream yet)."""
        self._request_routes[request_key] = None if method == SESSION_LOAD else route

    def client_response_route(self, key: IdKey | None) -> Route:
        """The stream the server request a client answers went out on."""
        return None if key is None else self._client_response_routes.get(key)

    def answered(self, key: IdKey | None) -> None:
        """The client's answer to a server request was taken: forget its route."""
        if key is not None:
            self._client_response_routes.pop(key, None)

    def acquire(self, session_id: str | None) -> tuple[OutboundStream, object] | None:
        """The stream a GET reads and its reader token; None when it already has a reader.
        A session stream is created on demand."""
        if self._closed:
            raise ConnectionClosed
        stream: OutboundStream | None = self.connection_stream
        if session_id is not None:
            stream = self._sessions.get(session_id)
            if stream is None and not self._agent_ended:
                stream = self._new_session(session_id)
        if stream is None:
            raise ConnectionClosed
        token = stream.acquire()
        if token is None:
            return None
        if stream.session_id is not None:
            self._unread_sessions -= 1
        self.busy(+1)
        return stream, token

    def release(self, stream: OutboundStream, token: object) -> None:
        """A reader left (its GET ended or the client went away)."""
        if not stream.has_reader:
            return
        stream.release(token)
        self.busy(-1)
        if stream.session_id is None or self._closed:
            return
        if not stream.has_queued:
            self._sessions.pop(stream.session_id, None)
            return
        self._unread_sessions += 1
        if self._unread_sessions > self.limits.max_unread_session_streams:
            self.close("too many session streams without a reader")

    def busy(self, delta: int) -> None:
        """A request or reader started (+1) or ended (-1): the idle clock restarts. Only
        noted here (no task woken per request); the idle watch reads it when it wakes."""
        self._busy += delta
        if self._busy == 0:
            self._idle_since = anyio.current_time()
            if self._agent_ended:
                self.close()

    async def watch_idle(self) -> None:
        """Close the connection once nothing used it for ``idle_timeout`` seconds, or
        for ``client_gone_timeout`` while a request is in progress (its client is gone):
        look at least every ``client_gone_timeout`` (a request may start while the watch
        sleeps), and every shorter timeout while the connection is in use."""
        idle, gone = self.limits.idle_timeout, self.limits.client_gone_timeout
        shortest = min(idle, gone)
        while not self._closed:
            if self._busy > 0:
                await anyio.sleep(shortest)
                continue
            in_progress = bool(self._request_routes or self._client_response_routes)
            timeout = gone if in_progress else idle
            remaining = self._idle_since + timeout - anyio.current_time()
            if remaining <= 0:
                self.close("the client is gone" if in_progress else "idle")
                return
            await anyio.sleep(min(remaining, gone))

    def close(self, reason: str | None = None) -> None:
        """End the connection: every stream ends (queued output discarded), the runtime
        stops, pending requests are answered 404."""
        if self._closed:
            return
        self._closed = True
        if reason is not None:
            log.warning("closing ACP HTTP connection %s: %s", self.connection_id, reason)
        self.buffered_bytes -= self.connection_stream.finish(discard=True)
        for stream in self._sessions.values():
            self.buffered_bytes -= stream.finish(discard=True)
        self._sessions.clear()
        self._request_routes.clear()
        self._client_response_routes.clear()
        self._inbound_send.close()
        self._inbound.close()
        self._initialized.set()
        self._progress.set()
        self.closed_event.set()
        if self.host_scope is not None:
            self.host_scope.cancel()
        if self.on_close is not None:
            self.on_close(self)

    def agent_ended(self) -> None:
        """The runtime stopped serving: POSTs get 404, readers get what is queued and then
        EOF; the connection closes once no reader is left."""
        self._agent_ended = True
        self._inbound_send.close()
        self._inbound.close()  # wakes a POST waiting to deliver (closing the send side
        # does not, before anyio 4.16)
        self.connection_stream.finish(discard=False)
        for stream in self._sessions.values():
            stream.finish(discard=False)
        self._initialized.set()
        self._progress.set()
        if self._busy == 0:
            self.close()

    # -- routing and bounds --------------------------------------------------------------

    def _route(self, message: bytes, outgoing: _Outgoing) -> None:
        if outgoing.is_response:
            route = None if outgoing.key is None else self._request_routes.pop(outgoing.key, None)
        else:
            route = outgoing.session_id
            if outgoing.key is not None:
                self._client_response_routes[outgoing.key] = route
        session = outgoing.result_session_id
        if session is not None and len(session) > self.limits.max_id_length:
            self.close("the agent handed out a session id over the id length limit")
            return
        if route is None:
            stream: OutboundStream | None = self.connection_stream
        else:
            stream = self._sessions.get(route) or self._new_session(route)
        event = sse_event(message)  # what the reader takes, and what it counts off
        if stream is not None and stream.push(event):
            self.buffered_bytes += len(event)

    def _new_session(self, session_id: str) -> OutboundStream | None:
        if len(session_id) > self.limits.max_id_length:
            self.close("a session id over the id length limit")
            return None
        if self._unread_sessions >= self.limits.max_unread_session_streams:
            self.close("too many session streams without a reader")
            return None
        stream = OutboundStream(session_id, self._taken)
        self._sessions[session_id] = stream
        self._unread_sessions += 1
        return stream

    def _taken(self, size: int) -> None:
        self.buffered_bytes -= size
        if self._room_wanted:
            self._room_wanted = False
            self._progress.set()
            self._progress = anyio.Event()

    async def _wait_for_room(self) -> None:
        """Backpressure: while the streams hold ``max_buffered_bytes``, the agent waits for
        a reader to take some; ``stall_timeout`` without that closes the connection."""
        while not self._closed and self.buffered_bytes >= self.limits.max_buffered_bytes:
            self._room_wanted = True
            progress = self._progress
            with anyio.move_on_after(self.limits.stall_timeout):
                await progress.wait()
                continue
            self.close("the client read none of its output within the stall timeout")
        if self._closed:
            raise anyio.ClosedResourceError
