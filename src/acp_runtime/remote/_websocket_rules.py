"""What the WebSocket server's two ways of serving share (mounted under an ASGI server, or
on its own listener): the socket as the ACP rules see it, the stall and idle watch, the
connection's view after ``initialize``, and what the listener needs of the app."""

from __future__ import annotations

import json
import logging
from collections.abc import Callable
from typing import Final, Protocol, cast

import anyio

from .._transport import Transport
from ._admission import Admission
from ._serving import Authenticate
from ._websocket_frames import CLOSE_GOING_AWAY, CLOSE_POLICY_VIOLATION

log = logging.getLogger(__name__)

CONNECTION_ID_HEADER: Final = b"acp-connection-id"

UPGRADE_REQUIRED_TEXT: Final = "This endpoint speaks ACP over WebSocket: send an upgrade.\n"


def compact(value: object) -> str:
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


class AcpSocket(Protocol):
    """One accepted socket as the ACP rules see it, under an ASGI server or on its own."""

    serve_scope: anyio.CancelScope
    """Where the connection is served: cancelled when the peer stalls."""

    async def receive(self) -> bytes:
        """The next text frame; EOF when the peer has gone or the socket was closed."""
        ...

    async def send_text(self, text: str) -> None: ...

    async def close(self, code: int, reason: str | None) -> None:
        """Close once (later calls do nothing), with why the socket ended if it stalled
        or idled."""
        ...

    async def watch(self) -> None:
        """End the socket when it stalls or idles; cancelled once its connection is over."""
        ...

    def transport(self, first: bytes) -> Transport:
        """The connection's transport: ``first`` (the ``initialize`` frame), then the rest."""
        ...


class ServedApp(Protocol):
    """What :mod:`.websocket_listener` needs of a :class:`~.websocket_server.WebSocketApp`."""

    max_message_bytes: int
    authenticate: Authenticate | None
    admission: Admission
    stall_timeout: float | None
    idle_timeout: float | None

    def on_path(self, path: str) -> bool: ...

    async def run(self, socket: AcpSocket) -> None: ...


async def stall_or_idle(
    probe: Callable[[], tuple[bool, int, int]],
    stall_timeout: float | None,
    idle_timeout: float | None,
    serve_scope: anyio.CancelScope,
) -> tuple[int, str] | None:
    """Poll a socket until it stalls or idles, and say how to close it (code, reason);
    None at once when neither timeout is set. A stall also cancels ``serve_scope``: the
    connection's writer may be stuck, and its reader paused behind the outbox.

    ``probe()`` is (a write waits for the peer, a count that moves whenever the peer takes
    some, a count of frames either way). It is read every twentieth of the shorter
    timeout, so a socket ends within a tenth of its limit after it, and a frame costs
    no clock read.
    """
    timeouts = [t for t in (stall_timeout, idle_timeout) if t is not None]
    if not timeouts:
        return None
    stuck_send, stuck_since = -1, 0.0
    frames, quiet_since = probe()[2], anyio.current_time()
    while True:
        await anyio.sleep(min(timeouts) / 20)
        now = anyio.current_time()
        waiting, taken, activity = probe()
        if activity != frames:
            frames, quiet_since = activity, now
        if stall_timeout is not None and waiting:
            if taken != stuck_send:
                stuck_send, stuck_since = taken, now
            elif now - stuck_since >= stall_timeout:
                log.warning("peer read nothing for %s s: closing", stall_timeout)
                serve_scope.cancel()
                return CLOSE_POLICY_VIOLATION, f"Connection output stalled for {stall_timeout:g} s"
        elif idle_timeout is not None and now - quiet_since >= idle_timeout:
            log.info("no frame for %s s: closing", idle_timeout)
            return CLOSE_GOING_AWAY, "Idle timeout"


def second_initialize_answer(data: bytes) -> str | None:
    """The -32600 answer when ``data`` is an ``initialize`` request on a connection that
    has one already, else None; parsed only when the bytes can be one, so ordinary
    traffic is not parsed twice."""
    if data.find(b'"initialize"') < 0:
        return None
    try:
        value: object = json.loads(data)
    except ValueError:
        return None
    if not isinstance(value, dict):
        return None
    value = cast("dict[str, object]", value)
    if value.get("method") != "initialize" or value.get("id") is None:
        return None
    error = {"code": -32600, "message": "Initialize not allowed on existing connection"}
    return compact({"jsonrpc": "2.0", "id": value["id"], "error": error})


class InitializedTransport:
    """The connection's view of a socket whose first frame was ``initialize``: that frame
    first, then the rest; a second ``initialize`` is answered here (-32600) and never
    reaches the handler. Subclasses add the sends."""

    def __init__(self, socket: AcpSocket, first: bytes) -> None:
        self._socket = socket
        self._first: bytes | None = first

    async def receive(self) -> bytes:
        if self._first is not None:
            first, self._first = self._first, None
            return first
        while True:
            data = await self._socket.receive()
            answer = second_initialize_answer(data)
            if answer is None:
                return data
            await self._socket.send_text(answer)

    async def aclose(self) -> None:
        """Nothing: the app closes the socket once ``serve`` returns, with the code
        that says how it ended (1000, or 1011 after a failure)."""
