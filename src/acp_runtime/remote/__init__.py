"""Remote transports: ACP over WebSocket (optional extra ``acp-runtime[http]``).

The client (:func:`connect_websocket`) yields a :class:`~acp_runtime.transport.Transport`,
so a :class:`~acp_runtime.ConnectionBuilder` runs over it unchanged; the server
(:func:`websocket_app`) is a plain ASGI application, mounted in whatever ASGI server the
agent already runs. Nothing here is imported by ``import acp_runtime``.
"""

from __future__ import annotations

from .connect import connect_remote, connect_to_remote_agent
from .cookies import CookieStore
from .http_client import HttpTransport, connect_http
from .websocket_client import WebSocketTransport, connect_websocket
from .websocket_server import WebSocketApp, websocket_app

__all__ = [
    "CookieStore",
    "HttpTransport",
    "WebSocketApp",
    "WebSocketTransport",
    "connect_http",
    "connect_remote",
    "connect_to_remote_agent",
    "connect_websocket",
    "websocket_app",
]
