"""Driver for the PyPI package ``agent-client-protocol`` (module ``acp``), client in this
process, ``bench/peers/pypi_agent.py`` as a child.

The package has no request cancellation, so the cancel workload uses its one
cancellation mechanism, ``session/cancel``, and reports it as the mechanism.
"""

from __future__ import annotations

import asyncio
import os
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

from acp.client.connection import ClientSideConnection
from acp.schema import AgentMessageChunk, PromptResponse, TextContentBlock
from acp.stdio import spawn_agent_process

from bench.drivers.harness import AgentStats, BenchClient, main
from bench.profiling import python_command

AGENT = Path(__file__).resolve().parents[1] / "peers" / "pypi_agent.py"


class _Updates:
    """The package's ``Client`` side: counts message chunks, sets ``ready`` when armed."""

    def __init__(self) -> None:
        self.chunks = 0
        self.ready: asyncio.Event | None = None

    async def session_update(self, session_id: str, update: Any, **kwargs: Any) -> None:
        if isinstance(update, AgentMessageChunk):
            self.chunks += 1
            if self.ready is not None:
                self.ready.set()


class PypiClient:
    cancel_mechanism = "session/cancel"

    def __init__(self, conn: ClientSideConnection, updates: _Updates, session_id: str) -> None:
        self._conn = conn
        self._updates = updates
        self._session_id = session_id

    async def ping(self, i: int) -> None:
        await self._conn.ext_method("echo/ping", {"n": i})

    async def _prompt(self, text: str) -> PromptResponse:
        return await self._conn.prompt(
            session_id=self._session_id, prompt=[TextContentBlock(type="text", text=text)]
        )

    async def prompt(self, text: str) -> None:
        await self._prompt(text)

    async def stream(self, n: int, size: int) -> int:
        self._updates.chunks = 0
        await self._prompt(f"chunks {n} size {size}")
        return self._updates.chunks

    async def cancel_latency_ns(self) -> int:
        ready = self._updates.ready = asyncio.Event()
        turn = asyncio.ensure_future(self._prompt("wait-cancel"))
        await asyncio.wait_for(ready.wait(), 5)
        self._updates.ready = None
        start = time.perf_counter_ns()
        await self._conn.cancel(session_id=self._session_id)
        response = await asyncio.wait_for(turn, 5)
        assert response.field_meta is not None
        return int(response.field_meta["observedNs"]) - start

    async def agent_stats(self) -> AgentStats:
        answer = await self._conn.ext_method("bench/stats", {})
        return AgentStats(max_rss_kb=int(answer["maxRssKb"]), cpu_ns=int(answer["cpuNs"]))


@asynccontextmanager
async def open_client() -> AsyncIterator[BenchClient]:
    updates = _Updates()
    async with spawn_agent_process(
        updates,  # type: ignore[arg-type]  # implements only what the agent calls
        *python_command(AGENT),
        transport_kwargs={"stderr": None},
    ) as (conn, _process):
        await conn.initialize(protocol_version=1)
        session = await conn.new_session(cwd=os.getcwd(), mcp_servers=[])
        yield PypiClient(conn, updates, session.session_id)


if __name__ == "__main__":
    main(open_client)
