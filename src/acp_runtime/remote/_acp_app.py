"""One ASGI application for both remote transports on one URL: ``http`` scopes speak
Streamable HTTP, ``websocket`` scopes WebSocket, as the TS 2.4.0 server does on one port."""

from __future__ import annotations

from collections.abc import Iterable

from .._framing import DEFAULT_MAX_MESSAGE_BYTES
from ._admission import (
    DEFAULT_INITIALIZE_TIMEOUT,
    DEFAULT_MAX_CONNECTIONS,
    DEFAULT_MAX_HEADER_BYTES,
    DEFAULT_MAX_HEADERS,
    Admission,
)
from ._asgi import Receive, Scope, Send, serve_lifespan
from ._http_connection import HttpLimits
from ._http_server import DEFAULT_MAX_HTTP_MESSAGE_BYTES, StreamableHttpApp
from ._serving import Authenticate, HandlerFactory
from ._websocket_server import WebSocketApp


class AcpApp:
    """ASGI 3 application delegating each scope to the server for its transport; the
    lifespan shutdown (or :meth:`aclose`) ends the connections of both."""

    def __init__(self, http: StreamableHttpApp, websocket: WebSocketApp) -> None:
        self.http = http
        self.websocket = websocket

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        kind = scope["type"]
        if kind == "http":
            await self.http.handle_http(scope, receive, send)
        elif kind == "websocket":
            await self.websocket(scope, receive, send)
        elif kind == "lifespan":
            await serve_lifespan(receive, send, self.aclose)

    async def aclose(self) -> None:
        await self.http.aclose()
        await self.websocket.aclose()


def acp_app(
    handler_factory: HandlerFactory,
    *,
    path: str | None = "/acp",
    authenticate: Authenticate | None = None,
    limits: HttpLimits | None = None,
    max_http_message_bytes: int = DEFAULT_MAX_HTTP_MESSAGE_BYTES,
    max_websocket_message_bytes: int = DEFAULT_MAX_MESSAGE_BYTES,
    allowed_origins: Iterable[str] | None = None,
    allowed_hosts: Iterable[str] | None = None,
    max_connections: int | None = DEFAULT_MAX_CONNECTIONS,
    initialize_timeout: float | None = DEFAULT_INITIALIZE_TIMEOUT,
    max_header_bytes: int = DEFAULT_MAX_HEADER_BYTES,
    max_headers: int = DEFAULT_MAX_HEADERS,
) -> AcpApp:
    """An ASGI application serving ACP over Streamable HTTP and WebSocket at ``path``.

    Both transports call ``handler_factory`` once per connection and ask the same
    ``authenticate`` hook. ``limits`` bounds each HTTP connection (see
    :class:`~acp_runtime.remote.HttpLimits`); each transport has its own message size
    limit (16 MiB per POST body, 64 MiB per WebSocket frame by default, as TS and Rust).

    The network checks are those of :func:`~acp_runtime.remote.websocket_app` and
    :func:`~acp_runtime.remote.http_app`, with the same names, shared: a foreign ``Origin``
    (or ``Host`` on loopback) gets 403, an oversized head 431, and ``max_connections``
    counts WebSocket sockets and HTTP connections together (503 past it).
    """
    admission = Admission(
        allowed_origins=allowed_origins,
        allowed_hosts=allowed_hosts,
        max_connections=max_connections,
        initialize_timeout=initialize_timeout,
        max_header_bytes=max_header_bytes,
        max_headers=max_headers,
    )
    http = StreamableHttpApp(
        handler_factory,
        path=path,
        max_message_bytes=max_http_message_bytes,
        limits=limits,
        authenticate=authenticate,
        admission=admission,
    )
    websocket = WebSocketApp(
        handler_factory,
        path=path,
        max_message_bytes=max_websocket_message_bytes,
        authenticate=authenticate,
        admission=admission,
    )
    return AcpApp(http, websocket)
