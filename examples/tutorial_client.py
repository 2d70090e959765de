"""The client of the tutorial (docs/tutorial.md): it spawns an agent and prompts it once.

It prints what the agent streams and its tool calls, answers the permission request (allow,
or reject with ``--reject``) and the file read, and ends with the turn's stop reason::

    python examples/tutorial_client.py README.md
    python examples/tutorial_client.py README.md -- node my-agent.js
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import anyio

from acp_generated import v1
from acp_generated.v1 import builders as b
from acp_runtime import Connection, Responder, connect_to_agent

TUTORIAL_AGENT = [sys.executable, str(Path(__file__).with_name("tutorial_agent.py"))]


class FileClient(v1.ClientHandler):
    """Shows the session's updates and answers the agent's requests."""

    def __init__(self, allow: bool) -> None:
        self.allow = allow

    async def session_update(self, params: v1.SessionNotification, cx: Connection) -> None:
        update = params.update
        if isinstance(update, v1.AgentMessageChunkSessionUpdate):
            if isinstance(update.content, v1.TextContentBlock):
                print(update.content.text, end="", flush=True)
        elif isinstance(update, (v1.ToolCallSessionUpdate, v1.ToolCallUpdateSessionUpdate)):
            print(f"\n[tool {update.tool_call_id[-6:]}: {update.status}]", flush=True)

    async def request_permission(
        self,
        params: v1.RequestPermissionRequest,
        responder: Responder[v1.RequestPermissionResponse],
    ) -> v1.RequestPermissionResponse:
        chosen = "allow" if self.allow else "reject"
        print(f"\n[permission for {params.tool_call.title}: {chosen}]", flush=True)
        outcome = v1.SelectedRequestPermissionOutcome(outcome="selected", option_id=chosen)
        return v1.RequestPermissionResponse(outcome=outcome)

    async def read_text_file(
        self, params: v1.ReadTextFileRequest, responder: Responder[v1.ReadTextFileResponse]
    ) -> v1.ReadTextFileResponse:
        content = await anyio.Path(params.path).read_text(encoding="utf-8")
        return v1.ReadTextFileResponse(content=content)


async def prompt_once(path: str, command: list[str], allow: bool) -> str:
    async with connect_to_agent(command, FileClient(allow)) as cx:
        agent = v1.RemoteAgent(cx)
        fs = v1.FileSystemCapabilities(read_text_file=True)
        await agent.initialize(protocol_version=1, client_capabilities=v1.ClientCapabilities(fs=fs))
        session = await agent.new_session(cwd=str(Path.cwd()), mcp_servers=[])
        response = await agent.prompt(session_id=session.session_id, prompt=[b.text(text=path)])
        print(f"\n[stop reason: {response.stop_reason}]")
        return response.stop_reason


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description="Prompt an agent to read a file, once.")
    parser.add_argument("path", help="the file the agent should read")
    parser.add_argument("--reject", action="store_true", help="refuse the permission")
    parser.add_argument("command", nargs="*", help="agent command (default: the tutorial's)")
    args = parser.parse_args()
    anyio.run(
        prompt_once, str(Path(args.path).resolve()), args.command or TUTORIAL_AGENT, not args.reject
    )
