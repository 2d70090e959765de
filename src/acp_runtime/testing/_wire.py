"""Test helpers: drive a connection with raw JSON and record what it writes.

:class:`WirePeer` plays the far end of an in-memory pair, so a test can send exact
bytes (including malformed ones) and assert the exact messages the connection sends
back, in order (:func:`request`, :func:`notification`, :func:`cancel`, :func:`result`
and :func:`error` build the messages)::

    async with wire_connection(builder) as (cx, peer):
        await peer.send({"jsonrpc": "2.0", "id": 0, "method": "x"})
        assert (await peer.receive())["id"] == 0
"""

from __future__ import annotations

import itertools
import json
from collections.abc import AsyncGenerator
from contextlib import asynccontextmanager
from typing import Any

import anyio

from .._builder import ConnectionBuilder
from .._connection import Connection
from .._memory import MemoryTransport, memory_pair
from .._methods import JsonValue

_BARRIER_PREFIX = "acp-test-barrier-"


class WirePeer:
    """Raw JSON end of a memory pair. Every message received is kept in :attr:`log`."""

    def __init__(self, transport: MemoryTransport) -> None:
        self._transport = transport
        self._barrier_ids = itertools.count()
        self.log: list[Any] = []
        """Every message received from the connection, in order (barrier replies excluded)."""

    async def send(self, message: JsonValue | bytes) -> None:
        """Send a JSON value, or raw bytes exactly as given."""
        data = message if isinstance(message, bytes) else json.dumps(message).encode()
        await self._transport.send(data)

    async def receive(self) -> Any:
        """The next message the connection sent (waits up to 5 s)."""
        with anyio.fail_after(5):
            data = await self._transport.receive()
        message = json.loads(data)
        self.log.append(message)
        return message

    async def receive_nothing_until_barrier(self) -> None:
        """Assert the connection sends nothing before answering a barrier."""
        extra = await self.barrier()
        assert not extra, f"unexpected messages before the barrier: {extra}"

    async def barrier(self) -> list[Any]:
        """Round-trip a message: when its answer arrives, every message sent before it has
        been dispatched. Returns the messages received meanwhile.

        The barrier is a unique non-JSON line: the runtime answers it with -32700 whatever
        handlers are registered, echoing the line in ``data``.
        """
        line = f"{_BARRIER_PREFIX}{next(self._barrier_ids)}"
        await self.send(line.encode())
        expected = {
            "jsonrpc": "2.0",
            "id": None,
            "error": {"code": -32700, "message": "Parse error", "data": {"line": line}},
        }
        before: list[Any] = []
        while True:
            message = await self.receive()
            if message == expected:  # pyright: ignore[reportUnknownMemberType]
                self.log.pop()
                return before
            before.append(message)

    def close(self) -> None:
        """End the peer's side: the connection reads EOF."""
        self._transport.close_send()


@asynccontextmanager
async def wire_connection(
    builder: ConnectionBuilder,
) -> AsyncGenerator[tuple[Connection, WirePeer], None]:
    """A connection built by ``builder`` whose counterpart is a :class:`WirePeer`. Both
    ends are closed on the way out (an end left open warns when it is collected)."""
    ours, theirs = memory_pair()
    try:
        async with builder.connect(ours) as connection:
            yield connection, WirePeer(theirs)
    finally:
        await theirs.aclose()


def request(
    request_id: JsonValue, method: str = "test/ask", params: JsonValue = None
) -> dict[str, Any]:
    """A JSON-RPC request as the peer would send it (``params`` left out when ``None``)."""
    message: dict[str, Any] = {"jsonrpc": "2.0", "id": request_id, "method": method}
    if params is not None:
        message["params"] = params
    return message


def notification(method: str, params: JsonValue = None) -> dict[str, Any]:
    """A JSON-RPC notification (``params`` left out when ``None``)."""
    message: dict[str, Any] = {"jsonrpc": "2.0", "method": method}
    if params is not None:
        message["params"] = params
    return message


def cancel(request_id: JsonValue) -> dict[str, Any]:
    """``$/cancel_request`` for ``request_id``."""
    return notification("$/cancel_request", {"requestId": request_id})


def result(request_id: JsonValue, value: JsonValue) -> dict[str, Any]:
    """A success response."""
    return {"jsonrpc": "2.0", "id": request_id, "result": value}


def error(request_id: JsonValue, code: int, message: str, data: JsonValue = None) -> dict[str, Any]:
    """An error response (``data`` left out when ``None``)."""
    err: dict[str, Any] = {"code": code, "message": message}
    if data is not None:
        err["data"] = data
    return {"jsonrpc": "2.0", "id": request_id, "error": err}
