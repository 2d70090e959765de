"""Driver for the floor: a client with no SDK (asyncio pipe transports, :mod:`json`,
one future per request) against ``bench/peers/floor_agent.py``.

Not a peer to beat: it skips everything an SDK is for (models, validation,
cancellation semantics, settlement on close). It measures what the same workloads cost
on this machine's pipes, event loop and JSON codec alone, the bound under every
Python implementation's figures. With ``BENCH_TRANSPORT=websocket`` the same client speaks
WebSocket to the floor agent's socket (``bench/peers/floor_websocket.py``): what the
socket and RFC 6455 framing add, with no SDK on either side.
"""

from __future__ import annotations

import asyncio
import base64
import itertools
import json
import os
import subprocess
import sys
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

from bench.drivers.harness import AgentStats, BenchClient, main
from bench.peers.floor_websocket import (
    accept_key,
    client_frame,
    handshake_request,
    unmasked_frames,
)

AGENT = Path(__file__).resolve().parents[1] / "peers" / "floor_agent.py"
KEY = base64.b64encode(b"floor-bench-key!")
"""The handshake's ``Sec-WebSocket-Key``: 16 bytes, base64 (fixed: the floor is no client
to trust)."""


class FloorClient(asyncio.Protocol):
    cancel_mechanism = "$/cancel_request"

    def __init__(self) -> None:
        self._ids = itertools.count()
        self._pending: dict[int, asyncio.Future[Any]] = {}
        self._buffer = b""
        self.out: asyncio.WriteTransport | None = None
        self.chunks = 0
        self.ready: asyncio.Event | None = None

    def data_received(self, data: bytes) -> None:
        *lines, self._buffer = (self._buffer + data).split(b"\n")
        for line in lines:
            self._receive(json.loads(line))

    def _receive(self, message: dict[str, Any]) -> None:
        if "id" in message:
            future = self._pending.pop(message["id"])
            if "error" in message:
                future.set_exception(LookupError(message["error"]))
            else:
                future.set_result(message["result"])
        elif message["params"]["update"]["sessionUpdate"] == "agent_message_chunk":
            self.chunks += 1
            if self.ready is not None:
                self.ready.set()

    def _send(self, message: dict[str, Any]) -> None:
        self._write(json.dumps(message, separators=(",", ":")).encode())

    def _write(self, payload: bytes) -> None:
        assert self.out is not None
        self.out.write(payload + b"\n")

    def _request(self, method: str, params: Any) -> tuple[int, asyncio.Future[Any]]:
        request_id = next(self._ids)
        future = self._pending[request_id] = asyncio.get_running_loop().create_future()
        self._send({"jsonrpc": "2.0", "id": request_id, "method": method, "params": params})
        return request_id, future

    async def call(self, method: str, params: Any) -> Any:
        return await self._request(method, params)[1]

    async def ping(self, i: int) -> None:
        await self.call("_echo/ping", {"n": i})

    def _prompt_params(self, text: str) -> dict[str, Any]:
        return {"sessionId": "bench-1", "prompt": [{"type": "text", "text": text}]}

    async def prompt(self, text: str) -> None:
        await self.call("session/prompt", self._prompt_params(text))

    async def stream(self, n: int, size: int) -> int:
        self.chunks = 0
        await self.prompt(f"chunks {n} size {size}")
        return self.chunks

    async def cancel_latency_ns(self) -> int:
        ready = self.ready = asyncio.Event()
        request_id, answer = self._request("session/prompt", self._prompt_params("wait-cancel"))
        await asyncio.wait_for(ready.wait(), 5)
        self.ready = None
        start = time.perf_counter_ns()
        cancel = {"requestId": request_id}
        self._send({"jsonrpc": "2.0", "method": "$/cancel_request", "params": cancel})
        try:
            await asyncio.wait_for(answer, 5)
        except LookupError as error:
            return int(error.args[0]["data"]["observedNs"]) - start
        raise RuntimeError("wait-cancel was answered without an error")

    async def agent_stats(self) -> AgentStats:
        answer = await self.call("_bench/stats", {})
        return AgentStats(max_rss_kb=int(answer["maxRssKb"]), cpu_ns=int(answer["cpuNs"]))


class WebSocketFloorClient(FloorClient):
    """The same client on a socket: one masked text frame per message."""

    def __init__(self) -> None:
        super().__init__()
        self.opened: asyncio.Future[None] = asyncio.get_running_loop().create_future()

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.out = transport  # type: ignore[assignment]

    def data_received(self, data: bytes) -> None:
        self._buffer += data
        if not self.opened.done():
            head, found, self._buffer = self._buffer.partition(b"\r\n\r\n")
            assert found and accept_key(KEY) in head, head
            self.opened.set_result(None)
        messages, self._buffer = unmasked_frames(self._buffer)
        for message in messages:
            self._receive(json.loads(message))

    def _write(self, payload: bytes) -> None:
        assert self.out is not None
        self.out.write(client_frame(payload))


@asynccontextmanager
async def open_client() -> AsyncIterator[BenchClient]:
    if os.environ.get("BENCH_TRANSPORT") == "websocket":
        async with open_websocket_client() as client:
            yield client
        return
    loop = asyncio.get_running_loop()
    # Popen returns at once; its two pipes are then handed to the loop.
    process = subprocess.Popen(  # noqa: ASYNC220
        [sys.executable, str(AGENT)], stdin=subprocess.PIPE, stdout=subprocess.PIPE
    )
    assert process.stdin is not None and process.stdout is not None
    client = FloorClient()
    read_transport, _ = await loop.connect_read_pipe(lambda: client, process.stdout)
    client.out, _ = await loop.connect_write_pipe(asyncio.Protocol, process.stdin)
    try:
        await client.call("initialize", {"protocolVersion": 1})
        await client.call("session/new", {"cwd": os.getcwd(), "mcpServers": []})
        yield client
    finally:
        client.out.close()  # the agent reads EOF and exits
        read_transport.close()
        await asyncio.to_thread(process.wait, 10)


@asynccontextmanager
async def open_websocket_client() -> AsyncIterator[BenchClient]:
    loop = asyncio.get_running_loop()
    process = await asyncio.create_subprocess_exec(
        sys.executable, str(AGENT), stdin=subprocess.PIPE, stdout=subprocess.PIPE
    )
    assert process.stdin is not None and process.stdout is not None
    port = int((await process.stdout.readline()).split()[0])
    transport, client = await loop.create_connection(WebSocketFloorClient, "127.0.0.1", port)
    try:
        transport.write(handshake_request(port, KEY))
        await client.opened
        await client.call("initialize", {"protocolVersion": 1})
        await client.call("session/new", {"cwd": os.getcwd(), "mcpServers": []})
        yield client
    finally:
        transport.close()
        process.stdin.close()  # the agent stops serving
        await asyncio.wait_for(process.wait(), 10)


if __name__ == "__main__":
    main(open_client)
