"""The few ASGI 3 types and answers the remote servers need (no framework, no dependency)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ._serving import Refusal

Scope = Mapping[str, Any]
Message = Mapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Any], Awaitable[None]]
"""Takes ``Any``: servers type their ``send`` with their own ``TypedDict`` events (hypercorn
does), and a callable taking those is not one taking any mapping."""

Headers = Sequence[tuple[bytes, bytes]]

STATUS_TEXT: Mapping[int, str] = {401: "Unauthorized\n", 403: "Forbidden\n"}


def scope_headers(scope: Scope) -> dict[str, str]:
    """The request headers, names lower-cased, repeated ones joined with ``", "``."""
    return header_map(scope.get("headers") or [])


def header_map(raw: Iterable[tuple[bytes, bytes]]) -> dict[str, str]:
    """Raw header pairs as a mapping, names lower-cased, repeated ones joined with ``", "``."""
    headers: dict[str, str] = {}
    for name, value in raw:
        key = name.decode("latin-1").lower()
        text = value.decode("latin-1")
        headers[key] = f"{headers[key]}, {text}" if key in headers else text
    return headers


def challenge_headers(refused: Refusal | None) -> Headers:
    """``WWW-Authenticate`` for a 401 that names its scheme; nothing otherwise."""
    if refused is None or refused.challenge is None:
        return ()
    return ((b"www-authenticate", refused.challenge.encode("latin-1")),)


async def plain_response(
    send: Send,
    status: int,
    text: str,
    *,
    event: str = "http.response",
    content_type: bytes = b"text/plain; charset=utf-8",
    headers: Headers = (),
) -> None:
    """A short HTTP answer with a body (``text/plain`` unless told); ``event=
    "websocket.http.response"`` sends it as the denial of a WebSocket upgrade (the ASGI
    denial extension)."""
    body = text.encode()
    await send(
        {
            "type": f"{event}.start",
            "status": status,
            "headers": [
                (b"content-type", content_type),
                (b"content-length", str(len(body)).encode()),
                *headers,
            ],
        }
    )
    await send({"type": f"{event}.body", "body": body})


async def serve_lifespan(
    receive: Receive, send: Send, shutdown: Callable[[], Awaitable[None]]
) -> None:
    """The ASGI ``lifespan`` scope: nothing to start, ``shutdown()`` before saying done."""
    while True:
        message = await receive()
        if message["type"] == "lifespan.startup":
            await send({"type": "lifespan.startup.complete"})
        elif message["type"] == "lifespan.shutdown":
            await shutdown()
            await send({"type": "lifespan.shutdown.complete"})
            return
