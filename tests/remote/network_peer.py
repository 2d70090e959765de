"""Raw requests for the network-safety tests: a request head written by hand (any Origin,
Host or number of headers, which HTTP clients normalise or refuse to send), and the
status the server answers with."""

from __future__ import annotations

import json
from collections.abc import AsyncGenerator, Callable
from contextlib import asynccontextmanager
from typing import Any

import anyio
import anyio.abc

from acp_runtime import ConnectionBuilder, Responder

KEY = "dGhlIHNhbXBsZSBub25jZQ=="
INITIALIZE = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": 1}}


def head(
    method: str, port: int, headers: dict[str, str] | None = None, *, host: str | None = None
) -> bytes:
    """A request head for ``/acp`` with ``Host: 127.0.0.1:<port>`` (or ``host``) and
    ``headers``; a WebSocket upgrade when ``method`` is ``UPGRADE``."""
    fields = {"Host": host if host is not None else f"127.0.0.1:{port}"}
    if method == "UPGRADE":
        method = "GET"
        fields |= {
            "Upgrade": "websocket",
            "Connection": "Upgrade",
            "Sec-WebSocket-Key": KEY,
            "Sec-WebSocket-Version": "13",
        }
    fields |= headers or {}
    lines = [f"{method} /acp HTTP/1.1", *(f"{name}: {value}" for name, value in fields.items())]
    return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1")


def initialize_post(port: int, headers: dict[str, str] | None = None, **kw: Any) -> bytes:
    body = json.dumps(INITIALIZE).encode()
    fields = {"Content-Type": "application/json", "Content-Length": str(len(body))}
    return head("POST", port, fields | (headers or {}), **kw) + body


async def read_head(stream: anyio.abc.ByteStream, wait: float = 5) -> tuple[int, bytes, bytes]:
    """The answer's status, its head and what came behind it."""
    data = b""
    with anyio.fail_after(wait):
        while b"\r\n\r\n" not in data:
            try:
                chunk = await stream.receive()
            except (anyio.EndOfStream, anyio.BrokenResourceError):
                break
            data += chunk
    answer, _, rest = data.partition(b"\r\n\r\n")
    status = int(answer.split(b" ", 2)[1]) if answer.startswith(b"HTTP/") else 0
    return status, answer, rest


@asynccontextmanager
async def opened(port: int, request: bytes) -> AsyncGenerator[tuple[int, bytes, Any], None]:
    """Send ``request`` on a new socket; yield (status, head, the socket) while it is open."""
    async with await anyio.connect_tcp("127.0.0.1", port) as stream:
        await stream.send(request)
        status, answer, _ = await read_head(stream)
        yield status, answer, stream


async def status_of(port: int, request: bytes) -> int:
    async with opened(port, request) as (status, _, _):
        return status


def waiting_agent(entered: anyio.Event, cancelled: anyio.Event) -> Callable[[], Any]:
    """An agent whose ``session/prompt`` waits until it is cancelled (and says so)."""

    def agent() -> ConnectionBuilder:
        builder = ConnectionBuilder(role="untyped")

        async def answer(method: str, params: Any, responder: Responder[Any]) -> Any:
            if method == "initialize":
                return {"protocolVersion": 1}
            if method == "session/new":
                return {"sessionId": "s1"}
            if method == "session/prompt":
                entered.set()
                try:
                    await anyio.sleep_forever()
                finally:
                    cancelled.set()
            return {}

        builder.on_raw_request(answer)
        return builder

    return agent
