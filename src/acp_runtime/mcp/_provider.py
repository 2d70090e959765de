"""The providing side (usually the client, the editor): serve MCP servers to the peer.

:class:`McpProvider` answers ``mcp/message`` (both bindings, told apart by their keys),
``mcp/connect`` and ``mcp/disconnect``. Servers are registered per ACP connection, since
a ``serverId`` only means something on the connection that declared it::

    provider = McpProvider()
    provider.attach(builder)
    async with builder.connect(transport) as cx:
        tools = provider.register(cx, server, name="tools")
        await cx.send_request(NewSessionRequest(cwd=..., mcp_servers=[tools.declaration]))

A server is an MCP Python SDK server (``mcp.server.lowlevel.Server`` or
``mcp.server.mcpserver.MCPServer``, served by :mod:`acp_runtime.mcp._sdk_server`) or any
:data:`McpHandler`. Every request is served as spawned connection work, so a slow tool
never holds the dispatch loop, and each failure stays inside its own answer: one MCP call
never fails the ACP connection.
"""

from __future__ import annotations

import logging
import uuid
import weakref
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, TypeVar

import anyio
from pydantic import BaseModel

from .._builder import ConnectionBuilder
from .._cancellation import CancellationMarker
from .._connection import Connection
from .._errors import ErrorCode, RequestError
from .._methods import JsonValue
from .._responder import Responder
from ._server_api import McpHandler, McpRequest, ServerBackend, ServerOutbound, ServerSession
from ._wire import (
    CONNECT_REQUEST,
    DISCONNECT_REQUEST,
    MCP_CANCELLED,
    MCP_MESSAGE,
    MCP_PROTOCOL_VERSION,
    MESSAGE_NOTIFICATION,
    MESSAGE_REQUEST,
    META_CLIENT_CAPABILITIES,
    META_CLIENT_INFO,
    META_PROTOCOL_VERSION,
    UNSUPPORTED_PROTOCOL_VERSION,
    BindingError,
    ConnectionMessage,
    McpError,
    StatelessMessage,
    connection_message,
    error_carrier,
    invalid_inner_params,
    parse_connect,
    parse_disconnect,
    parse_message,
    parse_notification,
    result_carrier,
    stateless_message,
)

if TYPE_CHECKING:
    from mcp.server.lowlevel import Server
    from mcp.server.mcpserver import MCPServer

log = logging.getLogger(__name__)

M = TypeVar("M", bound=BaseModel)

DEFAULT_MAX_ACTIVE_REQUESTS = 64
"""Active stateless requests per server before -33000 (as TypeScript)."""


class McpServerRegistration:
    """A server registered on one ACP connection."""

    def __init__(self, name: str, server_id: str, release: Callable[[], None]) -> None:
        self.name = name
        self.server_id = server_id
        self._release = release

    @property
    def declaration(self) -> dict[str, JsonValue]:
        """The entry for ``session/new``'s ``mcpServers`` (``{"type": "acp", ...}``); the
        generated models accept it as it is (``AcpMcpServer``)."""
        return {"type": "acp", "name": self.name, "serverId": self.server_id}

    def declaration_as(self, model: type[M]) -> M:
        """:attr:`declaration` as a generated model, typed: ``declaration_as(AcpMcpServer)``
        (v1 or v2 ``acp_generated.vN.unstable``), for ``NewSessionRequest(mcp_servers=...)``."""
        return model.model_validate(self.declaration)

    def dispose(self) -> None:
        """Unregister: later requests get -33001, active ones are cancelled (-32800; on the
        connect binding an MCP SDK server's answer -33002, its stream closed first) and
        its MCP sessions closed."""
        self._release()

    def __repr__(self) -> str:
        return f"<McpServerRegistration {self.name!r} serverId={self.server_id!r}>"


class McpProvider:
    """Serves registered MCP servers over ``mcp/message``; one per application."""

    def __init__(self, *, max_active_requests: int = DEFAULT_MAX_ACTIVE_REQUESTS) -> None:
        if max_active_requests < 1:
            raise ValueError("max_active_requests must be a positive integer")
        self._max_active = max_active_requests
        self._states: weakref.WeakKeyDictionary[Connection, _ProviderState] = (
            weakref.WeakKeyDictionary()
        )

    def attach(self, builder: ConnectionBuilder) -> ConnectionBuilder:
        """Register the binding's handlers on ``builder`` (a client or untyped role)."""
        builder.on_request(MESSAGE_REQUEST, self._on_message)
        builder.on_notification(MESSAGE_NOTIFICATION, self._on_notification)
        builder.on_request(CONNECT_REQUEST, self._on_connect)
        builder.on_request(DISCONNECT_REQUEST, self._on_disconnect)
        return builder

    def register(
        self,
        cx: Connection,
        server: McpHandler | Server[Any] | MCPServer[Any] | ServerBackend,
        *,
        name: str,
        server_id: str | None = None,
    ) -> McpServerRegistration:
        """Serve ``server`` on ``cx`` under ``server_id`` (default ``"<name>:<uuid>"``).

        It serves as soon as this returns, so send its :attr:`~McpServerRegistration.declaration`
        only afterwards. Raises ``ValueError`` for an id already used on ``cx``.
        """
        state = self._states.get(cx)
        if state is None:
            state = self._states[cx] = _ProviderState()
            cx.spawn(self._forget_on_close, cx)
        server_id = server_id if server_id is not None else f"{name}:{uuid.uuid4()}"
        if server_id in state.used_ids:
            raise ValueError(
                f"MCP server ID {server_id!r} was already registered on this connection"
            )
        state.used_ids.add(server_id)
        entry = _Registered(name, server_id, _backend_of(server), self._max_active)
        state.servers[server_id] = entry

        def release() -> None:
            if state.servers.get(server_id) is entry:
                del state.servers[server_id]
                entry.dispose(state)

        return McpServerRegistration(name, server_id, release)

    async def _forget_on_close(self, cx: Connection) -> None:
        """Drop ``cx``'s servers once it closes (its task group cancels this wait): their
        sessions hold the connection, so its weak key alone would never let it go."""
        try:
            await anyio.sleep_forever()
        finally:
            state = self._states.pop(cx, None)
            if state is not None:
                entries = list(state.servers.values())
                state.servers.clear()  # a registration's dispose after this does nothing
                for entry in entries:
                    entry.dispose(state)

    # -- stateless binding --------------------------------------------------------------

    async def _on_message(self, params: JsonValue, responder: Responder[JsonValue]) -> None:
        message = parse_message(params)
        state = self._states.get(responder.connection)
        if isinstance(message, ConnectionMessage):
            self._serve_connected(state, message, responder)
            return
        server = state.servers.get(message.server_id) if state is not None else None
        if server is None:
            raise BindingError.server_unavailable(message.server_id)
        if message.request_id in server.active:
            raise BindingError.duplicate_request(message.server_id, message.request_id)
        if len(server.active) >= server.max_active:
            raise BindingError.resource_limit(message.server_id)
        cx = responder.connection
        request = _stateless_request(cx, message, responder.cancellation)
        scope = server.active[message.request_id] = anyio.CancelScope()
        cx.spawn(self._answer_stateless, server, request, scope, responder)

    async def _answer_stateless(
        self,
        server: _Registered,
        request: McpRequest,
        scope: anyio.CancelScope,
        responder: Responder[JsonValue],
    ) -> None:
        assert request.request_id is not None
        outcome: JsonValue = None
        try:
            with scope:
                outcome = await responder.cancellation.run_until_cancelled(
                    _stateless_outcome(server, request, responder.connection)
                )
        except RequestError as error:
            responder.respond_with_error(error)
            return
        finally:
            request._done = True  # pyright: ignore[reportPrivateUsage]  # no notification after the answer
            if server.active.get(request.request_id) is scope:
                del server.active[request.request_id]
        if scope.cancelled_caught:  # disposed while active
            responder.respond_with_error(RequestError.request_cancelled())
        else:
            responder.respond(outcome)

    # -- connect binding ----------------------------------------------------------------

    async def _on_connect(self, params: JsonValue, responder: Responder[JsonValue]) -> JsonValue:
        server_id = parse_connect(params)
        state = self._states.get(responder.connection)
        server = state.servers.get(server_id) if state is not None else None
        if state is None or server is None:
            raise BindingError.server_unavailable(server_id)
        cx = responder.connection
        connection_id = f"{server.name}:{uuid.uuid4()}"
        session = server.backend.open(cx, _ConnectionOutbound(cx, connection_id), stateless=False)
        state.connections[connection_id] = _Connected(server, session)
        server.connections.add(connection_id)
        return {"connectionId": connection_id}

    async def _on_disconnect(self, params: JsonValue, responder: Responder[JsonValue]) -> JsonValue:
        connection_id = parse_disconnect(params)
        state = self._states.get(responder.connection)
        connected = state.connections.pop(connection_id, None) if state is not None else None
        if connected is None:
            raise _unknown_connection(connection_id)
        connected.server.connections.discard(connection_id)
        connected.session.close()
        return {}

    def _serve_connected(
        self,
        state: _ProviderState | None,
        message: ConnectionMessage,
        responder: Responder[JsonValue],
    ) -> None:
        connected = state.connections.get(message.connection_id) if state is not None else None
        if connected is None:
            raise _unknown_connection(message.connection_id)
        cx = responder.connection
        request = McpRequest(
            server_id=connected.server.server_id,
            method=message.method,
            params=message.params,
            cancellation=responder.cancellation,
            connection_id=message.connection_id,
            envelope_meta=message.meta,
            _send=_connection_sender(cx, message.connection_id),
        )
        cx.spawn(responder.respond_with, _connected_result(connected.session, request))

    async def _on_notification(self, params: JsonValue, cx: Connection) -> None:
        message = parse_notification(params)
        state = self._states.get(cx)
        if not isinstance(message, ConnectionMessage) or state is None:
            log.debug("mcp/message notification not for an MCP connection here ignored")
            return
        connected = state.connections.get(message.connection_id)
        if connected is None or message.method == MCP_CANCELLED:
            return  # MCP cancellation crosses as $/cancel_request, never tunnelled
        connected.session.notify(message.method, message.params)


# -- serving ------------------------------------------------------------------------------


async def _stateless_outcome(server: _Registered, request: McpRequest, cx: Connection) -> JsonValue:
    """The carrier for one stateless request: inner errors inside, binding failures raised."""
    try:
        _check_request_meta(request, server.backend.supported_versions)
        result = await server.stateless_session(cx).request(request)
    except McpError as error:
        return error_carrier(error)
    except RequestError as error:
        if error.code == ErrorCode.REQUEST_CANCELLED:
            raise
        # A handler's own ACP error never poses as a binding code.
        raise BindingError.backend_failed(
            "MCP server handler failed", {"details": error.message, "code": error.code}
        ) from None
    except Exception:
        log.exception("MCP server %s failed on %s", server.server_id, request.method)
        raise BindingError.backend_failed("MCP server handler failed") from None
    return result_carrier(result)


async def _connected_result(session: ServerSession, request: McpRequest) -> JsonValue:
    """The bare result of one connect-binding request; an inner error is the outer one."""
    try:
        return await request.cancellation.run_until_cancelled(session.request(request))
    except McpError as error:
        raise RequestError(error.code, error.message, error.data) from None
    except RequestError:
        raise
    except Exception:
        log.exception("MCP server %s failed on %s", request.server_id, request.method)
        raise BindingError.backend_failed("MCP server handler failed") from None
    finally:
        request._done = True  # pyright: ignore[reportPrivateUsage]


def _check_request_meta(request: McpRequest, supported: tuple[str, ...]) -> None:
    """The inner checks TypeScript's provider makes before a handler runs."""
    if not isinstance(request.protocol_version, str):
        raise invalid_inner_params(f"missing {META_PROTOCOL_VERSION} in params._meta")
    if request.protocol_version not in supported:
        raise McpError(
            UNSUPPORTED_PROTOCOL_VERSION,
            "Unsupported protocol version",
            {"supported": list(supported), "requested": request.protocol_version},
        )
    if request.client_capabilities is None:
        raise invalid_inner_params(f"missing {META_CLIENT_CAPABILITIES} in params._meta")


def _stateless_request(
    cx: Connection, message: StatelessMessage, marker: CancellationMarker
) -> McpRequest:
    meta = (message.params or {}).get("_meta")
    meta = meta if isinstance(meta, dict) else {}
    version, capabilities = meta.get(META_PROTOCOL_VERSION), meta.get(META_CLIENT_CAPABILITIES)

    def send(method: str, params: dict[str, JsonValue] | None) -> None:
        cx.send_raw_notification(
            MCP_MESSAGE, stateless_message(message.server_id, message.request_id, method, params)
        )

    return McpRequest(
        server_id=message.server_id,
        method=message.method,
        params=message.params,
        cancellation=marker,
        request_id=message.request_id,
        protocol_version=version if isinstance(version, str) else None,
        client_capabilities=capabilities if isinstance(capabilities, dict) else None,
        client_info=meta.get(META_CLIENT_INFO),
        envelope_meta=message.meta,
        _send=send,
    )


def _connection_sender(
    cx: Connection, connection_id: str
) -> Callable[[str, dict[str, JsonValue] | None], None]:
    def send(method: str, params: dict[str, JsonValue] | None) -> None:
        cx.send_raw_notification(MCP_MESSAGE, connection_message(connection_id, method, params))

    return send


def _unknown_connection(connection_id: str) -> RequestError:
    return RequestError.invalid_params(
        {"reason": "unknown MCP connection", "connectionId": connection_id}
    )


class _ConnectionOutbound:
    """A connect-binding session's way to the caller: ``mcp/message`` with its id."""

    def __init__(self, cx: Connection, connection_id: str) -> None:
        self._cx = cx
        self._connection_id = connection_id
        self._send = _connection_sender(cx, connection_id)

    def notify(self, method: str, params: dict[str, Any] | None) -> None:
        try:
            self._send(method, params)
        except RequestError:
            log.debug("connection closed; MCP notification %s dropped", method)

    async def request(self, method: str, params: dict[str, Any] | None) -> JsonValue:
        message = connection_message(self._connection_id, method, params)
        try:
            return await self._cx.send_raw_request(MCP_MESSAGE, message)
        except RequestError as error:
            raise McpError(error.code, error.message, error.data) from None


class _StatelessOutbound:
    """The stateless binding has nothing outside a request: MCP 2026-07-28 servers send
    the caller no requests, and notifications belong to a request."""

    def notify(self, method: str, params: dict[str, Any] | None) -> None:
        log.debug("MCP notification %s outside a request dropped (stateless binding)", method)

    async def request(self, method: str, params: dict[str, Any] | None) -> JsonValue:
        raise McpError(-32601, f"{method}: no server-to-client requests over the stateless binding")


class _HandlerBackend:
    """A plain :data:`McpHandler` as a backend: every request is one call."""

    supported_versions: tuple[str, ...] = (MCP_PROTOCOL_VERSION,)

    def __init__(self, handler: McpHandler) -> None:
        self._handler = handler

    def open(self, cx: Connection, outbound: ServerOutbound, *, stateless: bool) -> ServerSession:
        return _HandlerSession(self._handler)


class _HandlerSession:
    """A plain handler's session: closing it (``mcp/disconnect``, dispose) cancels the
    requests it still runs, answered -32800, as closing an MCP SDK server's stream ends
    its run."""

    def __init__(self, handler: McpHandler) -> None:
        self._handler = handler
        self._running: set[anyio.CancelScope] = set()

    async def request(self, request: McpRequest) -> JsonValue:
        with anyio.CancelScope() as scope:
            self._running.add(scope)
            try:
                return await self._handler(request)
            finally:
                self._running.discard(scope)
        raise RequestError.request_cancelled()  # closed while it ran

    def notify(self, method: str, params: dict[str, Any] | None) -> None:
        log.debug("MCP notification %s ignored by a plain handler", method)

    def close(self) -> None:
        for scope in self._running:
            scope.cancel()


def _backend_of(server: McpHandler | Server[Any] | MCPServer[Any] | ServerBackend) -> ServerBackend:
    if isinstance(server, ServerBackend):
        return server
    if callable(server):
        return _HandlerBackend(server)
    from ._sdk_server import SdkServerBackend  # needs the mcp extra; only for SDK servers

    return SdkServerBackend(server)


@dataclass(eq=False)
class _Registered:
    name: str
    server_id: str
    backend: ServerBackend
    max_active: int
    active: dict[str, anyio.CancelScope] = field(default_factory=dict[str, anyio.CancelScope])
    connections: set[str] = field(default_factory=set[str])
    _stateless: ServerSession | None = None

    def stateless_session(self, cx: Connection) -> ServerSession:
        """The registration's one session for the stateless binding, opened on first use."""
        if self._stateless is None:
            self._stateless = self.backend.open(cx, _StatelessOutbound(), stateless=True)
        return self._stateless

    def dispose(self, state: _ProviderState) -> None:
        for scope in self.active.values():
            scope.cancel()
        if self._stateless is not None:
            self._stateless.close()
        for connection_id in self.connections:
            connected = state.connections.pop(connection_id, None)
            if connected is not None:
                connected.session.close()
        self.connections.clear()


@dataclass(eq=False)
class _Connected:
    server: _Registered
    session: ServerSession


@dataclass(eq=False)
class _ProviderState:
    servers: dict[str, _Registered] = field(default_factory=dict[str, _Registered])
    connections: dict[str, _Connected] = field(default_factory=dict[str, _Connected])
    used_ids: set[str] = field(default_factory=set[str])
