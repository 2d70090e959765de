"""MCP over ACP against the TypeScript SDK 2.4.0, both ways, over real pipes.

* Our provider (an MCP SDK ``MCPServer`` behind ``McpProvider``) serves a TS agent that
  calls it with ``McpOverAcpCaller`` (peers/mcp_agent.mjs).
* Our caller (examples/mcp_agent.py, an MCP SDK ``ClientSession`` over ACP) calls a TS
  client that provides servers with ``McpOverAcpProvider``: a hand-written handler and an
  ``@modelcontextprotocol/server`` ``McpServer`` through ``fromMcpServer``
  (peers/mcp_client.mjs).
"""

from __future__ import annotations

import json
import sys
from typing import Any

import anyio
import pytest

pytest.importorskip("mcp")

from acp_generated.v1.unstable import (
    AcpMcpServer,
    AgentMessageChunkSessionUpdate,
    ClientHandler,
    Implementation,
    InitializeRequest,
    NewSessionRequest,
    PromptRequest,
    SessionNotification,
    TextContentBlock,
)
from acp_runtime import Connection, ConnectionBuilder, spawn_agent
from acp_runtime.mcp import McpProvider, accepts_mcp_over_acp
from tests.mcp_over_acp.servers import ToolProbe, tools_server

from .node_peers import PEERS_DIR, REPO_ROOT, _run_node

MCP_AGENT_EXAMPLE = REPO_ROOT / "examples" / "mcp_agent.py"


class Chunks(ClientHandler):
    def __init__(self) -> None:
        self.texts: list[str] = []

    async def session_update(self, params: SessionNotification, cx: Connection) -> None:
        update = params.update
        if isinstance(update, AgentMessageChunkSessionUpdate) and isinstance(
            update.content, TextContentBlock
        ):
            self.texts.append(update.content.text)


@pytest.mark.anyio
async def test_ts_agent_calls_our_provider_with_mcp_over_acp_caller(node: str) -> None:
    probe = ToolProbe()
    chunks = Chunks()
    provider = McpProvider()
    builder = ConnectionBuilder(role="client")
    chunks.attach(builder)
    provider.attach(builder)
    command = [node, str(PEERS_DIR / "mcp_agent.mjs")]
    async with spawn_agent(command, stderr="discard") as process, builder.connect(process) as cx:
        tools = provider.register(cx, tools_server(probe), name="tools", server_id="srv-1")
        with anyio.fail_after(15):  # includes Node's start
            init = await cx.send_request(
                InitializeRequest(
                    protocol_version=1, client_info=Implementation(name="py-editor", version="1")
                )
            )
            session = await cx.send_request(
                NewSessionRequest(cwd="/", mcp_servers=[tools.declaration_as(AcpMcpServer)])
            )
            text = [TextContentBlock(type="text", text="go")]
            answer = await cx.send_request(
                PromptRequest(session_id=session.session_id, prompt=text)
            )
            await probe.cancelled.wait()
    assert accepts_mcp_over_acp(init)
    assert answer.stop_reason == "end_turn"
    out: dict[str, Any] = json.loads(chunks.texts[0])
    assert [tool["name"] for tool in out["list"]["result"]["tools"]] == ["echo", "slow", "boom"]
    assert out["call"] == {
        "result": {
            "content": [{"type": "text", "text": "echo: from ts"}],
            "structuredContent": {"result": "echo: from ts"},
            "isError": False,
            "resultType": "complete",
            "_meta": {"io.modelcontextprotocol/serverInfo": {"name": "tools", "version": ""}},
        }
    }
    assert out["notes"] == [
        {
            "method": "notifications/progress",
            "params": {"progressToken": "p-1", "progress": 1, "total": 2, "message": "half way"},
        }
    ]
    assert out["badTool"]["result"]["isError"] is True
    assert out["badMethod"]["error"]["code"] == -32601
    assert out["outer"] == -33001
    assert out["cancel"] == -32800  # and the tool saw its cancellation (probe.cancelled)
    assert probe.calls == ["from ts"]


def run_ts_mcp_client(node: str, agent: list[str], timeout: float = 30.0) -> list[dict[str, Any]]:
    """Run peers/mcp_client.mjs against ``agent``; its events, one per printed line."""
    return _run_node([node, str(PEERS_DIR / "mcp_client.mjs"), "--", *agent], timeout)


@pytest.mark.parametrize("backend", ["asyncio", "trio"])
def test_our_agent_calls_a_ts_client_with_mcp_over_acp_provider(node: str, backend: str) -> None:
    events = run_ts_mcp_client(
        node, [sys.executable, str(MCP_AGENT_EXAMPLE), "--backend", backend, "--quiet"]
    )
    by_kind: dict[str, list[dict[str, Any]]] = {}
    for event in events:
        by_kind.setdefault(event["event"], []).append(event)
    assert by_kind["initialize"][0]["mcpAcp"] is True
    texts = [e["text"] for e in by_kind["chunk"]]
    assert texts == [
        # `tools`: the hand-written TS handler, the fromMcpServer McpServer, the bogus one
        "tools: echo, slow",
        "tools: shout",
        "unknown server: -33001",
        # tools/call with progress, on each
        "progress: 1/2 half way",
        "echo: hi from python",
        "progress: 1/1 shouting",
        "SHOUT: HI FROM PYTHON",
    ]
    responses = [e["stopReason"] for e in by_kind["prompt_response"]]
    assert responses == ["end_turn", "end_turn", "end_turn", "cancelled"]
    # The prompt's session/cancel cancelled the MCP call: the TS handler's signal aborted.
    assert [e["tool"] for e in by_kind["aborted"]] == ["slow"]
    assert by_kind["agent_exit"] == [{"event": "agent_exit", "code": 0, "signal": None}]
