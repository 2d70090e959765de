"""The client's opening handshake (RFC 6455 section 4.1), by wsproto, over any byte source.

wsproto writes the upgrade request and checks the answer (status 101, ``Upgrade``,
``Connection``, the ``Sec-WebSocket-Accept`` token); this module feeds it the answer's head
only, so frames the server sent right behind its 101 stay for the frame reader, and turns a
refusal into :class:`WebSocketUpgradeError` with its status, headers and body.
"""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import Final

from wsproto import ConnectionType
from wsproto.events import AcceptConnection, RejectConnection, RejectData, Request
from wsproto.handshake import H11Handshake
from wsproto.utilities import RemoteProtocolError

from ._asgi import header_map

MAX_HEAD_BYTES: Final = 64 * 1024
"""Largest answer head read before giving up (h11's own default limit is 16 KiB)."""

MAX_REFUSAL_BODY_BYTES: Final = 64 * 1024
"""How much of a refusal's body is kept; the rest is not read."""

_HEAD_END = re.compile(rb"\n\r?\n")
"""Where an HTTP head ends (h11 accepts bare line feeds too)."""

Read = Callable[[], Awaitable[bytes]]
"""The next bytes from the server; ``b""`` at EOF."""


class WebSocketUpgradeError(Exception):
    """The server did not switch protocols: ``status_code`` says why (401/403 for auth,
    404 for a wrong path; None when the answer was not a valid handshake), with the
    answer's ``headers`` (names in lower case) and the start of its ``body``."""

    def __init__(
        self,
        message: str,
        *,
        status_code: int | None = None,
        headers: Mapping[str, str] | None = None,
        body: bytes = b"",
    ) -> None:
        super().__init__(message)
        self.status_code = status_code
        self.headers: Mapping[str, str] = dict(headers or {})
        self.body = body


@dataclass(frozen=True, slots=True)
class Accepted:
    headers: Mapping[str, str]
    """The 101's headers that wsproto does not consume (``acp-connection-id`` among them)."""
    rest: bytes
    """What the server sent behind the 101: the first frames, if any."""


def upgrade_request(
    host: str, target: str, headers: Mapping[str, str]
) -> tuple[H11Handshake, bytes]:
    """The handshake state and the request bytes that open it; ``headers`` (auth and the
    like) go on the request, except those the handshake itself sets."""
    handshake = H11Handshake(ConnectionType.CLIENT)
    own = {"host", "upgrade", "connection", "sec-websocket-key", "sec-websocket-version"}
    extra = [
        (name.encode("latin-1"), value.encode("latin-1"))
        for name, value in headers.items()
        if name.lower() not in own
    ]
    return handshake, handshake.send(Request(host=host, target=target, extra_headers=extra))


async def read_answer(handshake: H11Handshake, read: Read) -> Accepted:
    """Read the server's answer to the upgrade request; raises
    :class:`WebSocketUpgradeError` unless it is a valid 101."""
    buffer = bytearray()
    while (end := _HEAD_END.search(buffer)) is None:
        if len(buffer) > MAX_HEAD_BYTES:
            raise WebSocketUpgradeError("the answer to the upgrade has an oversized head")
        chunk = await read()
        if not chunk:
            raise WebSocketUpgradeError("the server closed the connection during the upgrade")
        buffer += chunk
    head, rest = bytes(buffer[: end.end()]), bytes(buffer[end.end() :])
    try:
        handshake.receive_data(head)
        event = next(iter(handshake.events()), None)
    except RemoteProtocolError as exc:
        raise WebSocketUpgradeError(f"invalid WebSocket handshake: {exc}") from None
    if isinstance(event, AcceptConnection):
        return Accepted(header_map(event.extra_headers), rest)
    if isinstance(event, RejectConnection):
        headers = header_map(event.headers)
        body = await _refusal_body(handshake, rest, read) if event.has_body else b""
        raise WebSocketUpgradeError(
            f"the server refused the WebSocket upgrade with {event.status_code}",
            status_code=event.status_code,
            headers=headers,
            body=body,
        )
    raise WebSocketUpgradeError("no answer to the WebSocket upgrade")


async def _refusal_body(handshake: H11Handshake, rest: bytes, read: Read) -> bytes:
    """The refusal's body, up to :data:`MAX_REFUSAL_BODY_BYTES` (wsproto takes ``None`` as
    EOF, which ends a body sent without a length)."""
    body = bytearray()
    data, eof = rest, False
    while True:
        if data or eof:
            try:
                handshake.receive_data(data or None)
            except RemoteProtocolError:
                break
            for event in handshake.events():
                if isinstance(event, RejectData):
                    body += event.data
                    if event.body_finished:
                        eof = True
        if eof or len(body) >= MAX_REFUSAL_BODY_BYTES:
            break
        data = await read()
        eof = not data
    return bytes(body[:MAX_REFUSAL_BODY_BYTES])
