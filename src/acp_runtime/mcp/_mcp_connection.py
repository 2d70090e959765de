"""The caller's MCP connection of the connect binding, and what the provider sends it.

Shared by the caller and the ``ClientSession`` bridge (:mod:`acp_runtime.mcp._client_session`).
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal, TypeAlias, TypedDict

import anyio

from .._connection import Connection
from .._errors import RequestError
from .._methods import JsonValue
from ._wire import MCP_CANCELLED, MCP_DISCONNECT, MCP_MESSAGE, McpError, connection_message

if TYPE_CHECKING:
    from mcp.client.session import (
        ElicitationFnT,
        ListRootsFnT,
        LoggingFnT,
        MessageHandlerFnT,
        SamplingFnT,
    )
    from mcp_types import Implementation

log = logging.getLogger(__name__)


class SessionOptions(TypedDict, total=False):
    """What :meth:`McpCaller.session` passes on to the MCP SDK's ``ClientSession``."""

    client_info: Implementation | None
    read_timeout_seconds: float | None
    sampling_callback: SamplingFnT | None
    elicitation_callback: ElicitationFnT | None
    list_roots_callback: ListRootsFnT | None
    logging_callback: LoggingFnT | None
    message_handler: MessageHandlerFnT | None


Binding: TypeAlias = Literal["stateless", "connect"]
"""``"stateless"``: TypeScript SDK 2.4.0 (the schema's ``mcp/message``); ``"connect"``:
``mcp/connect``/``mcp/disconnect`` of the spec repository's August 2026 schema."""

DISCONNECT_TIMEOUT = 5.0
"""Seconds a session's exit waits for the answer to its ``mcp/disconnect``."""


@dataclass(frozen=True, slots=True)
class McpNotification:
    """A notification the provider sent for one request (progress, say)."""

    method: str
    params: dict[str, JsonValue] | None = None
    meta: dict[str, JsonValue] | None = None


OnConnectionRequest: TypeAlias = Callable[[str, dict[str, Any] | None], Awaitable[JsonValue]]
OnConnectionNotification: TypeAlias = Callable[[str, dict[str, Any] | None], None]


class McpConnection:
    """A connect-binding MCP connection to one declared server (:meth:`McpCaller.connect`)."""

    def __init__(
        self, cx: Connection, server_id: str, connection_id: str, release: Callable[[], None]
    ) -> None:
        self.cx = cx
        self.server_id = server_id
        self.connection_id = connection_id
        self._release = release
        self.on_notification: OnConnectionNotification = _ignore_notification
        """Takes the provider's notifications (in order, must not block)."""
        self.on_request: OnConnectionRequest | None = None
        """Serves the provider's requests (MCP sampling, elicitation...); -32601 if unset."""

    async def request(self, method: str, params: dict[str, Any] | None = None) -> JsonValue:
        """One MCP request; the provider's error (the outer one here) raises :class:`McpError`."""
        message = connection_message(self.connection_id, method, params)
        try:
            return await self.cx.send_raw_request(MCP_MESSAGE, message)
        except RequestError as error:
            raise McpError(error.code, error.message, error.data) from None

    def notify(self, method: str, params: dict[str, Any] | None = None) -> None:
        """One MCP notification; MCP's own cancellation is never tunnelled."""
        if method == MCP_CANCELLED:
            return
        try:
            self.cx.send_raw_notification(
                MCP_MESSAGE, connection_message(self.connection_id, method, params)
            )
        except RequestError:
            log.debug("connection closed; MCP notification %s dropped", method)

    async def aclose(self) -> None:
        """``mcp/disconnect``, bounded by :data:`DISCONNECT_TIMEOUT`; errors are logged."""
        self._release()
        with anyio.move_on_after(DISCONNECT_TIMEOUT, shield=True):
            try:
                await self.cx.send_raw_request(MCP_DISCONNECT, {"connectionId": self.connection_id})
            except RequestError as error:
                log.debug("mcp/disconnect %s failed: %s", self.connection_id, error)

    def __repr__(self) -> str:
        return f"<McpConnection {self.connection_id!r} to {self.server_id!r}>"


def _ignore_notification(method: str, params: dict[str, Any] | None) -> None:
    log.debug("MCP notification %s ignored", method)
