"""The client of the tutorial (docs/tutorial.md): it spawns an agent and prompts it once.

It prints what the agent streams, its plan and tool calls, answers the permission request
(allow, or reject with ``--reject``) and the file read, cancels the turn if it takes longer
than ``--patience`` seconds, prints the turn's stop reason, and loads the session again if
the agent can (the agent replays it)::

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
        if isinstance(
            update, (v1.AgentMessageChunkSessionUpdate, v1.UserMessageChunkSessionUpdate)
        ):
            if isinstance(update.content, v1.TextContentBlock):
                print(update.content.text, end="", flush=True)
        elif isinstance(update, v1.PlanSessionUpdate):
            print(f"\n[plan: {', '.join(entry.content for entry in update.entries)}]", flush=True)
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


async def prompt_once(path: str, command: list[str], allow: bool, patience: float = 60) -> str:
    async with connect_to_agent(command, FileClient(allow)) as cx:
        agent = v1.RemoteAgent(cx)
        fs = v1.FileSystemCapabilities(read_text_file=True)
        hello = await agent.initialize(
            protocol_version=1, client_capabilities=v1.ClientCapabilities(fs=fs)
        )
        session = await agent.new_session(cwd=str(Path.cwd()), mcp_servers=[])
        turn = agent.prompt(session_id=session.session_id, prompt=[b.text(text=path)])
        # wait up to `patience` seconds, cancel (session/cancel too), take the turn's real answer
        response = await turn.cancel_after(patience)
        print(f"\n[stop reason: {response.stop_reason}]")
        if hello.agent_capabilities.load_session:  # the agent replays the session it keeps
            print("[loading the session again]")
            await agent.load_session(
                session_id=session.session_id, cwd=str(Path.cwd()), mcp_servers=[]
            )
        return response.stop_reason


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description="Prompt an agent to read a file, once.")
    parser.add_argument("path", help="the file the agent should read")
    parser.add_argument("--reject", action="store_true", help="refuse the permission")
    parser.add_argument("--patience", type=float, default=60, help="seconds before cancelling")
    parser.add_argument("command", nargs="*", help="agent command (default: the tutorial's)")
    args = parser.parse_args()
    path, command = str(Path(args.path).resolve()), args.command or TUTORIAL_AGENT
    anyio.run(prompt_once, path, command, not args.reject, args.patience)
