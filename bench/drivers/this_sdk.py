"""Driver for this SDK: the client in this process, ``bench/peers/this_agent.py`` as a child."""

from __future__ import annotations

import os
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio

from acp_generated.v1 import (
    AgentMessageChunkSessionUpdate,
    ClientHandler,
    InitializeRequest,
    NewSessionRequest,
    PromptRequest,
    SessionNotification,
    TextContentBlock,
)
from acp_runtime import Connection, ConnectionBuilder, RequestError, Transport, spawn_agent
from bench.drivers.harness import AgentStats, BenchClient, main
from bench.profiling import python_command

AGENT = Path(__file__).resolve().parents[1] / "peers" / "this_agent.py"


class _Updates(ClientHandler):
    """Counts message chunks; sets ``ready`` on the next one while it is armed."""

    def __init__(self) -> None:
        self.chunks = 0
        self.ready: anyio.Event | None = None

    async def session_update(self, params: SessionNotification, cx: Connection) -> None:
        if isinstance(params.update, AgentMessageChunkSessionUpdate):
            self.chunks += 1
            if self.ready is not None:
                self.ready.set()


class ThisSdkClient:
    cancel_mechanism = "$/cancel_request"

    def __init__(self, cx: Connection, updates: _Updates, session_id: str) -> None:
        self._cx = cx
        self._updates = updates
        self._session_id = session_id

    def _prompt_request(self, text: str) -> PromptRequest:
        return PromptRequest(
            session_id=self._session_id, prompt=[TextContentBlock(type="text", text=text)]
        )

    async def ping(self, i: int) -> None:
        await self._cx.send_raw_request("_echo/ping", {"n": i})

    async def prompt(self, text: str) -> None:
        await self._cx.send_request(self._prompt_request(text))

    async def stream(self, n: int, size: int) -> int:
        self._updates.chunks = 0
        await self.prompt(f"chunks {n} size {size}")
        return self._updates.chunks

    async def cancel_latency_ns(self) -> int:
        ready = self._updates.ready = anyio.Event()
        sent = self._cx.send_request(self._prompt_request("wait-cancel"))
        with anyio.fail_after(5):
            await ready.wait()
        self._updates.ready = None
        start = time.perf_counter_ns()
        sent.cancel()
        try:
            with anyio.fail_after(5):
                await sent
        except RequestError as error:
            data: Any = error.data
            return int(data["observedNs"]) - start
        raise RuntimeError("wait-cancel was answered without an error")

    async def agent_stats(self) -> AgentStats:
        answer: Any = await self._cx.send_raw_request("_bench/stats")
        return AgentStats(
            max_rss_kb=int(answer["maxRssKb"]),
            cpu_ns=int(answer["cpuNs"]),
            async_library=str(answer["asyncLibrary"]),
        )


@asynccontextmanager
async def open_client() -> AsyncIterator[BenchClient]:
    updates = _Updates()
    builder = ConnectionBuilder(role="client")
    updates.attach(builder)
    async with agent_transport() as transport, builder.connect(transport) as cx:
        await cx.send_request(InitializeRequest(protocol_version=1))
        session = await cx.send_request(NewSessionRequest(cwd=os.getcwd(), mcp_servers=[]))
        yield ThisSdkClient(cx, updates, session.session_id)


@asynccontextmanager
async def agent_transport() -> AsyncIterator[Transport]:
    """The agent's pipes, or with ``BENCH_TRANSPORT=websocket`` (``http``) a WebSocket
    (Streamable HTTP) connection to it (it prints its port, and stops when its stdin
    closes)."""
    kind = os.environ.get("BENCH_TRANSPORT")
    if kind not in ("websocket", "http"):
        async with spawn_agent(python_command(AGENT)) as agent:
            yield agent.transport
        return
    from acp_runtime.remote import connect_remote

    async with await anyio.open_process(python_command(AGENT), stderr=None) as process:
        assert process.stdout is not None and process.stdin is not None
        port = int((await process.stdout.receive()).decode().split()[0])
        try:
            scheme = "ws" if kind == "websocket" else "http"
            async with connect_remote(f"{scheme}://127.0.0.1:{port}/acp") as transport:
                yield transport
        finally:
            await process.stdin.aclose()
            await process.wait()


if __name__ == "__main__":
    main(open_client)
