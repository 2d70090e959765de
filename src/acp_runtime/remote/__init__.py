"""Remote transports: ACP over WebSocket and Streamable HTTP (optional extra
``acp-typed-runtime[http]``).

The clients (:func:`connect_websocket`, :func:`connect_http`, either by URL scheme:
:func:`connect_remote`) yield a :class:`~acp_runtime._transport.Transport`, so a
:class:`~acp_runtime.ConnectionBuilder` runs over them unchanged; the servers
(:func:`websocket_app`, :func:`http_app`, both on one path: :func:`acp_app`) are plain
ASGI applications, mounted in whatever ASGI server the agent already runs, and the WebSocket
one also serves on a socket of its own (:func:`serve_websocket`). Nothing here
is imported by ``import acp_runtime``.

Names load on first access (PEP 562): a server that mounts :func:`websocket_app` imports
neither HTTP client (httpx, httpcore and, through them, trio), and a client imports no
server. Checkers see the imports below.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .._lazy import lazy_exports

if TYPE_CHECKING:
    from .acp_app import AcpApp as AcpApp
    from .acp_app import acp_app as acp_app
    from .connect import connect_remote as connect_remote
    from .connect import connect_to_remote_agent as connect_to_remote_agent
    from .cookies import CookieStore as CookieStore
    from .http_client import HttpTransport as HttpTransport
    from .http_client import connect_http as connect_http
    from .http_connection import HttpConnection as HttpConnection
    from .http_connection import HttpLimits as HttpLimits
    from .http_server import StreamableHttpApp as StreamableHttpApp
    from .http_server import http_app as http_app
    from .serving import Authenticate as Authenticate
    from .serving import HandlerFactory as HandlerFactory
    from .serving import Refusal as Refusal
    from .serving import Servable as Servable
    from .websocket_client import WebSocketTransport as WebSocketTransport
    from .websocket_client import WebSocketUpgradeError as WebSocketUpgradeError
    from .websocket_client import connect_websocket as connect_websocket
    from .websocket_server import WebSocketApp as WebSocketApp
    from .websocket_server import WebSocketOptions as WebSocketOptions
    from .websocket_server import serve_websocket as serve_websocket
    from .websocket_server import websocket_app as websocket_app

_EXPORTS: dict[str, str] = {
    "AcpApp": "acp_app",
    "Authenticate": "serving",
    "CookieStore": "cookies",
    "HandlerFactory": "serving",
    "HttpConnection": "http_connection",
    "HttpLimits": "http_connection",
    "HttpTransport": "http_client",
    "Refusal": "serving",
    "Servable": "serving",
    "StreamableHttpApp": "http_server",
    "WebSocketApp": "websocket_server",
    "WebSocketOptions": "websocket_server",
    "WebSocketTransport": "websocket_client",
    "WebSocketUpgradeError": "websocket_client",
    "acp_app": "acp_app",
    "connect_http": "http_client",
    "connect_remote": "connect",
    "connect_to_remote_agent": "connect",
    "connect_websocket": "websocket_client",
    "http_app": "http_server",
    "serve_websocket": "websocket_server",
    "websocket_app": "websocket_server",
}
"""Each public name and the module that defines it."""

if not TYPE_CHECKING:  # checkers see the imports above, so a misspelt name is an error
    __getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)

__all__ = [
    "AcpApp",
    "Authenticate",
    "CookieStore",
    "HandlerFactory",
    "HttpConnection",
    "HttpLimits",
    "HttpTransport",
    "Refusal",
    "Servable",
    "StreamableHttpApp",
    "WebSocketApp",
    "WebSocketOptions",
    "WebSocketTransport",
    "WebSocketUpgradeError",
    "acp_app",
    "connect_http",
    "connect_remote",
    "connect_to_remote_agent",
    "connect_websocket",
    "http_app",
    "serve_websocket",
    "websocket_app",
]
