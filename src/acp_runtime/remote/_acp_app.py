"""One ASGI application for both remote transports on one URL: ``http`` scopes speak
Streamable HTTP, ``websocket`` scopes WebSocket, as the TS 2.4.0 server does on one port."""

from __future__ import annotations

from .._framing import DEFAULT_MAX_MESSAGE_BYTES
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
) -> AcpApp:
    """An ASGI application serving ACP over Streamable HTTP and WebSocket at ``path``.

    Both transports call ``handler_factory`` once per connection and ask the same
    ``authenticate`` hook. ``limits`` bounds each HTTP connection (see
    :class:`~acp_runtime.remote.HttpLimits`); each transport has its own message size
    limit (16 MiB per POST body, 64 MiB per WebSocket frame by default, as TS and Rust).
    """
    http = StreamableHttpApp(
        handler_factory,
        path=path,
        max_message_bytes=max_http_message_bytes,
        limits=limits,
        authenticate=authenticate,
    )
    websocket = WebSocketApp(
        handler_factory,
        path=path,
        max_message_bytes=max_websocket_message_bytes,
        authenticate=authenticate,
    )
    return AcpApp(http, websocket)
