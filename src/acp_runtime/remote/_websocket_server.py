"""The WebSocket server: an ASGI application serving one ACP connection per socket.

It speaks the wire of the TypeScript SDK 2.4.0 server: the ``101`` carries
``Acp-Connection-Id``, one JSON-RPC message per text frame, binary frames ignored, the
first message must be an ``initialize`` request (else close 1002), invalid JSON before it
gets ``-32700`` and an array ``-32600`` (both with ``id: null``, the socket kept), a
second ``initialize`` ``-32600``, a frame over the size limit closes with 1008, a failing
handler with 1011, and :meth:`WebSocketApp.aclose` (or the ASGI lifespan shutdown) with
1001. A peer that does not take a frame within the stall timeout (it stopped reading and the
server's send buffer is full) is closed with 1008 and its connection settled, as the TS
server does after ``maxOutputStallMs``; a socket with no frame either way for the idle
timeout (off by default) is closed with 1001. Before any of it the upgrade passes
:mod:`.admission`: a foreign ``Origin`` (or, on loopback, ``Host``) gets 403, an oversized
head 431, one socket past ``max_connections`` 503, and a socket that sends no
``initialize`` in time is closed with 1008. No framework: the ASGI message protocol
directly, so it runs under any ASGI server, on asyncio and trio.

The same app also serves on a listening socket of its own (:meth:`WebSocketApp.serve`,
:func:`serve_websocket`; :mod:`.websocket_listener`), with the same rules and no ASGI
server's layers per frame.
"""

from __future__ import annotations

import json
import logging
import math
import uuid
from collections.abc import Iterable, Mapping, Sequence
from typing import Final, TypedDict, cast

import anyio
import anyio.abc
from typing_extensions import Unpack

from .._framing import DEFAULT_MAX_MESSAGE_BYTES
from .._transport import Transport
from ._admission import (
    DEFAULT_INITIALIZE_TIMEOUT,
    DEFAULT_MAX_CONNECTIONS,
    DEFAULT_MAX_HEADER_BYTES,
    DEFAULT_MAX_HEADERS,
    SERVER_FULL,
    Admission,
)
from ._asgi import (
    STATUS_TEXT,
    Headers,
    Receive,
    Scope,
    Send,
    challenge_headers,
    plain_response,
    scope_headers,
    serve_lifespan,
)
from ._serving import Authenticate, HandlerFactory, Refusal, Servable, refusal, servable
from ._websocket_frames import (
    CLOSE_GOING_AWAY,
    CLOSE_INTERNAL_ERROR,
    CLOSE_NORMAL,
    CLOSE_POLICY_VIOLATION,
    CLOSE_PROTOCOL_ERROR,
)
from ._websocket_rules import (
    CONNECTION_ID_HEADER,
    UPGRADE_REQUIRED_TEXT,
    AcpSocket,
    InitializedTransport,
    compact,
    stall_or_idle,
)

__all__ = [
    "Authenticate",
    "HandlerFactory",
    "Servable",
    "WebSocketApp",
    "serve_websocket",
    "websocket_app",
]

log = logging.getLogger(__name__)

DEFAULT_STALL_TIMEOUT: Final = 60.0
"""Seconds a frame may wait for the peer to read (the TS server's ``maxOutputStallMs``)."""

STALLED_CLOSE_TIMEOUT: Final = 5.0
"""Seconds a stalled or idle socket's close frame may wait to be taken."""


PARSE_ERROR_FRAME: Final = compact(
    {"jsonrpc": "2.0", "id": None, "error": {"code": -32700, "message": "Parse error"}}
)
BATCH_ERROR_FRAME: Final = compact(
    {
        "jsonrpc": "2.0",
        "id": None,
        "error": {"code": -32600, "message": "Invalid request: JSON-RPC batches are not supported"},
    }
)


class WebSocketApp:
    """ASGI 3 application: ``websocket`` scopes on ``path`` are ACP connections.

    A plain HTTP request to ``path`` gets 426 (Upgrade Required), any other path 404.
    :meth:`serve` runs it on a listening socket of its own instead.
    """

    def __init__(
        self,
        handler_factory: HandlerFactory,
        *,
        path: str | None = "/acp",
        max_message_bytes: int = DEFAULT_MAX_MESSAGE_BYTES,
        authenticate: Authenticate | None = None,
        stall_timeout: float | None = DEFAULT_STALL_TIMEOUT,
        idle_timeout: float | None = None,
        admission: Admission | None = None,
    ) -> None:
        self._factory = handler_factory
        self.path = path
        self.max_message_bytes = max_message_bytes
        self.authenticate = authenticate
        self.stall_timeout = stall_timeout
        self.idle_timeout = idle_timeout
        self.admission = admission or Admission()
        """The header limits, the Origin and Host checks, the connection cap and the
        ``initialize`` deadline (shared with the HTTP app under ``acp_app``)."""
        self._sockets: set[AcpSocket] = set()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        kind = scope["type"]
        if kind == "lifespan":
            await serve_lifespan(receive, send, self.aclose)
        elif kind == "http":
            if not self.on_path(scope.get("path", "")):
                await plain_response(send, 404, "Not found\n")
            else:
                await plain_response(send, 426, UPGRADE_REQUIRED_TEXT)
        elif kind == "websocket":
            await self._websocket(scope, receive, send)

    def on_path(self, path: str) -> bool:
        """Whether a request for ``path`` is this app's (any is, when ``path`` is None)."""
        return self.path is None or path == self.path

    async def aclose(self) -> None:
        """Close every open socket with 1001 ``Server shutting down``."""
        for socket in list(self._sockets):
            await socket.close(CLOSE_GOING_AWAY, "Server shutting down")

    async def serve(
        self,
        host: str = "127.0.0.1",
        port: int = 8000,
        *,
        task_status: anyio.abc.TaskStatus[int] = anyio.TASK_STATUS_IGNORED,
    ) -> None:
        """Serve on a listening socket of its own, with no ASGI server, until cancelled
        (every open socket then closes with 1001); ``task_status.started`` gets the port
        bound (``port=0`` picks a free one: ``port = await tg.start(app.serve, host, 0)``;
        give an address, not a name that resolves to several, or on asyncio each address
        may get its own free port).

        Same wire and rules as mounted, without an ASGI server's layers on every frame.
        It speaks plain ``ws://``: put TLS in a reverse proxy in front (or mount the app
        in an ASGI server that terminates it). Needs the ``http`` extra (h11, wsproto).
        """
        from ._websocket_listener import listen  # h11 only for who serves without ASGI

        await listen(self, host, port, task_status)

    async def _websocket(self, scope: Scope, receive: Receive, send: Send) -> None:
        connect = await receive()
        if connect["type"] != "websocket.connect":
            return
        admission = self.admission
        head = admission.refusal(scope.get("headers") or (), scope.get("server"))
        if head is not None:
            await _deny(scope, send, head.status, head.text, extra=head.headers)
            return
        if not self.on_path(scope.get("path", "")):
            await _deny(scope, send, 404, "Not found\n")
            return
        refused = await refusal(self.authenticate, scope_headers(scope))
        if refused is not None:
            await _deny(scope, send, refused.status, STATUS_TEXT[refused.status], refused)
            return
        if not admission.take_slot():
            full = SERVER_FULL
            await _deny(scope, send, full.status, full.text, extra=full.headers)
            return
        try:
            connection_id = str(uuid.uuid4())
            await send(
                {
                    "type": "websocket.accept",
                    "headers": [(CONNECTION_ID_HEADER, connection_id.encode())],
                }
            )
            socket = _Socket(
                receive,
                send,
                self.max_message_bytes,
                stall_timeout=self.stall_timeout,
                idle_timeout=self.idle_timeout,
            )
            await self.run(socket)
        finally:
            admission.release_slot()

    async def run(self, socket: AcpSocket) -> None:
        """Serve one accepted socket until its connection ends, watched for stalls and
        idleness, and closed with the code that says how it ended."""
        self._sockets.add(socket)
        try:
            async with anyio.create_task_group() as watchers:
                watchers.start_soon(socket.watch)
                await self._serve(socket)
                watchers.cancel_scope.cancel()
        finally:
            self._sockets.discard(socket)

    async def _serve(self, socket: AcpSocket) -> None:
        try:
            deadline = self.admission.initialize_timeout
            first: bytes | None = None
            with anyio.move_on_after(deadline) as waiting:  # None: no deadline
                first = await _first_initialize(socket)
            if waiting.cancelled_caught:
                log.info("no initialize within %s s: closing", deadline)
                await socket.close(CLOSE_POLICY_VIOLATION, f"No initialize within {deadline:g} s")
                return
            if first is None:
                return
            made = servable(self._factory())
            with socket.serve_scope:  # a stalled peer ends the connection from outside
                await made.serve(socket.transport(first))
        except Exception:
            log.exception("ACP WebSocket connection failed")
            await socket.close(CLOSE_INTERNAL_ERROR, "Internal error")
            return
        except BaseException:  # cancelled: the server is going away
            await socket.close(CLOSE_GOING_AWAY, "Server shutting down")
            raise
        await socket.close(CLOSE_NORMAL, None)


def websocket_app(
    handler_factory: HandlerFactory,
    *,
    path: str | None = "/acp",
    max_message_bytes: int = DEFAULT_MAX_MESSAGE_BYTES,
    authenticate: Authenticate | None = None,
    stall_timeout: float | None = DEFAULT_STALL_TIMEOUT,
    idle_timeout: float | None = None,
    allowed_origins: Iterable[str] | None = None,
    allowed_hosts: Iterable[str] | None = None,
    max_connections: int | None = DEFAULT_MAX_CONNECTIONS,
    initialize_timeout: float | None = DEFAULT_INITIALIZE_TIMEOUT,
    max_header_bytes: int = DEFAULT_MAX_HEADER_BYTES,
    max_headers: int = DEFAULT_MAX_HEADERS,
) -> WebSocketApp:
    """An ASGI application serving ACP over WebSocket at ``path`` (None: every path).

    ``handler_factory`` is called once per socket, so every connection gets fresh state.
    ``authenticate(headers)`` (sync or async) refuses the upgrade with 403 when it returns
    False, or with a :class:`~acp_runtime.remote.Refusal`'s status; the answer never
    echoes what was sent. ``max_message_bytes`` bounds each
    incoming frame (1008 past it); set the ASGI server's own limit at least as high
    (hypercorn: ``websocket_max_message_size``, 16 MiB by default).

    ``stall_timeout`` (seconds, None: never) closes a socket with 1008 when a frame waits
    that long for the peer to read, and settles its connection (its pending requests fail
    as closed), so a client that stopped reading holds no handler. ``idle_timeout``
    (seconds, None: never, the default) closes a socket with 1001 when no frame went
    either way for that long; a quiet prompt turn counts as idle, so set it above the
    longest silence a turn may have.

    Safe by default on the network (docs/remote-agents.md, "Origin, Host and caps"): an
    upgrade with a foreign ``Origin``, or on a loopback address a foreign ``Host``, is
    refused with 403 (``allowed_origins`` and ``allowed_hosts`` add to what passes, ``"*"``
    lets all); a head over ``max_header_bytes`` or ``max_headers`` lines with 431; past
    ``max_connections`` open sockets (None: no cap) the upgrade gets 503; a socket that
    sends no ``initialize`` within ``initialize_timeout`` seconds is closed with 1008.
    """
    admission = Admission(
        allowed_origins=allowed_origins,
        allowed_hosts=allowed_hosts,
        max_connections=max_connections,
        initialize_timeout=initialize_timeout,
        max_header_bytes=max_header_bytes,
        max_headers=max_headers,
    )
    return WebSocketApp(
        handler_factory,
        path=path,
        max_message_bytes=max_message_bytes,
        authenticate=authenticate,
        stall_timeout=stall_timeout,
        idle_timeout=idle_timeout,
        admission=admission,
    )


class WebSocketOptions(TypedDict, total=False):
    """:func:`websocket_app`'s keyword arguments, for :func:`serve_websocket`."""

    path: str | None
    max_message_bytes: int
    authenticate: Authenticate | None
    stall_timeout: float | None
    idle_timeout: float | None
    allowed_origins: Iterable[str] | None
    allowed_hosts: Iterable[str] | None
    max_connections: int | None
    initialize_timeout: float | None
    max_header_bytes: int
    max_headers: int


async def serve_websocket(
    handler_factory: HandlerFactory,
    *,
    host: str = "127.0.0.1",
    port: int = 8000,
    task_status: anyio.abc.TaskStatus[int] = anyio.TASK_STATUS_IGNORED,
    **options: Unpack[WebSocketOptions],
) -> None:
    """Serve ACP over WebSocket on ``host:port`` with no ASGI server, until cancelled.

    :func:`websocket_app` with ``options`` (its keyword arguments), then
    :meth:`WebSocketApp.serve`: the same wire and rules, and the fastest way to serve an
    agent over WebSocket (no ASGI server's layers on every frame).
    ``task_status.started`` gets the port bound, so ``port=0`` with
    ``await tg.start(partial(serve_websocket, factory, port=0))`` serves on a free one.
    """
    app = websocket_app(handler_factory, **options)
    await app.serve(host, port, task_status=task_status)


async def _deny(
    scope: Scope,
    send: Send,
    status: int,
    text: str,
    refused: Refusal | None = None,
    *,
    extra: Headers = (),
) -> None:
    """Refuse the upgrade with an HTTP status (the ASGI denial extension), or with the
    server's default (403) where it lacks the extension."""
    extensions: Mapping[str, object] = scope.get("extensions") or {}
    if "websocket.http.response" not in extensions:
        await send({"type": "websocket.close", "code": CLOSE_POLICY_VIOLATION})
        return
    headers = (*challenge_headers(refused), *extra)
    await plain_response(send, status, text, event="websocket.http.response", headers=headers)


class _Socket:
    """One accepted socket: whole text frames in, text frames out, one close.

    :meth:`watch` runs beside it and ends it when the peer stalls (a frame waiting for the
    peer to read longer than ``stall_timeout``) or when it is idle (no frame either way for
    ``idle_timeout``): the receive waiting gets EOF, so the connection settles what is
    pending, a send waiting is cancelled where the server lets it be (hypercorn on trio
    finishes its writes shielded), and the close says why (1008, or 1001).

    A frame costs no clock read, no lock and (unless there is an idle timeout to enforce)
    no cancel scope on the way in: the watcher reads counters, and sends take turns
    through a flag that only waits when another send is under way. A burst of frames
    (:meth:`send_texts`) is one turn and one cancel scope.
    """

    def __init__(
        self,
        receive: Receive,
        send: Send,
        max_message_bytes: int,
        *,
        stall_timeout: float | None = None,
        idle_timeout: float | None = None,
    ) -> None:
        self._receive = receive
        self._send = send
        self._max = max_message_bytes
        self._stall_timeout = stall_timeout
        self._idle_timeout = idle_timeout
        self._sending = False  # a send is under way: others wait for their turn
        self._turn: anyio.Event | None = None  # set when the send under way ends
        self._sends = 0  # turns taken and frames sent: the watcher tells progress by it
        self._frames = 0  # frames either way: the watcher's idle clock
        self._closed = False
        self._disconnected = False
        self._ended: tuple[int, str] | None = None  # (code, reason) once stalled or idle
        self._receive_scope: anyio.CancelScope | None = None
        self._send_scope: anyio.CancelScope | None = None
        self.serve_scope = anyio.CancelScope()
        """Where the app serves the connection: cancelled on a stall, whose writer may be
        stuck (and whose reader paused behind the outbox's high-water mark)."""

    async def watch(self) -> None:
        ended = await stall_or_idle(
            lambda: (self._sending, self._sends, self._frames),
            self._stall_timeout,
            self._idle_timeout,
            self.serve_scope,
        )
        if ended is not None:
            self._end(*ended)

    def _end(self, code: int, reason: str) -> None:
        self._ended = (code, reason)
        for scope in (self._receive_scope, self._send_scope):
            if scope is not None:
                scope.cancel()

    async def receive(self) -> bytes:
        """The next text frame; EOF when the peer has gone or the socket was closed."""
        while True:
            if self._disconnected or self._ended is not None:
                raise anyio.EndOfStream
            if self._idle_timeout is None:  # a stall cancels the whole serve scope
                message = await self._receive()
            else:
                message = await self._receive_until_idle()
            kind = message["type"]
            if kind == "websocket.disconnect":
                self._disconnected = True
                raise anyio.EndOfStream
            if kind != "websocket.receive":
                continue
            self._frames += 1
            text = cast("str | None", message.get("text"))
            if text is None:
                log.warning("ignoring a binary ACP WebSocket frame")
                continue
            if self._closed:
                continue  # closing: wait for the peer's disconnect
            data = text.encode()
            if len(data) > self._max:
                log.warning("incoming frame over %d bytes: closing", self._max)
                await self.close(CLOSE_POLICY_VIOLATION, f"Message exceeds {self._max} bytes")
                continue
            return data

    async def _receive_until_idle(self) -> Mapping[str, object]:
        """``receive``, which the watcher may end (EOF) when the socket is idle."""
        message: Mapping[str, object] | None = None
        with anyio.CancelScope() as self._receive_scope:
            message = await self._receive()
        self._receive_scope = None
        if message is None or self._ended is not None:
            raise anyio.EndOfStream
        return message

    async def send_text(self, text: str) -> None:
        await self.send_texts((text,))

    async def send_texts(self, texts: Sequence[str]) -> None:
        """Each text as one frame, in order, in one turn."""
        await self._take_turn()
        try:
            if self._closed or self._ended is not None:
                raise anyio.ClosedResourceError
            if self._stall_timeout is None:
                await self._send_all(texts)
            else:
                with anyio.CancelScope() as self._send_scope:
                    await self._send_all(texts)
            self._frames += 1
            if self._ended is not None:  # stalled: the frame may be cut off
                raise anyio.BrokenResourceError
        except OSError as exc:  # the ASGI server reports a gone peer this way
            raise anyio.BrokenResourceError from exc
        finally:
            self._send_scope = None
            self._give_turn()

    async def _send_all(self, texts: Sequence[str]) -> None:
        send = self._send
        for text in texts:
            await send({"type": "websocket.send", "text": text})
            self._sends += 1  # a peer reading a long burst slowly is not stalled

    async def _take_turn(self) -> None:
        while self._sending:
            if self._turn is None:
                self._turn = anyio.Event()
            await self._turn.wait()
        self._sending = True
        self._sends += 1  # a new turn (the close's too) starts its own stall clock

    def _give_turn(self) -> None:
        self._sending = False
        turn, self._turn = self._turn, None
        if turn is not None:
            turn.set()

    def transport(self, first: bytes) -> Transport:
        return _SocketTransport(self, first)

    async def close(self, code: int, reason: str | None) -> None:
        """Send the close frame once; a socket ended by :meth:`watch` says why instead.
        A stalled peer may never take the frame: the wait for it is bounded."""
        if self._ended is not None:
            code, reason = self._ended
        with anyio.CancelScope(shield=True):
            with anyio.move_on_after(STALLED_CLOSE_TIMEOUT if self._ended else math.inf):
                await self._take_turn()
                try:
                    if self._closed or self._disconnected:
                        self._closed = True
                        return
                    self._closed = True
                    message: dict[str, object] = {"type": "websocket.close", "code": code}
                    if reason:
                        message["reason"] = reason
                    try:
                        await self._send(message)
                    except Exception:  # the peer is gone already
                        log.debug("close frame not sent", exc_info=True)
                finally:
                    self._give_turn()
            self._closed = True


async def _first_initialize(socket: AcpSocket) -> bytes | None:
    """Read until the first ``initialize`` request (as TS 2.4.0 does): unparsable frames,
    arrays and non-objects are answered and skipped, answers dropped; anything else
    closes with 1002. None when the socket ended first."""
    while True:
        try:
            data = await socket.receive()
        except anyio.EndOfStream:
            return None
        try:
            value: object = json.loads(data, parse_constant=_reject_constant)
        except ValueError:
            await socket.send_text(PARSE_ERROR_FRAME)
            continue
        if isinstance(value, list):
            await socket.send_text(BATCH_ERROR_FRAME)
            continue
        if not isinstance(value, dict):
            await socket.send_text(_invalid_request_frame(value))
            continue
        value = cast("dict[str, object]", value)
        if "method" not in value and ("id" in value or "result" in value or "error" in value):
            continue  # an answer to nothing: dropped
        if not _is_request_or_notification(value):
            await socket.send_text(_invalid_request_frame(value))
            continue
        if value.get("method") != "initialize" or "id" not in value:
            await socket.close(CLOSE_PROTOCOL_ERROR, "First message must be initialize")
            return None
        if value["id"] is None:
            await socket.close(CLOSE_PROTOCOL_ERROR, "Initialize request must include an ID")
            return None
        return data


def _reject_constant(name: str) -> object:
    """``NaN`` and ``Infinity`` are not JSON (Python accepts them, JavaScript does not)."""
    raise ValueError(f"{name} is not JSON")


def _is_request_or_notification(value: dict[str, object]) -> bool:
    """JSON-RPC 2.0 envelope, a string method, and (for a request) an id that is a string,
    a finite number or null: the TS server's test, so the same frames pass it."""
    if value.get("jsonrpc") != "2.0" or not isinstance(value.get("method"), str):
        return False
    if "id" not in value:
        return True
    request_id = value["id"]
    if isinstance(request_id, bool):
        return False
    if isinstance(request_id, float):
        return math.isfinite(request_id)
    return request_id is None or isinstance(request_id, (str, int))


def _invalid_request_frame(data: object) -> str:
    error = {"code": -32600, "message": "Invalid request", "data": data}
    return compact({"jsonrpc": "2.0", "id": None, "error": error})


class _SocketTransport(InitializedTransport):
    """Sends as ASGI events: text frames, a burst in one turn of the socket."""

    def __init__(self, socket: _Socket, first: bytes) -> None:
        super().__init__(socket, first)
        self._asgi_socket = socket

    async def send(self, message: bytes) -> None:
        await self._asgi_socket.send_text(message.decode())

    async def send_many(self, messages: Sequence[bytes]) -> None:
        """A burst of queued messages, a frame each, in one turn of the socket."""
        await self._asgi_socket.send_texts([message.decode() for message in messages])
