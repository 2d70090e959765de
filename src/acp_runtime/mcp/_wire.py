"""The wire of the two MCP-over-ACP bindings: names, keys, error codes, envelopes.

Pure values and functions, no I/O and no MCP SDK, so both sides and both bindings read
and write messages the same way.

* **Stateless** (TypeScript SDK 2.4.0 ``dist/mcp/core.js``; the ``mcp/message`` of the
  ACP schemas this SDK is generated from, ``MessageMcpRequest``): one method,
  ``mcp/message {serverId, requestId, method, params?, _meta?}``. The answer is a carrier
  ``{"result": ...}`` or ``{"error": {code, message, data?}}``; outer JSON-RPC errors are
  binding failures only (:class:`BindingError`). MCP 2026-07-28 rides inside: each request
  carries its protocol version and client capabilities in ``params._meta``; there is no
  MCP ``initialize``. Provider notifications reuse the ``serverId``/``requestId`` of the
  request they belong to.
* **Connect** (the spec repository's schema of August 2026 and its RFD, the Rust SDK
  before its switch to the stateless binding, the Go SDK): ``mcp/connect {serverId}`` ->
  ``{connectionId}``, then ``mcp/message {connectionId, method, params?}`` requests and
  notifications in both directions (the result is the inner MCP result itself, an inner
  error is the outer error), then ``mcp/disconnect {connectionId}``. Stateful MCP rides
  inside, ``initialize`` included.

An incoming ``mcp/message`` is read by the keys present (:func:`parse_message`).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from enum import IntEnum
from typing import Any, cast

from .._errors import RequestError
from .._methods import JsonValue, NotificationMethod, RequestMethod

log = logging.getLogger(__name__)

MCP_MESSAGE = "mcp/message"
MCP_CONNECT = "mcp/connect"
MCP_DISCONNECT = "mcp/disconnect"

MESSAGE_REQUEST: RequestMethod[JsonValue, JsonValue] = RequestMethod(
    MCP_MESSAGE, Any, Any, side="both", doc="mcp/message request, either binding"
)
MESSAGE_NOTIFICATION: NotificationMethod[JsonValue] = NotificationMethod(
    MCP_MESSAGE, Any, side="both", doc="mcp/message notification, either binding"
)
CONNECT_REQUEST: RequestMethod[JsonValue, JsonValue] = RequestMethod(
    MCP_CONNECT, Any, Any, side="client", doc="mcp/connect (connect binding)"
)
DISCONNECT_REQUEST: RequestMethod[JsonValue, JsonValue] = RequestMethod(
    MCP_DISCONNECT, Any, Any, side="client", doc="mcp/disconnect (connect binding)"
)
"""Untyped bindings (params and results stay JSON): the envelope is read by its keys."""

MCP_PROTOCOL_VERSION = "2026-07-28"
"""The MCP revision the stateless binding carries (the only one TypeScript 2.4.0 accepts)."""

META_PROTOCOL_VERSION = "io.modelcontextprotocol/protocolVersion"
META_CLIENT_CAPABILITIES = "io.modelcontextprotocol/clientCapabilities"
META_CLIENT_INFO = "io.modelcontextprotocol/clientInfo"

MCP_CANCELLED = "notifications/cancelled"
"""MCP's own cancellation; never tunnelled across ACP (ids are per hop)."""

UNSUPPORTED_PROTOCOL_VERSION = -32022
"""Inner MCP error code for a request at a revision the server does not serve."""


class BindingErrorCode(IntEnum):
    """Outer ACP error codes of the stateless binding; never inner MCP codes."""

    INVALID_PARAMS = -32602
    """Malformed envelope, or a duplicate active ``(serverId, requestId)``."""
    REQUEST_CANCELLED = -32800
    RESOURCE_LIMIT_EXCEEDED = -33000
    """Too many active requests for one server."""
    SERVER_UNAVAILABLE = -33001
    """No server is registered under the ``serverId`` (or it was disposed)."""
    BACKEND_FAILED = -33002
    """The server failed without a valid MCP outcome."""


class BindingError:
    """Builders of the outer errors of the stateless binding."""

    @staticmethod
    def server_unavailable(server_id: str) -> RequestError:
        return RequestError(
            BindingErrorCode.SERVER_UNAVAILABLE,
            "MCP server registration unavailable",
            {"serverId": server_id},
        )

    @staticmethod
    def duplicate_request(server_id: str, request_id: str) -> RequestError:
        return RequestError(
            BindingErrorCode.INVALID_PARAMS,
            "duplicate active MCP request ID",
            {"serverId": server_id, "requestId": request_id},
        )

    @staticmethod
    def resource_limit(server_id: str) -> RequestError:
        return RequestError(
            BindingErrorCode.RESOURCE_LIMIT_EXCEEDED,
            "MCP-over-ACP active request limit exceeded",
            {"serverId": server_id},
        )

    @staticmethod
    def backend_failed(message: str, data: JsonValue = None) -> RequestError:
        return RequestError(BindingErrorCode.BACKEND_FAILED, message, data)


class McpError(Exception):
    """An inner MCP error (``code``, ``message``, optional ``data``).

    A server handler raises it to answer with an MCP error; the caller's
    :meth:`~acp_runtime.mcp.McpCaller.request` raises it for one. It is distinct from
    :class:`~acp_runtime.RequestError`, the outer ACP error of the binding.
    """

    _NO_DATA: object = object()

    def __init__(self, code: int, message: str, data: JsonValue | object = _NO_DATA) -> None:
        super().__init__(code, message)
        self.code = code
        self.message = message
        self.has_data = data is not McpError._NO_DATA
        self.data: JsonValue = cast(JsonValue, data) if self.has_data else None

    def to_wire(self) -> dict[str, JsonValue]:
        error: dict[str, JsonValue] = {"code": self.code, "message": self.message}
        if self.has_data:
            error["data"] = self.data
        return error

    @classmethod
    def from_wire(cls, error: dict[str, JsonValue]) -> McpError:
        """Read an error object that :func:`is_error_object` accepted."""
        code, message = cast(int, error["code"]), cast(str, error["message"])
        return cls(code, message, error["data"]) if "data" in error else cls(code, message)

    def __str__(self) -> str:
        return f"{self.message} ({self.code})"

    def __repr__(self) -> str:
        data = f", {self.data!r}" if self.has_data else ""
        return f"McpError({self.code!r}, {self.message!r}{data})"

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, McpError):
            return NotImplemented
        return self.to_wire() == other.to_wire()

    __hash__ = None  # type: ignore[assignment]


def invalid_inner_params(message: str) -> McpError:
    return McpError(-32602, f"Invalid params: {message}")


def is_error_object(value: JsonValue) -> bool:
    """An MCP error object: an integer ``code`` and a string ``message``."""
    return (
        isinstance(value, dict)
        and type(value.get("code")) is int
        and isinstance(value.get("message"), str)
    )


def result_carrier(result: JsonValue) -> dict[str, JsonValue]:
    return {"result": result}


def error_carrier(error: McpError) -> dict[str, JsonValue]:
    return {"error": error.to_wire()}


def read_carrier(value: JsonValue) -> JsonValue:
    """The inner result of a stateless ``mcp/message`` answer; raises :class:`McpError`
    for an inner error, and the -33002 :class:`RequestError` for anything that is not a
    carrier. As in TypeScript, ``result`` wins when both keys are present."""
    if isinstance(value, dict):
        if "result" in value:
            return value["result"]
        error = value.get("error")
        if is_error_object(error):
            raise McpError.from_wire(cast("dict[str, JsonValue]", error))
    raise BindingError.backend_failed("Invalid MCP-over-ACP response carrier", {"response": value})


@dataclass(frozen=True, slots=True)
class StatelessMessage:
    """An ``mcp/message`` of the stateless binding (request or notification)."""

    server_id: str
    request_id: str
    method: str
    params: dict[str, JsonValue] | None
    meta: dict[str, JsonValue] | None


@dataclass(frozen=True, slots=True)
class ConnectionMessage:
    """An ``mcp/message`` of the connect binding (request or notification)."""

    connection_id: str
    method: str
    params: dict[str, JsonValue] | None
    meta: dict[str, JsonValue] | None


def parse_message(params: JsonValue) -> StatelessMessage | ConnectionMessage:
    """Read ``mcp/message`` params by the keys present: ``connectionId`` picks the
    connect binding, ``serverId`` the stateless one. Raises -32602 otherwise."""
    if not isinstance(params, dict):
        raise _malformed("params must be an object")
    method = params.get("method")
    if not isinstance(method, str):
        raise _malformed("method must be a string")
    inner = _optional_object(params, "params")
    meta = _optional_object(params, "_meta")
    if "connectionId" in params:
        if "serverId" in params or "requestId" in params:
            raise _malformed("connectionId cannot be combined with serverId/requestId")
        return ConnectionMessage(_string(params, "connectionId"), method, inner, meta)
    if "serverId" in params:
        server_id, request_id = _string(params, "serverId"), _string(params, "requestId")
        return StatelessMessage(server_id, request_id, method, inner, meta)
    raise _malformed("expected serverId and requestId, or connectionId")


def parse_notification(params: JsonValue) -> StatelessMessage | ConnectionMessage | None:
    """:func:`parse_message` for a notification: malformed ones are logged and ``None``
    (a notification gets no error answer)."""
    try:
        return parse_message(params)
    except RequestError as error:
        log.warning("malformed mcp/message notification ignored: %s", error.data)
        return None


def parse_connect(params: JsonValue) -> str:
    """The ``serverId`` of ``mcp/connect`` params; raises -32602."""
    if not isinstance(params, dict):
        raise _malformed("params must be an object")
    return _string(params, "serverId")


def parse_disconnect(params: JsonValue) -> str:
    """The ``connectionId`` of ``mcp/disconnect`` params; raises -32602."""
    if not isinstance(params, dict):
        raise _malformed("params must be an object")
    return _string(params, "connectionId")


def stateless_message(
    server_id: str,
    request_id: str,
    method: str,
    params: dict[str, JsonValue] | None,
    meta: dict[str, JsonValue] | None = None,
) -> dict[str, JsonValue]:
    message: dict[str, JsonValue] = {
        "serverId": server_id,
        "requestId": request_id,
        "method": method,
    }
    if params is not None:
        message["params"] = params
    if meta is not None:
        message["_meta"] = meta
    return message


def connection_message(
    connection_id: str, method: str, params: dict[str, JsonValue] | None
) -> dict[str, JsonValue]:
    message: dict[str, JsonValue] = {"connectionId": connection_id, "method": method}
    if params is not None:
        message["params"] = params
    return message


def with_request_meta(
    params: dict[str, JsonValue] | None,
    client_capabilities: dict[str, JsonValue],
    client_info: dict[str, JsonValue] | None,
) -> dict[str, JsonValue]:
    """``params`` with the MCP 2026-07-28 keys in ``params._meta``, keeping any the caller
    set (as TypeScript's ``withMcpRequestMeta``)."""
    base = dict(params or {})
    existing = base.get("_meta")
    meta: dict[str, JsonValue] = dict(existing) if isinstance(existing, dict) else {}
    meta.setdefault(META_PROTOCOL_VERSION, MCP_PROTOCOL_VERSION)
    meta.setdefault(META_CLIENT_CAPABILITIES, client_capabilities)
    if client_info is not None:
        meta.setdefault(META_CLIENT_INFO, client_info)
    base["_meta"] = meta
    return base


def _malformed(reason: str) -> RequestError:
    return RequestError.invalid_params({"reason": reason})


def _string(params: dict[str, JsonValue], key: str) -> str:
    value = params.get(key)
    if not isinstance(value, str):
        raise _malformed(f"{key} must be a string")
    return value


def _optional_object(params: dict[str, JsonValue], key: str) -> dict[str, JsonValue] | None:
    value = params.get(key)
    if value is None:
        return None
    if not isinstance(value, dict):
        raise _malformed(f"{key} must be an object")
    return value
