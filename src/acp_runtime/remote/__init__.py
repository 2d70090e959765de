"""Remote transports: ACP over WebSocket and Streamable HTTP (optional extra
``acp-runtime[http]``).

The client (:func:`connect_websocket`) yields a :class:`~acp_runtime.transport.Transport`,
so a :class:`~acp_runtime.ConnectionBuilder` runs over it unchanged; the servers
(:func:`websocket_app`, :func:`http_app`, both on one path: :func:`acp_app`) are plain
ASGI applications, mounted in whatever ASGI server the agent already runs. Nothing here
is imported by ``import acp_runtime``.
"""

from __future__ import annotations

from .acp_app import AcpApp, acp_app
from .http_connection import HttpConnection, HttpLimits
from .http_server import StreamableHttpApp, http_app
from .serving import Authenticate, HandlerFactory, Refusal, Servable
from .websocket_client import WebSocketTransport, connect_websocket
from .websocket_server import WebSocketApp, websocket_app

__all__ = [
    "AcpApp",
    "Authenticate",
    "HandlerFactory",
    "HttpConnection",
    "HttpLimits",
    "Refusal",
    "Servable",
    "StreamableHttpApp",
    "WebSocketApp",
    "WebSocketTransport",
    "acp_app",
    "connect_websocket",
    "http_app",
    "websocket_app",
]
