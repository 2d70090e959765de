"""A scripted Streamable HTTP server inside the test process (an httpx ``MockTransport``):
it records every request, answers ``initialize``, keeps one SSE stream per key (None for
the connection, else the session id) that the test pushes messages into or ends, and
lets a test choose any status."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field
from http.cookiejar import CookieJar, DefaultCookiePolicy
from typing import Any

import anyio
import httpx
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream

CONNECTION_ID = "conn-1"


@dataclass
class Seen:
    """One request the server got (``body`` parsed for POSTs)."""

    method: str
    headers: httpx.Headers
    body: Any = None
    timeout: dict[str, float | None] = field(default_factory=dict[str, "float | None"])

    @property
    def session(self) -> str | None:
        return self.headers.get("acp-session-id")


@dataclass
class _Stream:
    tx: MemoryObjectSendStream[bytes]
    rx: MemoryObjectReceiveStream[bytes]
    opened: anyio.Event = field(default_factory=anyio.Event)


PostHook = Callable[["FakeServer", Seen], Awaitable[httpx.Response | None]]


class FakeServer:
    def __init__(self) -> None:
        self.seen: list[Seen] = []
        self.set_cookies: list[str] = []
        """``Set-Cookie`` values added to every response."""
        self.get_status: dict[str | None, int] = {}
        """A status to answer a stream's GET with instead of opening it."""
        self.on_post: PostHook | None = None
        """Called for each POST but initialize; its response, if any, replaces the 202."""
        self.initialize_response: httpx.Response | None = None
        self._streams: dict[str | None, _Stream] = {}

    def client(self) -> httpx.AsyncClient:
        """A client for this server whose own cookie jar keeps nothing (as the one
        ``connect_http`` makes: the transport's store is the only one)."""
        refuse_all = CookieJar(policy=DefaultCookiePolicy(allowed_domains=[]))
        return httpx.AsyncClient(transport=httpx.MockTransport(self._handle), cookies=refuse_all)

    # -- what the test does ------------------------------------------------------------------

    def stream(self, key: str | None) -> _Stream:
        stream = self._streams.get(key)
        if stream is None:
            tx, rx = anyio.create_memory_object_stream[bytes](1000)
            stream = self._streams[key] = _Stream(tx, rx)
        return stream

    async def push(self, key: str | None, message: dict[str, Any]) -> None:
        """Queue ``message`` as one event on a stream (buffered until its GET reads)."""
        frame = b"data: " + json.dumps(message, separators=(",", ":")).encode() + b"\n\n"
        await self.push_raw(key, frame)

    async def push_raw(self, key: str | None, data: bytes) -> None:
        # no checkpoint between finding the stream and queueing: an end() racing with it
        # (another request's handler) closes either the stream before or the one after
        self.stream(key).tx.send_nowait(data)

    def end(self, key: str | None) -> None:
        """End a stream's response (EOF); a later GET opens a new one."""
        self._streams.pop(key, self.stream(key)).tx.close()

    async def opened(self, key: str | None) -> None:
        await self.stream(key).opened.wait()

    def posts(self) -> list[Seen]:
        return [seen for seen in self.seen if seen.method == "POST"]

    def methods(self) -> list[object]:
        """What was POSTed, as the method (requests, notifications) or the answered id."""
        return [p.body.get("method", ("answer", p.body.get("id"))) for p in self.posts()]

    # -- the server ------------------------------------------------------------------------

    async def _handle(self, request: httpx.Request) -> httpx.Response:
        body = await request.aread()
        seen = Seen(
            request.method,
            request.headers,
            json.loads(body) if body else None,
            request.extensions.get("timeout", {}),
        )
        self.seen.append(seen)
        response = await self._answer(seen)
        cookies = [("set-cookie", cookie) for cookie in self.set_cookies]
        return httpx.Response(
            response.status_code,
            headers=[*response.headers.multi_items(), *cookies],
            stream=response.stream,
        )

    async def _answer(self, seen: Seen) -> httpx.Response:
        if seen.method == "DELETE":
            return httpx.Response(202)
        if seen.method == "GET":
            key = seen.session
            status = self.get_status.get(key)
            if status is not None:
                return httpx.Response(status, text=f"stream refused ({status})")
            stream = self.stream(key)
            stream.opened.set()
            return httpx.Response(
                200, headers={"content-type": "text/event-stream"}, content=_frames(stream.rx)
            )
        if seen.body.get("method") == "initialize":
            if self.initialize_response is not None:
                return self.initialize_response
            answer = {"jsonrpc": "2.0", "id": seen.body["id"], "result": {"protocolVersion": 1}}
            return httpx.Response(200, headers={"acp-connection-id": CONNECTION_ID}, json=answer)
        if self.on_post is not None:
            response = await self.on_post(self, seen)
            if response is not None:
                return response
        return httpx.Response(202)


async def _frames(rx: MemoryObjectReceiveStream[bytes]) -> AsyncIterator[bytes]:
    async for frame in rx:
        yield frame
