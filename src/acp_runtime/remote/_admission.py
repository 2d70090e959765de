"""What every remote server asks of a request before serving it, in one place: a head
within the header limits (431), an ``Origin`` and ``Host`` the
:class:`~.origin_policy.OriginPolicy` lets in (403), and, for a new connection, a free
slot under ``max_connections`` (503). The WebSocket app (mounted or on its own listener)
and the Streamable HTTP app each hold one; :func:`~.acp_app.acp_app` gives both the same,
so its connection cap counts the two transports together.

The header limits are checked by the app itself, so a request head is bounded whatever
ASGI server runs it (uvicorn's default parser takes a 1 MiB header, or thousands).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, Final

from ._origin_policy import OriginPolicy

DEFAULT_MAX_CONNECTIONS: Final = 256
"""Open connections per app (WebSocket sockets plus Streamable HTTP connections)."""

DEFAULT_INITIALIZE_TIMEOUT: Final = 30.0
"""Seconds a new WebSocket has to send ``initialize``, and an HTTP POST that opens a
connection (one with no ``Acp-Connection-Id``) to send its whole body."""

DEFAULT_MAX_HEADER_BYTES: Final = 64 * 1024
"""Bytes of request headers (each name and value, plus 4 per line)."""

DEFAULT_MAX_HEADERS: Final = 100
"""Request header lines."""

RETRY_AFTER: Final = (b"retry-after", b"5")
"""Sent with the 503 of a full server."""


@dataclass(frozen=True, slots=True)
class Refused:
    """A request refused before it was served: the status and a fixed text (never what
    the request sent)."""

    status: int
    text: str
    headers: tuple[tuple[bytes, bytes], ...] = ()


HEAD_TOO_LARGE: Final = Refused(431, "Request header fields too large\n")
FORBIDDEN_ORIGIN: Final = Refused(403, "Forbidden\n")
SERVER_FULL: Final = Refused(503, "Too many connections\n", (RETRY_AFTER,))
INITIALIZE_TOO_SLOW: Final = Refused(408, "Request body not received in time\n")


class Admission:
    """The checks and the connection count one server (or one ``acp_app``) shares."""

    __slots__ = (
        "initialize_timeout",
        "max_connections",
        "max_header_bytes",
        "max_headers",
        "open_connections",
        "policy",
    )

    def __init__(
        self,
        *,
        allowed_origins: Iterable[str] | None = None,
        allowed_hosts: Iterable[str] | None = None,
        max_connections: int | None = DEFAULT_MAX_CONNECTIONS,
        initialize_timeout: float | None = DEFAULT_INITIALIZE_TIMEOUT,
        max_header_bytes: int = DEFAULT_MAX_HEADER_BYTES,
        max_headers: int = DEFAULT_MAX_HEADERS,
    ) -> None:
        if max_connections is not None and max_connections < 1:
            raise ValueError("max_connections must be at least 1 (None: no limit)")
        if initialize_timeout is not None and not initialize_timeout > 0:
            raise ValueError("initialize_timeout must be positive (None: no limit)")
        if max_header_bytes < 1 or max_headers < 1:
            raise ValueError("max_header_bytes and max_headers must be at least 1")
        self.policy = OriginPolicy(allowed_origins, allowed_hosts)
        self.max_connections = max_connections
        self.initialize_timeout = initialize_timeout
        self.max_header_bytes = max_header_bytes
        self.max_headers = max_headers
        self.open_connections = 0

    def refusal(self, headers: Iterable[tuple[bytes, bytes]], server: Any) -> Refused | None:
        """None when a request with these raw headers, arrived at ``server`` (the ASGI
        scope's ``server``), may be served; else how to refuse it."""
        size = count = 0
        origin: bytes | None = None
        host: bytes | None = None
        for name, value in headers:
            size += len(name) + len(value) + 4
            count += 1
            if len(name) == 4 and name.lower() == b"host":
                host = value
            elif len(name) == 6 and name.lower() == b"origin":
                origin = value
        if size > self.max_header_bytes or count > self.max_headers:
            return HEAD_TOO_LARGE
        allowed = self.policy.allows(
            None if origin is None else origin.decode("latin-1"),
            None if host is None else host.decode("latin-1"),
            server,
        )
        return None if allowed else FORBIDDEN_ORIGIN

    def take_slot(self) -> bool:
        """Count a new connection in; False (count unchanged) when the server is full."""
        if self.max_connections is not None and self.open_connections >= self.max_connections:
            return False
        self.open_connections += 1
        return True

    def release_slot(self) -> None:
        """A connection counted in by :meth:`take_slot` ended."""
        self.open_connections -= 1
