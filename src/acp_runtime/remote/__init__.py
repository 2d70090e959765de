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
    from ._acp_app import AcpApp as AcpApp
    from ._acp_app import acp_app as acp_app
    from ._connect import connect_remote as connect_remote
    from ._connect import connect_to_remote_agent as connect_to_remote_agent
    from ._cookies import CookieStore as CookieStore
    from ._http_client import HttpTransport as HttpTransport
    from ._http_client import connect_http as connect_http
    from ._http_connection import HttpConnection as HttpConnection
    from ._http_connection import HttpLimits as HttpLimits
    from ._http_server import StreamableHttpApp as StreamableHttpApp
    from ._http_server import http_app as http_app
    from ._serving import Authenticate as Authenticate
    from ._serving import HandlerFactory as HandlerFactory
    from ._serving import Refusal as Refusal
    from ._serving import Servable as Servable
    from ._websocket_client import WebSocketTransport as WebSocketTransport
    from ._websocket_client import WebSocketUpgradeError as WebSocketUpgradeError
    from ._websocket_client import connect_websocket as connect_websocket
    from ._websocket_server import WebSocketApp as WebSocketApp
    from ._websocket_server import WebSocketOptions as WebSocketOptions
    from ._websocket_server import serve_websocket as serve_websocket
    from ._websocket_server import websocket_app as websocket_app

_EXPORTS: dict[str, str] = {
    "AcpApp": "_acp_app",
    "Authenticate": "_serving",
    "CookieStore": "_cookies",
    "HandlerFactory": "_serving",
    "HttpConnection": "_http_connection",
    "HttpLimits": "_http_connection",
    "HttpTransport": "_http_client",
    "Refusal": "_serving",
    "Servable": "_serving",
    "StreamableHttpApp": "_http_server",
    "WebSocketApp": "_websocket_server",
    "WebSocketOptions": "_websocket_server",
    "WebSocketTransport": "_websocket_client",
    "WebSocketUpgradeError": "_websocket_client",
    "acp_app": "_acp_app",
    "connect_http": "_http_client",
    "connect_remote": "_connect",
    "connect_to_remote_agent": "_connect",
    "connect_websocket": "_websocket_client",
    "http_app": "_http_server",
    "serve_websocket": "_websocket_server",
    "websocket_app": "_websocket_server",
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
