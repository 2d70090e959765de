"""An ACP agent that uses the editor's MCP tools, through the ACP connection.

The editor declares its MCP servers in ``session/new`` as ``{"type": "acp", ...}``; the
agent opens an MCP SDK ``ClientSession`` to each over ACP (``McpCaller.session``) and calls
tools as it would on any MCP transport. The prompt text is read as a command:

=====================  ==============================================================
``tools``              one chunk per server: ``tools: <names>`` (or the error code)
``<tool> <text>``      call ``<tool>`` with ``{"text": <text>}`` on the server that has
                       it; its progress as ``progress: <p>/<total> <message>`` chunks,
                       then the tool's text
=====================  ==============================================================

``session/cancel`` ends the turn with stop reason ``cancelled`` and ``$/cancel_request``
for the prompt answers -32800; either way the MCP call in flight is cancelled, which the
editor sees as ``$/cancel_request`` for its ``mcp/message``.

Usage: ``python examples/mcp_agent.py [--quiet] [--backend asyncio|trio]``; needs the
``mcp`` extra (``pip install "acp-typed-runtime[mcp]"``).
"""

from __future__ import annotations

import argparse
import logging
import sys
from collections.abc import AsyncGenerator
from contextlib import AsyncExitStack, asynccontextmanager

import anyio
from mcp import ClientSession
from mcp.shared.exceptions import MCPError

from acp_generated.v1.unstable import (
    AgentHandler,
    AgentMessageChunkSessionUpdate,
    CancelNotification,
    Implementation,
    InitializeRequest,
    InitializeResponse,
    NewSessionRequest,
    NewSessionResponse,
    PromptRequest,
    PromptResponse,
    SessionNotification,
    TextContentBlock,
)
from acp_runtime import Connection, ConnectionBuilder, Responder, stdio_transport
from acp_runtime.mcp import DeclaredServer, McpCaller, acp_servers, advertise_mcp_over_acp

log = logging.getLogger("mcp-agent")


class McpAgent(AgentHandler):
    def __init__(self, caller: McpCaller) -> None:
        self.caller = caller
        self.servers: dict[str, list[DeclaredServer]] = {}
        self.turns: dict[str, anyio.CancelScope] = {}

    async def initialize(
        self, params: InitializeRequest, responder: Responder[InitializeResponse]
    ) -> InitializeResponse:
        response = InitializeResponse(
            protocol_version=1, agent_info=Implementation(name="py-mcp-agent", version="1")
        )
        return advertise_mcp_over_acp(response)  # mcpCapabilities.acp = true

    async def new_session(
        self, params: NewSessionRequest, responder: Responder[NewSessionResponse]
    ) -> NewSessionResponse:
        session_id = f"sess-{len(self.servers) + 1}"
        self.servers[session_id] = acp_servers(params.mcp_servers)
        return NewSessionResponse(session_id=session_id)

    async def prompt(self, params: PromptRequest, responder: Responder[PromptResponse]) -> None:
        # The turn awaits the editor (MCP calls are ACP requests): it must not run on the
        # dispatch loop. `$/cancel_request` for the prompt stops it with -32800.
        responder.connection.spawn(
            responder.respond_with,
            responder.cancellation.run_until_cancelled(self._turn(params, responder.connection)),
        )

    async def cancel(self, params: CancelNotification, cx: Connection) -> None:
        if (scope := self.turns.get(params.session_id)) is not None:
            scope.cancel()

    async def _turn(self, params: PromptRequest, cx: Connection) -> PromptResponse:
        text = " ".join(b.text for b in params.prompt if isinstance(b, TextContentBlock)).strip()
        with anyio.CancelScope() as scope:
            self.turns[params.session_id] = scope
            try:
                await self._run(cx, params.session_id, text)
            finally:
                del self.turns[params.session_id]
        return PromptResponse(stop_reason="cancelled" if scope.cancelled_caught else "end_turn")

    async def _run(self, cx: Connection, session_id: str, text: str) -> None:
        async def say(chunk: str) -> None:
            update = AgentMessageChunkSessionUpdate(
                session_update="agent_message_chunk",
                content=TextContentBlock(type="text", text=chunk),
            )
            await cx.send_notification(SessionNotification(session_id=session_id, update=update))

        command, _, argument = text.partition(" ")
        async with self.sessions(cx, session_id) as sessions:
            for server, session in sessions:
                try:
                    names = [tool.name for tool in (await session.list_tools()).tools]
                except MCPError as error:
                    if command == "tools":
                        await say(f"unknown server: {error.code}")
                    continue
                if command == "tools":
                    await say(f"tools: {', '.join(names)}")
                elif command in names:

                    async def on_progress(
                        progress: float, total: float | None, message: str | None
                    ) -> None:
                        await say(f"progress: {progress:g}/{total or 0:g} {message or ''}".rstrip())

                    log.info("calling %s on %s", command, server.name)
                    result = await session.call_tool(
                        command, {"text": argument}, progress_callback=on_progress
                    )
                    await say(" ".join(getattr(block, "text", "") for block in result.content))
                    return

    @asynccontextmanager
    async def sessions(
        self, cx: Connection, session_id: str
    ) -> AsyncGenerator[list[tuple[DeclaredServer, ClientSession]], None]:
        """An MCP client session to each server the editor declared for the session."""
        async with AsyncExitStack() as stack:
            yield [
                (server, await stack.enter_async_context(self.caller.session(cx, server)))
                for server in self.servers.get(session_id, [])
            ]


async def serve() -> None:
    """The lower layer (a ConnectionBuilder) rather than ``run_agent``: two handlers share
    the connection, the agent and the MCP caller."""
    caller = McpCaller(client_info={"name": "py-mcp-agent", "version": "1"})
    builder = ConnectionBuilder(role="agent")
    McpAgent(caller).attach(builder)
    caller.attach(builder)  # routes the editor's mcp/message notifications (progress)
    await builder.serve(stdio_transport())


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description="ACP agent using the editor's MCP tools")
    parser.add_argument("--quiet", action="store_true", help="no log on stderr")
    parser.add_argument("--backend", choices=["asyncio", "trio"], default="asyncio")
    args = parser.parse_args(argv)
    logging.basicConfig(
        level=logging.WARNING if args.quiet else logging.INFO,
        stream=sys.stderr,
        format="[mcp-agent] %(message)s",
    )
    anyio.run(serve, backend=args.backend)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
