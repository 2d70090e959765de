"""The transport seam: a connection exchanges whole messages, a transport frames them.

A connection only needs to receive one complete JSON text at a time and to send one;
how the bytes are delimited (newline-delimited JSON over pipes, or Python objects in
memory) is the transport's business.
"""

from __future__ import annotations

from typing import Protocol


class MessageTooLarge(Exception):
    """An incoming message exceeded the transport's size limit.

    Raised by :meth:`Transport.receive` after the oversized message has been skipped,
    so the connection can answer with an error and keep reading. When the stream
    cannot resynchronize (no newline before EOF) the next ``receive`` raises
    :class:`anyio.EndOfStream` instead.
    """

    def __init__(self, limit: int, prefix: bytes = b"") -> None:
        super().__init__(f"incoming message larger than {limit} bytes")
        self.limit = limit
        self.prefix = prefix
        """The first bytes of the skipped message, for an error reply's id lookup and logs."""


class Transport(Protocol):
    """A bidirectional stream of whole messages (JSON texts, without framing)."""

    async def receive(self) -> bytes:
        """Next complete message. Raises :class:`anyio.EndOfStream` at clean EOF,
        :class:`MessageTooLarge` for a skipped over-limit message, or
        :class:`anyio.BrokenResourceError` when the stream failed."""
        ...

    async def send(self, message: bytes) -> None:
        """Send one message; the transport adds framing. Raises
        :class:`anyio.BrokenResourceError` or :class:`anyio.ClosedResourceError`
        when the peer is gone."""
        ...

    async def aclose(self) -> None:
        """Close both directions; idempotent."""
        ...
