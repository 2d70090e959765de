"""The calling side (usually the agent): use the MCP servers the peer declared.

:meth:`McpCaller.session` gives an MCP Python SDK ``ClientSession`` whose transport is
the ACP connection, so ``await session.call_tool(...)`` works unchanged (needs the
``mcp`` extra)::

    caller = McpCaller()
    caller.attach(builder)                    # routes the provider's notifications
    ...
    for server in acp_servers(params.mcp_servers):    # in session/new
        async with caller.session(cx, server) as session:
            result = await session.call_tool("echo", {"text": "hi"})

:meth:`McpCaller.request` is the same call without the MCP SDK (stateless binding), and
:meth:`McpCaller.connect` opens a connect-binding MCP connection by hand.
"""

from __future__ import annotations

import logging
import uuid
import weakref
from collections.abc import Awaitable, Callable, Iterable, Mapping
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from .._builder import ConnectionBuilder
from .._connection import Connection
from .._errors import RequestError
from .._methods import JsonValue
from .._responder import Responder
from ._mcp_connection import Binding, McpConnection, McpNotification, SessionOptions
from ._wire import (
    MCP_CANCELLED,
    MCP_CONNECT,
    MCP_MESSAGE,
    MESSAGE_NOTIFICATION,
    MESSAGE_REQUEST,
    BindingError,
    ConnectionMessage,
    McpError,
    parse_message,
    parse_notification,
    read_carrier,
    stateless_message,
    with_request_meta,
)

if TYPE_CHECKING:
    from mcp import ClientSession
    from typing_extensions import Unpack

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class DeclaredServer:
    """An ``{"type": "acp"}`` entry of ``session/new``'s ``mcpServers``."""

    name: str
    server_id: str


def acp_servers(mcp_servers: Iterable[object] | None) -> list[DeclaredServer]:
    """The servers provided over ACP among ``mcp_servers``: generated models
    (``AcpMcpServer`` of v1 or v2) or their JSON; other kinds are left out."""
    found: list[DeclaredServer] = []
    for entry in mcp_servers or ():
        if isinstance(entry, Mapping):
            fields: Mapping[str, object] = entry  # pyright: ignore[reportUnknownVariableType]
            kind, name, server_id = fields.get("type"), fields.get("name"), fields.get("serverId")
        else:
            kind = getattr(entry, "type", None)
            name, server_id = getattr(entry, "name", None), getattr(entry, "server_id", None)
        if kind == "acp" and isinstance(name, str) and isinstance(server_id, str):
            found.append(DeclaredServer(name, server_id))
    return found


class McpCaller:
    """Calls MCP servers the peer declared; one per application.

    ``client_info``/``client_capabilities`` go into each stateless request's
    ``params._meta`` unless the request already has them.
    """

    def __init__(
        self,
        *,
        client_info: Mapping[str, JsonValue] | None = None,
        client_capabilities: Mapping[str, JsonValue] | None = None,
    ) -> None:
        self.client_info: dict[str, JsonValue] | None = (
            dict(client_info) if client_info is not None else None
        )
        self.client_capabilities: dict[str, JsonValue] = dict(client_capabilities or {})
        self._states: weakref.WeakKeyDictionary[Connection, _CallerState] = (
            weakref.WeakKeyDictionary()
        )

    def attach(self, builder: ConnectionBuilder) -> ConnectionBuilder:
        """Register the handlers for the provider's ``mcp/message`` notifications and
        (connect binding) requests on ``builder`` (an agent or untyped role)."""
        builder.on_notification(MESSAGE_NOTIFICATION, self._on_notification)
        builder.on_request(MESSAGE_REQUEST, self._on_request)
        return builder

    async def request(
        self,
        cx: Connection,
        server_id: str,
        method: str,
        params: Mapping[str, JsonValue] | None = None,
        *,
        request_id: str | None = None,
        on_notification: Callable[[McpNotification], None] | None = None,
        meta: dict[str, JsonValue] | None = None,
        add_meta: bool = True,
    ) -> JsonValue:
        """One MCP request over the stateless binding; returns the inner result.

        Raises :class:`McpError` for the server's MCP error and
        :class:`~acp_runtime.RequestError` for a binding failure (-33001 unknown server,
        -32800 cancelled, ...). ``on_notification`` gets the provider's notifications for
        this request while it is active. Cancelling the awaiting task sends
        ``$/cancel_request``. ``add_meta=False`` sends ``params`` exactly as given.
        """
        routes = self._state(cx).routes
        request_id = request_id if request_id is not None else f"mcp-request:{uuid.uuid4()}"
        key = (server_id, request_id)
        if key in routes:
            raise ValueError(f"MCP request {request_id!r} is already active for {server_id!r}")
        inner = dict(params) if params is not None else None
        if add_meta:
            inner = with_request_meta(inner, self.client_capabilities, self.client_info)
        routes[key] = on_notification or _ignore
        try:
            answer = await cx.send_raw_request(
                MCP_MESSAGE, stateless_message(server_id, request_id, method, inner, meta)
            )
        finally:
            del routes[key]
        return read_carrier(answer)

    async def connect(self, cx: Connection, server_id: str) -> McpConnection:
        """``mcp/connect`` to a declared server (connect binding); set the connection's
        ``on_notification``/``on_request`` before sending it anything."""
        answer = await cx.send_raw_request(MCP_CONNECT, {"serverId": server_id})
        connection_id = answer.get("connectionId") if isinstance(answer, dict) else None
        if not isinstance(connection_id, str):
            raise BindingError.backend_failed(
                "mcp/connect answered without a connectionId", {"response": answer}
            )
        connections = self._state(cx).connections
        if connection_id in connections:  # it would take over the open one's messages
            raise BindingError.backend_failed(
                "mcp/connect answered with a connectionId already in use",
                {"connectionId": connection_id},
            )

        def release() -> None:
            if connections.get(connection_id) is connection:
                del connections[connection_id]

        connection = connections[connection_id] = McpConnection(
            cx, server_id, connection_id, release
        )
        return connection

    def session(
        self,
        cx: Connection,
        server: DeclaredServer | str,
        *,
        binding: Binding = "stateless",
        discover: bool = False,
        **options: Unpack[SessionOptions],
    ) -> AbstractAsyncContextManager[ClientSession]:
        """An MCP SDK ``ClientSession`` to ``server`` over ``cx``, for the ``async with``
        block (needs the ``mcp`` extra).

        Stateless binding: the session speaks MCP 2026-07-28 at once (``discover=True``
        asks the server with ``server/discover`` first, for its capabilities). Connect
        binding: ``mcp/connect``, then the MCP ``initialize``; ``mcp/disconnect`` on exit.
        ``options`` go to ``ClientSession``; ``client_info`` defaults to the caller's.
        Use it from spawned work, not in a handler on the dispatch loop.
        """
        from ._client_session import open_client_session  # needs the mcp extra

        server_id = server if isinstance(server, str) else server.server_id

        async def request(
            method: str,
            params: dict[str, Any] | None,
            on_notification: Callable[[McpNotification], None],
        ) -> JsonValue:
            return await self.request(
                cx, server_id, method, params, on_notification=on_notification
            )

        async def connect() -> McpConnection:
            return await self.connect(cx, server_id)

        if options.get("client_info") is None and self.client_info is not None:
            from mcp_types import Implementation

            options["client_info"] = Implementation.model_validate(self.client_info)
        return open_client_session(request, connect, binding=binding, discover=discover, **options)

    # -- incoming -------------------------------------------------------------------------

    async def _on_notification(self, params: JsonValue, cx: Connection) -> None:
        message = parse_notification(params)
        state = self._states.get(cx)
        if message is None or state is None:
            return
        if isinstance(message, ConnectionMessage):
            connection = state.connections.get(message.connection_id)
            if connection is not None and message.method != MCP_CANCELLED:
                connection.on_notification(message.method, message.params)
            return
        route = state.routes.get((message.server_id, message.request_id))
        if route is None:
            log.debug("mcp/message notification for an unknown or finished request dropped")
            return
        route(McpNotification(message.method, message.params, message.meta))

    async def _on_request(self, params: JsonValue, responder: Responder[JsonValue]) -> None:
        message = parse_message(params)
        if not isinstance(message, ConnectionMessage):
            raise BindingError.server_unavailable(message.server_id)  # no servers provided here
        state = self._states.get(responder.connection)
        connection = state.connections.get(message.connection_id) if state is not None else None
        if connection is None:
            raise RequestError.invalid_params(
                {"reason": "unknown MCP connection", "connectionId": message.connection_id}
            )
        serve = connection.on_request
        if serve is None:
            raise RequestError.method_not_found(message.method)
        responder.connection.spawn(
            responder.respond_with,
            _outer_errors(
                responder.cancellation.run_until_cancelled(serve(message.method, message.params))
            ),
        )

    def _state(self, cx: Connection) -> _CallerState:
        return self._states.setdefault(cx, _CallerState())


async def _outer_errors(work: Awaitable[JsonValue]) -> JsonValue:
    """On the connect binding an inner MCP error is the outer one."""
    try:
        return await work
    except McpError as error:
        raise RequestError(error.code, error.message, error.data) from None


def _ignore(notification: McpNotification) -> None:
    pass


@dataclass(eq=False)
class _CallerState:
    routes: dict[tuple[str, str], Callable[[McpNotification], None]] = field(
        default_factory=dict[tuple[str, str], Callable[[McpNotification], None]]
    )
    connections: dict[str, McpConnection] = field(default_factory=dict[str, McpConnection])
