"""What a served MCP server sees: the request a handler gets, and the backend protocol.

Shared by the provider and the MCP SDK backend (:mod:`acp_runtime.mcp._sdk_server`), which
plug in here without knowing each other.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol, TypeAlias, runtime_checkable

from .._cancellation import CancellationMarker
from .._errors import RequestError
from .._methods import JsonValue

if TYPE_CHECKING:
    from .._connection import Connection

log = logging.getLogger(__name__)


@dataclass(eq=False)
class McpRequest:
    """One MCP request as a server handler sees it.

    On the stateless binding ``request_id`` is the caller's ``requestId`` and the
    ``protocol_version``/``client_*`` fields come from ``params._meta`` (checked before the
    handler runs); on the connect binding ``connection_id`` is set and they are ``None``
    (the MCP ``initialize`` carried them).
    """

    server_id: str
    method: str
    params: dict[str, JsonValue] | None
    cancellation: CancellationMarker
    """The marker of the ACP request carrying this call (the handler is also cancelled)."""
    request_id: str | None = None
    connection_id: str | None = None
    protocol_version: str | None = None
    client_capabilities: dict[str, JsonValue] | None = None
    client_info: JsonValue = None
    envelope_meta: dict[str, JsonValue] | None = None
    """The outer ``_meta`` of the ``mcp/message`` envelope."""
    _send: Callable[[str, dict[str, JsonValue] | None], None] = field(
        default=lambda method, params: None, repr=False
    )
    _done: bool = field(default=False, repr=False)

    def notify(self, method: str, params: dict[str, JsonValue] | None = None) -> None:
        """Send an MCP notification (progress, say) for this request to the caller.

        Only while the request is active: dropped once its answer is on its way."""
        if self._done:
            log.debug("MCP notification %s after the answer dropped", method)
            return
        try:
            self._send(method, params)
        except RequestError:
            log.debug("connection closed; MCP notification %s dropped", method)


McpHandler: TypeAlias = Callable[[McpRequest], Awaitable[JsonValue]]
"""``async (request) -> result``: any handler of MCP requests. Raise :class:`McpError`
for an MCP error; it is cancelled when the ACP request carrying the call is."""


class ServerOutbound(Protocol):
    """What a server session may send the caller outside a request's answer."""

    def notify(self, method: str, params: dict[str, Any] | None) -> None: ...
    async def request(self, method: str, params: dict[str, Any] | None) -> JsonValue: ...


class ServerSession(Protocol):
    """One MCP session of a registered server: the registration's own on the stateless
    binding, one per ``mcp/connect`` on the connect binding."""

    async def request(self, request: McpRequest) -> JsonValue: ...
    def notify(self, method: str, params: dict[str, Any] | None) -> None: ...
    def close(self) -> None: ...


@runtime_checkable
class ServerBackend(Protocol):
    """Opens sessions of one registered server."""

    supported_versions: tuple[str, ...]
    """MCP revisions the stateless binding accepts for this server."""

    def open(
        self, cx: Connection, outbound: ServerOutbound, *, stateless: bool
    ) -> ServerSession: ...
