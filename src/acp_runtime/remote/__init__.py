"""Remote transports: ACP over WebSocket and Streamable HTTP (optional extra
``acp-runtime[http]``).

The clients (:func:`connect_websocket`, :func:`connect_http`, either by URL scheme:
:func:`connect_remote`) yield a :class:`~acp_runtime.transport.Transport`, so a
:class:`~acp_runtime.ConnectionBuilder` runs over them unchanged; the servers
(:func:`websocket_app`, :func:`http_app`, both on one path: :func:`acp_app`) are plain
ASGI applications, mounted in whatever ASGI server the agent already runs. Nothing here
is imported by ``import acp_runtime``.
"""

from __future__ import annotations

from .acp_app import AcpApp, acp_app
from .connect import connect_remote, connect_to_remote_agent
from .cookies import CookieStore
from .http_client import HttpTransport, connect_http
from .http_connection import HttpConnection, HttpLimits
from .http_server import StreamableHttpApp, http_app
from .serving import Authenticate, HandlerFactory, Refusal, Servable
from .websocket_client import WebSocketTransport, WebSocketUpgradeError, connect_websocket
from .websocket_server import WebSocketApp, websocket_app

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
    "WebSocketTransport",
    "WebSocketUpgradeError",
    "acp_app",
    "connect_http",
    "connect_remote",
    "connect_to_remote_agent",
    "connect_websocket",
    "http_app",
    "websocket_app",
]
