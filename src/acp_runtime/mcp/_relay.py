"""Our end of the stream pair an MCP SDK object talks over (needs the ``mcp`` extra).

The MCP Python SDK's ``ClientSession`` and ``Server.run`` both speak JSON-RPC over a pair
of anyio memory streams of ``SessionMessage``. :class:`StreamPeer` is the far end of such
a pair, as a transport would be, but instead of writing bytes it turns each message into
a call: requests the SDK object sends become ``on_request`` calls whose outcome is
written back as its response; :meth:`StreamPeer.request` sends one request to the SDK
object and waits for its response.

Cancellation crosses here as task cancellation, both ways: MCP's
``notifications/cancelled`` for a request being served cancels the task serving it, and
cancelling a task waiting in :meth:`StreamPeer.request` sends ``notifications/cancelled``
for it. Each side of the binding then does the same with its ACP request, so a cancel
crosses the ACP boundary as ``$/cancel_request`` and never as a tunnelled MCP message.
"""

from __future__ import annotations

import itertools
import logging
import math
from collections.abc import Awaitable, Callable
from typing import Any

import anyio
import anyio.abc
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream
from mcp.shared.message import ServerMessageMetadata, SessionMessage
from mcp_types import (
    ErrorData,
    JSONRPCError,
    JSONRPCMessage,
    JSONRPCNotification,
    JSONRPCRequest,
    JSONRPCResponse,
    RequestId,
)

from .._methods import JsonValue
from ._wire import MCP_CANCELLED, McpError

log = logging.getLogger(__name__)

Params = dict[str, Any] | None
OnRequest = Callable[[str, Params], Awaitable[JsonValue]]
"""Serve a request the SDK object sent: return its result or raise :class:`McpError`."""
OnNotification = Callable[[str, Params], None]
"""Take a notification the SDK object sent; called in order, must not block."""

BACK_BUFFER = 256
"""Messages the SDK object may queue toward us before its writes wait."""


class McpConnectionClosed(Exception):
    """The stream pair closed before the SDK object answered."""


class StreamPeer:
    """The far end of an MCP SDK object's stream pair; see the module docstring."""

    def __init__(
        self,
        outgoing: MemoryObjectSendStream[SessionMessage | Exception],
        incoming: MemoryObjectReceiveStream[SessionMessage],
        *,
        on_request: OnRequest | None,
        on_notification: OnNotification,
    ) -> None:
        self._outgoing = outgoing
        self._incoming = incoming
        self._on_request = on_request
        self._on_notification = on_notification
        self._ids = itertools.count(1)
        self._pending: dict[RequestId, _Pending] = {}
        self._serving: dict[RequestId, anyio.CancelScope] = {}
        self._closed = False

    @staticmethod
    def streams() -> tuple[
        tuple[
            MemoryObjectSendStream[SessionMessage | Exception],
            MemoryObjectReceiveStream[SessionMessage | Exception],
        ],
        tuple[MemoryObjectSendStream[SessionMessage], MemoryObjectReceiveStream[SessionMessage]],
    ]:
        """(toward the SDK object, from it). Unbounded toward it, so a message can be queued
        from the ACP dispatch loop without blocking it (the SDK object reads without
        waiting on us); bounded back, so a chatty server waits for the ACP writer."""
        toward = anyio.create_memory_object_stream[SessionMessage | Exception](math.inf)
        back = anyio.create_memory_object_stream[SessionMessage](BACK_BUFFER)
        return toward, back

    async def run(self) -> None:
        """Read what the SDK object sends until it closes its side; then every pending
        :meth:`request` fails with :class:`McpConnectionClosed`."""
        try:
            async with anyio.create_task_group() as tg:
                async for item in self._incoming:
                    self._dispatch(item.message, item.metadata, tg)
                tg.cancel_scope.cancel()  # requests still being served have no one to answer
        finally:
            self._close()

    @property
    def is_closed(self) -> bool:
        return self._closed

    def close(self) -> None:
        """Close our side: the SDK object reads EOF."""
        self._outgoing.close()
        self._close()

    async def request(
        self, method: str, params: Params, *, on_notification: OnNotification | None = None
    ) -> dict[str, Any]:
        """Send a request to the SDK object and return its result; raises
        :class:`McpError` for its error. Cancelled, it sends ``notifications/cancelled``."""
        if self._closed:
            raise McpConnectionClosed
        request_id = next(self._ids)
        pending = self._pending[request_id] = _Pending(on_notification)
        try:
            self._write(JSONRPCRequest(jsonrpc="2.0", id=request_id, method=method, params=params))
            await pending.done.wait()
        except anyio.get_cancelled_exc_class():
            if not pending.done.is_set():
                self.notify(MCP_CANCELLED, {"requestId": request_id, "reason": "cancelled"})
            raise
        finally:
            del self._pending[request_id]
        if isinstance(pending.outcome, ErrorData):
            error = pending.outcome
            raise McpError(error.code, error.message, error.data)
        if pending.outcome is None:
            raise McpConnectionClosed
        return pending.outcome

    def notify(self, method: str, params: Params) -> None:
        """Queue a notification for the SDK object (dropped once closed)."""
        if self._closed:
            log.debug("MCP stream closed; notification %s dropped", method)
            return
        self._write(JSONRPCNotification(jsonrpc="2.0", method=method, params=params))

    def _write(self, message: JSONRPCMessage) -> None:
        try:
            self._outgoing.send_nowait(SessionMessage(message))
        except (anyio.ClosedResourceError, anyio.BrokenResourceError):
            raise McpConnectionClosed from None

    def _dispatch(self, message: JSONRPCMessage, metadata: object, tg: anyio.abc.TaskGroup) -> None:
        if isinstance(message, JSONRPCResponse | JSONRPCError):
            pending = self._pending.get(message.id) if message.id is not None else None
            if pending is None:
                log.debug("MCP response for unknown or finished id %r dropped", message.id)
                return
            pending.settle(
                message.result if isinstance(message, JSONRPCResponse) else message.error
            )
        elif isinstance(message, JSONRPCNotification):
            self._route_notification(message, metadata)
        elif self._on_request is None:
            self._answer(message.id, ErrorData(code=-32601, message="Method not found"))
        else:
            scope = self._serving[message.id] = anyio.CancelScope()
            tg.start_soon(self._serve, message, scope)

    def _route_notification(self, message: JSONRPCNotification, metadata: object) -> None:
        if message.method == MCP_CANCELLED:
            request_id = (message.params or {}).get("requestId")
            scope = self._serving.get(request_id) if isinstance(request_id, int | str) else None
            if scope is not None:
                scope.cancel()
            return
        related = (
            metadata.related_request_id if isinstance(metadata, ServerMessageMetadata) else None
        )
        if related is not None:
            pending = self._pending.get(related)
            if pending is None or pending.on_notification is None:
                log.debug(
                    "MCP notification %s for finished request %r dropped", message.method, related
                )
                return
            pending.on_notification(message.method, message.params)
        else:
            self._on_notification(message.method, message.params)

    async def _serve(self, request: JSONRPCRequest, scope: anyio.CancelScope) -> None:
        assert self._on_request is not None
        outcome: dict[str, Any] | ErrorData | None = None
        with scope:
            try:
                result = await self._on_request(request.method, request.params)
                outcome = _result_object(result)
            except McpError as error:
                outcome = ErrorData(code=error.code, message=error.message, data=error.data)
            except Exception:
                log.exception("serving MCP request %s failed", request.method)
                outcome = ErrorData(code=-32603, message="Internal error")
        del self._serving[request.id]
        if outcome is not None:  # None: cancelled, and MCP answers no cancelled request
            self._answer(request.id, outcome)

    def _answer(self, request_id: RequestId, outcome: dict[str, Any] | ErrorData) -> None:
        message: JSONRPCMessage = (
            JSONRPCError(jsonrpc="2.0", id=request_id, error=outcome)
            if isinstance(outcome, ErrorData)
            else JSONRPCResponse(jsonrpc="2.0", id=request_id, result=outcome)
        )
        try:
            self._write(message)
        except McpConnectionClosed:
            log.debug("MCP stream closed; answer to %r dropped", request_id)

    def _close(self) -> None:
        self._closed = True
        for pending in self._pending.values():
            pending.settle(None)


def _result_object(result: JsonValue) -> dict[str, Any] | ErrorData:
    if isinstance(result, dict):
        return result
    return ErrorData(code=-32603, message="MCP result is not an object", data={"result": result})


class _Pending:
    __slots__ = ("done", "on_notification", "outcome")

    def __init__(self, on_notification: OnNotification | None) -> None:
        self.on_notification = on_notification
        self.outcome: dict[str, Any] | ErrorData | None = None
        self.done = anyio.Event()

    def settle(self, outcome: dict[str, Any] | ErrorData | None) -> None:
        if not self.done.is_set():
            self.outcome = outcome
            self.done.set()
