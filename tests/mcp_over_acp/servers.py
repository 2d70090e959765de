"""The MCP servers and the ACP pair the MCP-over-ACP tests run against."""

from __future__ import annotations

import time
from collections.abc import AsyncGenerator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Any

import anyio
import pytest

pytest.importorskip("mcp")

from mcp.server.mcpserver import Context, MCPServer

from acp_runtime import Connection, ConnectionBuilder, memory_pair
from acp_runtime.mcp import McpCaller, McpProvider


@dataclass
class ToolProbe:
    """What the slow tool saw, for a test to wait on."""

    started: anyio.Event = field(default_factory=anyio.Event)
    cancelled: anyio.Event = field(default_factory=anyio.Event)
    cancelled_at: float | None = None
    calls: list[str] = field(default_factory=list[str])


def tools_server(probe: ToolProbe) -> MCPServer[Any]:
    """``echo`` (one progress notification), ``slow`` (waits until cancelled), ``boom``."""
    app: MCPServer[Any] = MCPServer("tools")

    @app.tool()
    async def echo(text: str, ctx: Context) -> str:
        probe.calls.append(text)
        await ctx.report_progress(1, 2, "half way")
        return f"echo: {text}"

    @app.tool()
    async def slow(ctx: Context) -> str:
        probe.started.set()
        await ctx.report_progress(0, None, "started")  # tells a remote caller it runs
        try:
            await anyio.sleep_forever()
        finally:
            probe.cancelled_at = time.perf_counter()
            probe.cancelled.set()
        return "never"  # pragma: no cover

    @app.tool()
    async def boom() -> str:
        raise RuntimeError("the tool broke")

    return app


@dataclass
class Pair:
    """An editor (client, providing) and an agent (calling) over a memory pair."""

    client: Connection
    agent: Connection
    provider: McpProvider
    caller: McpCaller


@asynccontextmanager
async def acp_pair(
    agent_builder: ConnectionBuilder | None = None, provider: McpProvider | None = None
) -> AsyncGenerator[Pair, None]:
    provider = provider or McpProvider()
    caller = McpCaller(client_info={"name": "test-agent", "version": "1"})
    client_builder = provider.attach(ConnectionBuilder(role="client"))
    agent_builder = caller.attach(agent_builder or ConnectionBuilder(role="agent"))
    ours, theirs = memory_pair()
    async with client_builder.connect(ours) as client, agent_builder.connect(theirs) as agent:
        yield Pair(client, agent, provider, caller)
