"""JSON-RPC errors as one Python exception type.

:class:`RequestError` is both what ``await sent_request`` raises for the peer's error
response and what a handler raises to answer a request with an error; the runtime
turns it into the wire ``error`` object and back, keeping code, message and data.
Local failures (the connection closed under a pending request) use the same type, with
a ``data.reason`` that tells them apart from anything a peer sent.
"""

from __future__ import annotations

from collections.abc import Sequence
from enum import IntEnum
from typing import Any, cast

from ._methods import JsonValue

CONNECTION_CLOSED_REASON = "connection_closed"
"""``data.reason`` of the local error that settles requests when the connection closes."""

CAPABILITY_NOT_DECLARED_REASON = "capability_not_declared"
"""``data.reason`` of the local error for a request the peer did not declare it handles."""

INVALID_RESULT_REASON = "invalid_result"
"""``data.reason`` of the local error for a result that fails validation (after salvage)."""


class ErrorCode(IntEnum):
    """Standard JSON-RPC 2.0 codes plus the ACP ones the runtime itself produces."""

    PARSE_ERROR = -32700
    INVALID_REQUEST = -32600
    METHOD_NOT_FOUND = -32601
    INVALID_PARAMS = -32602
    INTERNAL_ERROR = -32603
    REQUEST_CANCELLED = -32800
    """ACP: the request was cancelled via ``$/cancel_request``."""
    AUTH_REQUIRED = -32000
    """ACP: the agent needs ``authenticate`` before it can serve this request."""
    RESOURCE_NOT_FOUND = -32002
    """ACP: a resource the request names (a file, a session) does not exist."""
    UNSUPPORTED_PROTOCOL_VERSION = -32022
    """ACP: no protocol version the agent supports is at or below the requested one."""


_STANDARD_MESSAGES = {
    ErrorCode.PARSE_ERROR: "Parse error",
    ErrorCode.INVALID_REQUEST: "Invalid request",
    ErrorCode.METHOD_NOT_FOUND: "Method not found",
    ErrorCode.INVALID_PARAMS: "Invalid params",
    ErrorCode.INTERNAL_ERROR: "Internal error",
    ErrorCode.REQUEST_CANCELLED: "Request cancelled",
    ErrorCode.AUTH_REQUIRED: "Authentication required",
    ErrorCode.RESOURCE_NOT_FOUND: "Resource not found",
    ErrorCode.UNSUPPORTED_PROTOCOL_VERSION: "Unsupported protocol version",
}


class DeadlockError(RuntimeError):
    """Awaiting a response inside the dispatch loop, which is what would deliver it.

    Notification handlers, inline request handlers (raw ones, or registered with
    ``inline=True``) and result callbacks run in the task that reads the connection, so
    awaiting a request to the peer there could never end. Spawn the work that awaits
    (``cx.spawn(...)``) and return. Typed request handlers run in tasks of their own and
    may simply await.
    """


class RequestError(Exception):
    """A JSON-RPC error: ``code``, ``message`` and optional ``data``.

    Match on :attr:`code` (an ``int``; compare with :class:`ErrorCode`), never on the
    message text: peers word messages differently.
    """

    def __init__(self, code: int, message: str, data: JsonValue = None) -> None:
        super().__init__(code, message, data)
        self.code = code
        self.message = message
        self.data = data

    def __str__(self) -> str:
        return f"{self.message} ({self.code})" + ("" if self.data is None else f": {self.data!r}")

    def __repr__(self) -> str:
        return f"RequestError({self.code!r}, {self.message!r}, {self.data!r})"

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, RequestError):
            return NotImplemented
        return (self.code, self.message, self.data) == (other.code, other.message, other.data)

    __hash__ = None  # type: ignore[assignment]  # mutable, compared by value

    @classmethod
    def _standard(cls, code: ErrorCode, data: JsonValue = None) -> RequestError:
        return cls(int(code), _STANDARD_MESSAGES[code], data)

    @classmethod
    def parse_error(cls, data: JsonValue = None) -> RequestError:
        return cls._standard(ErrorCode.PARSE_ERROR, data)

    @classmethod
    def invalid_request(cls, data: JsonValue = None) -> RequestError:
        return cls._standard(ErrorCode.INVALID_REQUEST, data)

    @classmethod
    def method_not_found(cls, method: str) -> RequestError:
        return cls._standard(ErrorCode.METHOD_NOT_FOUND, method)

    @classmethod
    def invalid_params(cls, data: JsonValue = None) -> RequestError:
        return cls._standard(ErrorCode.INVALID_PARAMS, data)

    @classmethod
    def internal_error(cls, data: JsonValue = None, *, method: str | None = None) -> RequestError:
        """``-32603``; with ``method``, the message names it ("Internal error in
        session/prompt"), which is what a handler's unexpected exception answers."""
        error = cls._standard(ErrorCode.INTERNAL_ERROR, data)
        if method is not None:
            error.message = f"{error.message} in {method}"
        return error

    @classmethod
    def auth_required(cls, data: JsonValue = None) -> RequestError:
        """ACP ``-32000``: authenticate first (answer ``session/new`` with it, say)."""
        return cls._standard(ErrorCode.AUTH_REQUIRED, data)

    @classmethod
    def resource_not_found(cls, uri: str | None = None) -> RequestError:
        """ACP ``-32002``, with ``data: {"uri": ...}`` when the resource has one."""
        return cls._standard(ErrorCode.RESOURCE_NOT_FOUND, None if uri is None else {"uri": uri})

    @classmethod
    def request_cancelled(cls) -> RequestError:
        """The standard answer to a cancelled request: ``-32800 "Request cancelled"``."""
        return cls._standard(ErrorCode.REQUEST_CANCELLED)

    @classmethod
    def unsupported_protocol_version(cls, requested: int, supported: Sequence[int]) -> RequestError:
        """The answer to an ``initialize`` no supported version can serve: ``-32022``
        with data ``{"requested": ..., "supported": [...]}`` (the v2 schema's shape)."""
        data: JsonValue = {"requested": requested, "supported": [v for v in supported]}
        return cls._standard(ErrorCode.UNSUPPORTED_PROTOCOL_VERSION, data)

    @classmethod
    def connection_closed(cls, method: str) -> RequestError:
        """Local only: the connection closed before ``method`` got its response."""
        return cls(
            int(ErrorCode.INTERNAL_ERROR),
            "Connection closed",
            {"reason": CONNECTION_CLOSED_REASON, "method": method},
        )

    @classmethod
    def invalid_result(cls, method: str, errors: Sequence[JsonValue]) -> RequestError:
        """Local only: the peer answered ``method`` with a result its schema rejects, even
        after the salvage the schema allows. ``-32603`` (not ``-32700``, which JSON-RPC keeps
        for text that is not JSON) with data ``{"reason": "invalid_result", "method": ...,
        "errors": [{"loc", "msg", "type"}, ...]}``; the message names the first path."""
        first = errors[0] if errors else None
        path = ""
        if isinstance(first, dict) and isinstance(first.get("loc"), list):
            path = ".".join(str(part) for part in cast("list[object]", first["loc"]))
        return cls(
            int(ErrorCode.INTERNAL_ERROR),
            f"Invalid result for {method}" + (f" at {path}" if path else ""),
            {"reason": INVALID_RESULT_REASON, "method": method, "errors": list(errors)},
        )

    @classmethod
    def capability_not_declared(cls, method: str, capability: str) -> RequestError:
        """Local only: ``method`` needs a capability the peer did not declare in
        ``initialize``, so it was not sent. ``-32601`` (what such a peer answers) with
        data ``{"reason": "capability_not_declared", "method": ..., "capability": ...}``."""
        return cls(
            int(ErrorCode.METHOD_NOT_FOUND),
            f"{method} needs the {capability} capability, which the client did not declare",
            {"reason": CAPABILITY_NOT_DECLARED_REASON, "method": method, "capability": capability},
        )

    @property
    def is_capability_not_declared(self) -> bool:
        """True for the local error :meth:`capability_not_declared` builds."""
        return (
            isinstance(self.data, dict)
            and self.data.get("reason") == CAPABILITY_NOT_DECLARED_REASON
        )

    @property
    def is_invalid_result(self) -> bool:
        """True for the local error :meth:`invalid_result` builds."""
        return isinstance(self.data, dict) and self.data.get("reason") == INVALID_RESULT_REASON

    @property
    def is_connection_closed(self) -> bool:
        """True for the local error :meth:`connection_closed` builds."""
        return isinstance(self.data, dict) and self.data.get("reason") == CONNECTION_CLOSED_REASON

    def to_wire(self) -> dict[str, JsonValue]:
        """The JSON-RPC ``error`` object (``data`` left out when ``None``)."""
        error: dict[str, JsonValue] = {"code": self.code, "message": self.message}
        if self.data is not None:
            error["data"] = self.data
        return error

    @classmethod
    def from_wire(cls, error: Any) -> RequestError:
        """Read a peer's ``error`` object; a malformed one becomes an internal error."""
        if isinstance(error, dict):
            fields = cast("dict[str, JsonValue]", error)
            code, message = fields.get("code"), fields.get("message")
            if type(code) is int and isinstance(message, str):
                return cls(code, message, fields.get("data"))
        return cls.internal_error({"reason": "malformed_error_response", "error": error})
