"""ACP over WebSocket on a listening socket of its own: :meth:`WebSocketApp.serve`.

Under an ASGI server every frame pays for the server's layers (``python -m
bench.asgi_floor``: 134-151 µs of server CPU per echoed frame under uvicorn or hypercorn
with the least app, about what the whole TS server spends per ``session/prompt``). Here
the runtime runs on the socket (:mod:`.websocket_socket`, the client's transport turned
around): on asyncio a frame is parsed in the readiness callback and offered to the connection's
eager receiver, an answer written from ``send_nowait``; on other backends (trio) the
connection's reader awaits the stream.

The upgrade request is read with h11 and answered as the app answers under ASGI: 101
with ``Acp-Connection-Id``, 404 off the path, 426 for plain HTTP, 431 for a head over the
header limits and 403 for a foreign ``Origin`` or ``Host`` (:mod:`.admission`, judged by
the socket's local address), the ``authenticate`` hook's 401/403, 503 past
``max_connections``, 400 for a malformed request. After it the app's own rules run
(:meth:`WebSocketApp.run`): first frame ``initialize``, -32700/-32600, limits, stalls,
idleness and the close codes.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import errno
import http
import logging
import urllib.parse
import uuid
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Final

import anyio
import anyio.abc
import h11
from wsproto.utilities import generate_accept_token

from .._framing import EagerReceiver
from .._log_throttle import peer_log
from .._loop import in_asyncio_task
from .._transport import Transport
from ._admission import SERVER_FULL
from ._asgi import STATUS_TEXT, Headers, challenge_headers, header_map
from ._serving import refusal
from ._websocket_frames import CLOSE_NORMAL
from ._websocket_handshake import Accepted
from ._websocket_rules import (
    CONNECTION_ID_HEADER,
    UPGRADE_REQUIRED_TEXT,
    InitializedTransport,
    ServedApp,
    stall_or_idle,
)
from ._websocket_socket import (
    HandshakeProtocol,
    LoopWebSocket,
    StreamWebSocket,
    WebSocketTransport,
    stream_reader,
)

log = logging.getLogger(__name__)

HANDSHAKE_TIMEOUT: Final = 10.0
"""Seconds a new socket has to send its whole upgrade request (a silent one is dropped)."""

ACCEPT_PAUSE: Final = 0.1
"""Seconds the listener waits before accepting again when out of file descriptors."""

OUT_OF_RESOURCES: Final = frozenset({errno.EMFILE, errno.ENFILE, errno.ENOBUFS, errno.ENOMEM})
"""``accept`` errnos that pass once sockets close: pause and retry, not end the listener."""


async def listen(
    app: ServedApp, host: str, port: int, task_status: anyio.abc.TaskStatus[int]
) -> None:
    """Serve ``app`` on ``host:port`` until cancelled; started with the port bound."""
    if in_asyncio_task():
        await _listen_on_loop(app, host, port, task_status)
    else:
        await _listen_on_streams(app, host, port, task_status)


@dataclass(frozen=True, slots=True)
class _Upgrade:
    """How a socket's upgrade request was answered."""

    answer: bytes
    """The 101, or the refusal to write before closing."""
    accepted: Accepted | None = None
    """The socket's ``Acp-Connection-Id`` and the first frames behind the request head;
    None when refused."""


async def _read_upgrade(
    app: ServedApp, read: Callable[[], Awaitable[bytes]], local: object
) -> _Upgrade | None:
    """Read a new socket's request head and decide; None when the peer left, or sent no
    whole head within :data:`HANDSHAKE_TIMEOUT`. ``local`` is the socket's own address
    (where the request came in, for the Host and Origin checks). An accepted upgrade has
    taken one of ``app.admission``'s connection slots: the caller releases it."""
    admission = app.admission
    max_head = admission.max_header_bytes
    parser = h11.Connection(h11.SERVER, max_incomplete_event_size=max_head)
    request: h11.Request | None = None
    received = 0
    with anyio.move_on_after(HANDSHAKE_TIMEOUT):
        while request is None:
            try:
                event = parser.next_event()
            except h11.RemoteProtocolError as exc:
                return _refused(exc.error_status_hint, "Bad request\n")
            if event is h11.NEED_DATA:
                data = await read()
                if not data:
                    return None
                received += len(data)
                parser.receive_data(data)
            elif isinstance(event, h11.Request):
                request = event
            else:
                return None
    if request is None:
        return None
    if received - len(parser.trailing_data[0]) > max_head:  # h11 checks partial heads
        return _refused(431, "Request header fields too large\n")
    path = urllib.parse.unquote(request.target.partition(b"?")[0].decode("latin-1"))
    if not app.on_path(path):  # percent-decoded, as ASGI servers give a scope's path
        return _refused(404, "Not found\n")
    headers = header_map(request.headers)
    if not _asks_for_websocket(request.method, headers):
        return _refused(426, UPGRADE_REQUIRED_TEXT)
    if headers.get("sec-websocket-version") != "13":
        return _refused(426, "WebSocket version 13 only\n", ((b"sec-websocket-version", b"13"),))
    key = headers.get("sec-websocket-key", "")
    if not _valid_key(key):
        return _refused(400, "Bad Sec-WebSocket-Key\n")
    head = admission.refusal(request.headers, local)  # where ASGI servers call the app
    if head is not None:
        return _refused(head.status, head.text, head.headers)
    refused = await refusal(app.authenticate, headers)
    if refused is not None:
        return _refused(refused.status, STATUS_TEXT[refused.status], challenge_headers(refused))
    if not admission.take_slot():
        return _refused(SERVER_FULL.status, SERVER_FULL.text, SERVER_FULL.headers)
    connection_id = str(uuid.uuid4())
    answer = (
        b"HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
        b"Sec-WebSocket-Accept: " + generate_accept_token(key.encode()) + b"\r\n"
        b"Acp-Connection-Id: " + connection_id.encode() + b"\r\n\r\n"
    )
    accepted = Accepted({CONNECTION_ID_HEADER.decode(): connection_id}, parser.trailing_data[0])
    return _Upgrade(answer, accepted)


async def _upgrade_or_none(
    app: ServedApp, read: Callable[[], Awaitable[bytes]], local: object
) -> _Upgrade | None:
    """:func:`_read_upgrade`, where nothing one socket sends can end the listener: a
    failure reading it (the peer gone, or a bug) drops that socket alone."""
    try:
        return await _read_upgrade(app, read, local)
    except (anyio.BrokenResourceError, anyio.ClosedResourceError, OSError):
        return None
    except Exception:
        log.exception("reading a WebSocket upgrade request failed")
        return None


def _asks_for_websocket(method: bytes, headers: dict[str, str]) -> bool:
    """A GET with ``Connection: upgrade`` and ``Upgrade: websocket`` (tokens, any case)."""
    return (
        method == b"GET"
        and "upgrade" in _tokens(headers.get("connection", ""))
        and "websocket" in _tokens(headers.get("upgrade", ""))
    )


def _tokens(value: str) -> set[str]:
    return {token.strip().lower() for token in value.split(",")}


def _valid_key(key: str) -> bool:
    """RFC 6455 4.2.1: the key is 16 bytes, base64-encoded."""
    try:
        return len(base64.b64decode(key, validate=True)) == 16
    except ValueError:  # binascii.Error, or text that is not ASCII
        return False


def _refused(status: int, text: str, headers: Headers = ()) -> _Upgrade:
    body = text.encode()
    lines = [
        f"HTTP/1.1 {status} {http.HTTPStatus(status).phrase}".encode(),
        b"Content-Type: text/plain; charset=utf-8",
        b"Content-Length: " + str(len(body)).encode(),
        b"Connection: close",
        *(name + b": " + value for name, value in headers),
    ]
    return _Upgrade(b"\r\n".join(lines) + b"\r\n\r\n" + body)


# -- asyncio: the socket's protocol parses ------------------------------------------------


class _Accepting(HandshakeProtocol):
    """A new socket's protocol until its upgrade is read: announces itself when made."""

    def __init__(self, made: Callable[[asyncio.Transport, HandshakeProtocol], None]) -> None:
        super().__init__()
        self._made = made

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.Transport)
        super().connection_made(transport)
        self._made(transport, self)


async def _listen_on_loop(
    app: ServedApp, host: str, port: int, task_status: anyio.abc.TaskStatus[int]
) -> None:
    loop = asyncio.get_running_loop()
    async with anyio.create_task_group() as sockets:

        def made(transport: asyncio.Transport, handshake: HandshakeProtocol) -> None:
            sockets.start_soon(_serve_on_loop, app, transport, handshake)

        server = await loop.create_server(lambda: _Accepting(made), host, port)
        try:
            task_status.started(server.sockets[0].getsockname()[1])
            await anyio.sleep_forever()
        finally:
            server.close()  # the cancellation ends each socket's task (1001)


async def _serve_on_loop(
    app: ServedApp, transport: asyncio.Transport, handshake: HandshakeProtocol
) -> None:
    upgrade: _Upgrade | None = None
    try:
        try:
            local = transport.get_extra_info("sockname")
            upgrade = await _upgrade_or_none(app, handshake.read, local)
            if upgrade is not None:
                transport.write(upgrade.answer)
            if upgrade is None or upgrade.accepted is None:
                transport.close()
                return
            raw = LoopWebSocket(
                app.max_message_bytes, upgrade.accepted, transport, handshake, server=True
            )
        except BaseException:
            transport.abort()
            raise
        await _serve_socket(app, raw)
    finally:
        if upgrade is not None and upgrade.accepted is not None:
            app.admission.release_slot()


# -- any backend: the connection's reader awaits the stream -------------------------------


async def _listen_on_streams(
    app: ServedApp, host: str, port: int, task_status: anyio.abc.TaskStatus[int]
) -> None:
    listener = await anyio.create_tcp_listener(local_host=host, local_port=port)
    async with listener, anyio.create_task_group() as sockets:
        task_status.started(listener.extra(anyio.abc.SocketAttribute.local_port))
        for one in listener.listeners:  # one per address ``host`` resolves to
            assert isinstance(one, anyio.abc.SocketListener)
            sockets.start_soon(_accept_forever, app, one, sockets)


async def _accept_forever(
    app: ServedApp, listener: anyio.abc.SocketListener, sockets: anyio.abc.TaskGroup
) -> None:
    """Accept forever; out of fds, pause and retry (as asyncio and trio's serve_listeners do)."""
    while True:
        try:
            stream = await listener.accept()
        except (anyio.BrokenResourceError, OSError) as exc:
            if not _out_of_resources(exc):
                raise
            reason = exc.__cause__ or exc
            peer_log.log(log, logging.WARNING, "accepting a socket failed (%s); retrying", reason)
            await anyio.sleep(ACCEPT_PAUSE)
            continue
        sockets.start_soon(_serve_stream, app, stream)


def _out_of_resources(exc: BaseException) -> bool:
    return any(
        isinstance(error, OSError) and error.errno in OUT_OF_RESOURCES
        for error in (exc, exc.__cause__, exc.__context__)
    )


async def _serve_stream(app: ServedApp, stream: anyio.abc.SocketStream) -> None:
    async with stream:
        read = stream_reader(stream)
        local = stream.extra(anyio.abc.SocketAttribute.local_address, None)
        upgrade = await _upgrade_or_none(app, read, local)
        if upgrade is None or upgrade.accepted is None:
            if upgrade is not None:
                with contextlib.suppress(
                    anyio.BrokenResourceError, anyio.ClosedResourceError, OSError
                ):
                    await stream.send(upgrade.answer)
            return
        try:
            try:
                await stream.send(upgrade.answer)
            except (anyio.BrokenResourceError, anyio.ClosedResourceError, OSError):
                return
            raw = StreamWebSocket(
                app.max_message_bytes,
                upgrade.accepted,
                read,
                stream.send,
                stream.aclose,
                server=True,
            )
            await _serve_socket(app, raw)
        finally:
            app.admission.release_slot()


async def _serve_socket(app: ServedApp, raw: WebSocketTransport) -> None:
    """Run the app's rules on ``raw``; nothing one socket does ends the listener."""
    socket = _DirectSocket(raw, app.stall_timeout, app.idle_timeout)
    try:
        await app.run(socket)
    except Exception:
        log.exception("ACP WebSocket socket failed")
    finally:
        await socket.close(CLOSE_NORMAL, None)  # done already unless the peer left first


# -- the ACP rules' view ------------------------------------------------------------------


class _DirectSocket:
    """An :class:`~.websocket_rules.AcpSocket` on the socket itself: what ``_Socket`` is
    under an ASGI server."""

    def __init__(
        self, raw: WebSocketTransport, stall_timeout: float | None, idle_timeout: float | None
    ) -> None:
        self.raw = raw
        self._stall_timeout = stall_timeout
        self._idle_timeout = idle_timeout
        self._ended: tuple[int, str] | None = None
        self.serve_scope = anyio.CancelScope()

    async def receive(self) -> bytes:
        try:
            return await self.raw.receive()
        except anyio.BrokenResourceError:  # gone without a close frame: gone all the same
            raise anyio.EndOfStream from None

    async def send_text(self, text: str) -> None:
        await self.raw.send(text.encode())

    async def close(self, code: int, reason: str | None) -> None:
        if self._ended is not None:
            code, reason = self._ended
        await self.raw.close(code, reason)

    async def watch(self) -> None:
        raw = self.raw
        ended = await stall_or_idle(
            lambda: (*raw.output_waiting(), raw.activity),
            self._stall_timeout,
            self._idle_timeout,
            self.serve_scope,
        )
        if ended is None:
            return
        self._ended = ended
        # The close frame, then the socket: a receive waiting gets EOF, a write waiting
        # for a peer that reads nothing fails once the socket is dropped.
        await raw.close(*ended)

    def transport(self, first: bytes) -> Transport:
        if isinstance(self.raw, LoopWebSocket):
            return _EagerDirectTransport(self, self.raw, first)
        return _DirectTransport(self, first)


class _DirectTransport(InitializedTransport):
    """Sends straight to the socket's frames."""

    def __init__(self, socket: _DirectSocket, first: bytes) -> None:
        super().__init__(socket, first)
        self._raw = socket.raw

    async def send(self, message: bytes) -> None:
        await self._raw.send(message)

    async def send_many(self, messages: Sequence[bytes]) -> None:
        await self._raw.send_many(messages)


class _EagerDirectTransport(_DirectTransport):
    """On asyncio: messages offered to the connection as they are parsed, and written
    without a turn of the writer while the socket's buffer takes them."""

    def __init__(self, socket: _DirectSocket, raw: LoopWebSocket, first: bytes) -> None:
        super().__init__(socket, first)
        self._loop_socket = raw  # socket.raw, typed as the asyncio path
        self.send_nowait: Callable[[bytes], bool] = raw.send_nowait

    def set_eager_receiver(self, receiver: EagerReceiver | None) -> bool:
        """Offer parsed messages to ``receiver``, except an ``initialize`` (which
        :meth:`receive` answers)."""
        if receiver is None:
            return self._loop_socket.set_eager_receiver(None)

        def offer(data: bytes) -> bool:
            return data.find(b'"initialize"') < 0 and receiver(data)

        return self._loop_socket.set_eager_receiver(offer)
