"""Serve an MCP Python SDK server over ACP (needs the ``mcp`` extra).

The server runs as it would on stdio: ``Server.run`` over a stream pair, whose far end
is a :class:`~acp_runtime.mcp._relay.StreamPeer`. The SDK does the MCP work (validation,
capabilities, the era of each session, progress, cancellation); this module only moves
messages.

* Stateless binding: one ``Server.run`` per registration, serving MCP 2026-07-28 (every
  request carries its own envelope); its lifespan is entered once, on first use.
* Connect binding: one ``Server.run`` per ``mcp/connect``, a stateful MCP session whose
  ``initialize`` comes from the caller; ``mcp/disconnect`` ends it.

Each run is connection work: a server that crashes is logged, its pending requests fail
with -33002, and the next stateless request starts a fresh run.
"""

from __future__ import annotations

import logging
from typing import Any

import anyio
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream
from mcp.server.lowlevel import Server
from mcp.server.mcpserver import MCPServer
from mcp.shared.message import SessionMessage
from mcp_types.version import MODERN_PROTOCOL_VERSIONS

from .._connection import Connection
from .._methods import JsonValue
from ._relay import McpConnectionClosed, StreamPeer
from ._server_api import McpRequest, ServerOutbound, ServerSession
from ._wire import UNSUPPORTED_PROTOCOL_VERSION, BindingError, McpError

log = logging.getLogger(__name__)


def lowlevel_server(server: object) -> Server[Any]:
    """The low-level ``Server`` behind an ``MCPServer`` (the SDK keeps it private; its own
    in-memory client reaches it the same way)."""
    if isinstance(server, MCPServer):
        server = server._lowlevel_server  # pyright: ignore[reportPrivateUsage, reportUnknownMemberType, reportUnknownVariableType]
    if isinstance(server, Server):
        return server  # pyright: ignore[reportUnknownVariableType]
    raise TypeError(
        f"not an MCP server: {server!r} (expected an MCP SDK Server or MCPServer, "
        "a server backend, or an async handler of MCP requests)"
    )


class SdkServerBackend:
    """Opens MCP sessions of one MCP SDK server."""

    supported_versions: tuple[str, ...] = tuple(MODERN_PROTOCOL_VERSIONS)

    def __init__(self, server: Server[Any] | MCPServer[Any]) -> None:
        self._server = lowlevel_server(server)

    def open(self, cx: Connection, outbound: ServerOutbound, *, stateless: bool) -> ServerSession:
        return _SdkSession(self._server, cx, outbound, stateless=stateless)


class _SdkSession:
    """One ``Server.run``, started on first use, restarted after it ended."""

    def __init__(
        self, server: Server[Any], cx: Connection, outbound: ServerOutbound, *, stateless: bool
    ) -> None:
        self._server = server
        self._cx = cx
        self._outbound = outbound
        self._stateless = stateless
        self._peer: StreamPeer | None = None
        self._closed = False

    async def request(self, request: McpRequest) -> JsonValue:
        if self._stateless and request.method == "initialize":
            # It would turn the shared run into a handshake-era session.
            raise McpError(
                UNSUPPORTED_PROTOCOL_VERSION,
                "the stateless binding serves MCP 2026-07-28; initialize is not accepted",
                {"supported": list(MODERN_PROTOCOL_VERSIONS)},
            )
        try:
            return await self._running().request(
                request.method, request.params, on_notification=request.notify
            )
        except McpConnectionClosed:
            raise BindingError.backend_failed("MCP server closed before answering") from None

    def notify(self, method: str, params: dict[str, Any] | None) -> None:
        if self._peer is not None:
            self._peer.notify(method, params)

    def close(self) -> None:
        self._closed = True
        if self._peer is not None:
            self._peer.close()

    def _running(self) -> StreamPeer:
        if self._closed:
            raise McpConnectionClosed
        if self._peer is None or self._peer.is_closed:
            (toward_send, toward_receive), (back_send, back_receive) = StreamPeer.streams()
            self._peer = StreamPeer(
                toward_send,
                back_receive,
                on_request=self._outbound.request,
                on_notification=self._outbound.notify,
            )
            self._cx.spawn(self._run, self._peer, toward_receive, back_send)
        return self._peer

    async def _run(
        self,
        peer: StreamPeer,
        toward_receive: MemoryObjectReceiveStream[SessionMessage | Exception],
        back_send: MemoryObjectSendStream[SessionMessage],
    ) -> None:
        server = self._server
        try:
            async with anyio.create_task_group() as tg:
                tg.start_soon(peer.run)
                async with toward_receive, back_send:
                    await server.run(
                        toward_receive, back_send, server.create_initialization_options()
                    )
        except Exception:
            log.exception("MCP server %r failed", server.name)
        finally:
            peer.close()
