"""MCP over ACP is typed end to end: the session is the MCP SDK's, declarations are models."""

from __future__ import annotations

from typing import Any

from mcp.server.mcpserver import MCPServer
from typing_extensions import reveal_type

from acp_generated.v1.unstable import AcpMcpServer, NewSessionRequest
from acp_generated.v2.unstable import AcpMcpServer as AcpMcpServerV2
from acp_generated.v2.unstable import InitializeResponse as InitializeResponseV2
from acp_runtime import Connection
from acp_runtime.mcp import McpCaller, McpProvider, McpRequest, advertise_mcp_over_acp


async def handler(request: McpRequest) -> dict[str, Any]:
    return {"tools": []}


async def editor(cx: Connection, server: MCPServer[Any]) -> None:
    provider = McpProvider()
    tools = provider.register(cx, server, name="tools")
    plain = provider.register(cx, handler, name="plain")
    reveal_type(tools.declaration_as(AcpMcpServer))  # expect: AcpMcpServer
    reveal_type(plain.declaration_as(AcpMcpServerV2))  # expect: AcpMcpServer
    NewSessionRequest(cwd="/", mcp_servers=[tools.declaration_as(AcpMcpServer)])
    provider.register(cx, 42, name="nope")  # expect-error


async def agent(cx: Connection, response: InitializeResponseV2) -> None:
    caller = McpCaller()
    reveal_type(advertise_mcp_over_acp(response))  # expect: InitializeResponse
    async with caller.session(cx, "srv") as session:
        reveal_type(session)  # expect: ClientSession
        result = await session.call_tool("echo", {"text": "hi"})
        reveal_type(result)  # expect: CallToolResult
    caller.session(cx, "srv", binding="http")  # expect-error
