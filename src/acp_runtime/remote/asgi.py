"""The few ASGI 3 types the WebSocket server needs (no framework, no dependency)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from typing import Any

Scope = Mapping[str, Any]
Message = Mapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Any], Awaitable[None]]
"""Takes ``Any``: servers type their ``send`` with their own ``TypedDict`` events (hypercorn
does), and a callable taking those is not one taking any mapping."""


def scope_headers(scope: Scope) -> dict[str, str]:
    """The request headers, names lower-cased, repeated ones joined with ``", "``."""
    headers: dict[str, str] = {}
    raw: list[tuple[bytes, bytes]] = scope.get("headers") or []
    for name, value in raw:
        key = name.decode("latin-1").lower()
        text = value.decode("latin-1")
        headers[key] = f"{headers[key]}, {text}" if key in headers else text
    return headers


async def plain_response(
    send: Send, status: int, text: str, *, event: str = "http.response"
) -> None:
    """A short ``text/plain`` HTTP answer; ``event="websocket.http.response"`` sends it as
    the denial of a WebSocket upgrade (the ASGI denial extension)."""
    body = text.encode()
    await send(
        {
            "type": f"{event}.start",
            "status": status,
            "headers": [
                (b"content-type", b"text/plain; charset=utf-8"),
                (b"content-length", str(len(body)).encode()),
            ],
        }
    )
    await send({"type": f"{event}.body", "body": body})
