"""An MCP SDK ``ClientSession`` whose transport is the ACP connection (``mcp`` extra).

The session talks over a stream pair whose far end is a
:class:`~acp_runtime.mcp._relay.StreamPeer`: each MCP request it sends becomes one ACP
request (``mcp/message``), and the provider's notifications and (connect binding)
requests come back into it. Cancelling a call in the session (its task cancelled, or a
read timeout) cancels the ACP request with ``$/cancel_request``; the ACP request
cancelled by the provider's side ends the call with -32800.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator, Awaitable, Callable
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING, Any

import anyio
import mcp_types as types
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream
from mcp import ClientSession
from mcp.shared.message import SessionMessage
from mcp_types.version import LATEST_MODERN_VERSION

from .._errors import RequestError
from .._methods import JsonValue
from ._mcp_connection import Binding, McpConnection, McpNotification, SessionOptions
from ._relay import StreamPeer
from ._wire import McpError

StatelessRequest = Callable[
    [str, "dict[str, Any] | None", Callable[[McpNotification], None]], Awaitable[JsonValue]
]
"""Send one stateless MCP request (``McpCaller.request`` on one connection and server)."""

if TYPE_CHECKING:
    from typing_extensions import Unpack


@asynccontextmanager
async def open_client_session(
    request: StatelessRequest,
    connect: Callable[[], Awaitable[McpConnection]],
    *,
    binding: Binding,
    discover: bool,
    **options: Unpack[SessionOptions],
) -> AsyncGenerator[ClientSession, None]:
    """See :meth:`McpCaller.session`."""
    if binding not in ("stateless", "connect"):
        raise ValueError(f"unknown MCP-over-ACP binding {binding!r}")
    (toward_send, toward_receive), (back_send, back_receive) = StreamPeer.streams()
    connection: McpConnection | None = None
    if binding == "connect":
        connection = await connect()
        peer = StreamPeer(
            toward_send,
            back_receive,
            on_request=connection.request,
            on_notification=connection.notify,
        )
        connection.on_notification = peer.notify
        connection.on_request = peer.request
    else:
        peer = _stateless_peer(request, toward_send, back_receive)
    failure: Exception | None = None
    try:
        async with anyio.create_task_group() as tg:
            tg.start_soon(peer.run)
            try:
                async with ClientSession(toward_receive, back_send, **options) as session:
                    if binding == "connect":
                        await session.initialize()
                    elif discover:
                        await session.discover()
                    else:
                        session.adopt(_assumed_discover())
                    yield session
            except Exception as error:  # raised outside the task group: no extra nesting
                failure = error
            back_send.close()
            peer.close()
            tg.cancel_scope.cancel()
    finally:
        toward_receive.close()
        back_receive.close()
        if connection is not None:
            await connection.aclose()
    if failure is not None:
        raise failure


def _stateless_peer(
    request: StatelessRequest,
    toward_send: MemoryObjectSendStream[SessionMessage | Exception],
    back_receive: MemoryObjectReceiveStream[SessionMessage],
) -> StreamPeer:
    peer: StreamPeer

    def forward(notification: McpNotification) -> None:
        peer.notify(notification.method, notification.params)

    async def on_request(method: str, params: dict[str, Any] | None) -> JsonValue:
        try:
            return await request(method, params, forward)
        except RequestError as error:  # a binding failure: the session sees its code
            raise McpError(error.code, error.message, error.data) from None

    def on_notification(method: str, params: dict[str, Any] | None) -> None:
        pass  # MCP 2026-07-28 defines no client-to-server notification to carry

    peer = StreamPeer(
        toward_send, back_receive, on_request=on_request, on_notification=on_notification
    )
    return peer


def _assumed_discover() -> types.DiscoverResult:
    """What the session assumes without asking: MCP 2026-07-28, no capabilities known
    (as ``mcp.Client`` does for an explicit protocol version)."""
    return types.DiscoverResult(
        supported_versions=[LATEST_MODERN_VERSION],
        capabilities=types.ServerCapabilities(),
        result_type="complete",
        ttl_ms=0,
        cache_scope="public",
    )
