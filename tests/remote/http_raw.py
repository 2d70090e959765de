"""Raw Streamable HTTP helpers for the server tests: httpx requests and SSE frames read as
bytes (each ending ``\\n\\n``, as the server writes them), no client library."""

from __future__ import annotations

import json
from collections.abc import AsyncGenerator, AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import anyio
import httpx

from .hypercorn_server import serving

INITIALIZE: dict[str, Any] = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {"protocolVersion": 1},
}
SSE = {"accept": "text/event-stream"}


def new_session(request_id: int = 2) -> dict[str, Any]:
    params = {"cwd": "/tmp", "mcpServers": []}
    return {"jsonrpc": "2.0", "id": request_id, "method": "session/new", "params": params}


def prompt(request_id: int, session_id: str, text: str) -> dict[str, Any]:
    params = {"sessionId": session_id, "prompt": [{"type": "text", "text": text}]}
    return {"jsonrpc": "2.0", "id": request_id, "method": "session/prompt", "params": params}


class Peer:
    """One client of one server: an httpx client and the URL."""

    def __init__(self, client: httpx.AsyncClient, url: str) -> None:
        self.client = client
        self.url = url

    async def post(
        self, message: object, headers: dict[str, str] | None = None, **kwargs: Any
    ) -> httpx.Response:
        body = message if isinstance(message, bytes) else json.dumps(message).encode()
        all_headers = {"content-type": "application/json", **(headers or {})}
        return await self.client.post(self.url, content=body, headers=all_headers, **kwargs)

    async def initialize(self) -> str:
        answer = await self.post(INITIALIZE)
        assert answer.status_code == 200, answer.text
        return answer.headers["acp-connection-id"]

    @asynccontextmanager
    async def stream(
        self, connection_id: str, session_id: str | None = None
    ) -> AsyncGenerator[Frames, None]:
        headers = {**SSE, "acp-connection-id": connection_id}
        if session_id is not None:
            headers["acp-session-id"] = session_id
        async with self.client.stream("GET", self.url, headers=headers) as response:
            yield Frames(response)


class Frames:
    """The raw SSE frames of one GET."""

    def __init__(self, response: httpx.Response) -> None:
        self.response = response
        self._chunks: AsyncIterator[bytes] = response.aiter_raw()
        self._buffer = b""

    async def next(self, wait: float = 5) -> bytes:
        """The next frame, bytes exactly as sent (``data: ...\\n\\n`` or ``:\\n\\n``)."""
        with anyio.fail_after(wait):
            while b"\n\n" not in self._buffer:
                self._buffer += await self._chunks.__anext__()
        frame, _, self._buffer = self._buffer.partition(b"\n\n")
        return frame + b"\n\n"

    async def message(self, wait: float = 5) -> Any:
        """The next event's JSON, keep-alive comments skipped."""
        while (frame := await self.next(wait)) == b":\n\n":
            pass
        assert frame.startswith(b"data: ")
        return json.loads(frame[6:])

    async def rest(self, wait: float = 5) -> bytes:
        """Everything until the server ends the body."""
        with anyio.fail_after(wait):
            async for chunk in self._chunks:
                self._buffer += chunk
        rest, self._buffer = self._buffer, b""
        return rest


@asynccontextmanager
async def peer(app: Any) -> AsyncGenerator[Peer, None]:
    async with serving(app) as port:
        limits = httpx.Limits(max_connections=50, max_keepalive_connections=50)
        async with httpx.AsyncClient(timeout=10, limits=limits) as client:
            yield Peer(client, f"http://127.0.0.1:{port}/acp")
