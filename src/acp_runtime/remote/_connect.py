"""A client of a remote agent in one call: the transport picked by the URL's scheme.

The remote twin of :func:`acp_runtime.connect_to_agent`, kept here rather than in
``run`` so that ``import acp_runtime`` never needs the ``[http]`` extra.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator, Mapping
from contextlib import AbstractAsyncContextManager, asynccontextmanager

from .._builder import ConnectionBuilder
from .._connection import Connection
from .._outbox import DEFAULT_HIGH_WATER_BYTES
from .._run import Attachable
from .._transport import Transport
from ._http_client import connect_http
from ._websocket_client import connect_websocket


def connect_remote(
    url: str, *, headers: Mapping[str, str] | None = None
) -> AbstractAsyncContextManager[Transport]:
    """The transport to ``url``: ``http(s)://`` speaks Streamable HTTP, ``ws(s)://``
    WebSocket, each with its default size limit."""
    scheme = url.partition("://")[0].lower()
    if scheme in ("http", "https"):
        return connect_http(url, headers=headers)
    if scheme in ("ws", "wss"):
        return connect_websocket(url, headers=headers)
    raise ValueError(f"not an http(s):// or ws(s):// URL: {url!r}")


@asynccontextmanager
async def connect_to_remote_agent(
    url: str,
    handler: Attachable | None = None,
    *,
    headers: Mapping[str, str] | None = None,
    high_water_bytes: int = DEFAULT_HIGH_WATER_BYTES,
) -> AsyncGenerator[Connection, None]:
    """Connect to the agent at ``url`` and yield a client connection to it.

    ``handler`` (a ``ClientHandler`` subclass) answers what the agent asks; ``headers``
    go on every request (``Authorization``). Leaving the block settles what is pending
    and ends the remote connection (DELETE, or a close frame). For cookies kept across
    reconnects, size limits or a shared ``httpx.AsyncClient``, use :func:`connect_http`
    or :func:`connect_websocket` with a :class:`~acp_runtime.ConnectionBuilder`.
    """
    builder = ConnectionBuilder(role="client", high_water_bytes=high_water_bytes)
    if handler is not None:
        handler.attach(builder)
    async with connect_remote(url, headers=headers) as transport:
        async with builder.connect(transport) as cx:
            yield cx
