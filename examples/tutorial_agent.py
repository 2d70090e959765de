"""The agent of the tutorial (docs/tutorial.md): it reads the file a prompt names.

A prompt turn streams message chunks, reports a tool call and its updates, asks the user's
permission, reads the file through the client, and stops with stop reason ``cancelled`` on
``session/cancel`` (-32800 on ``$/cancel_request``). Run it under an editor, or with the
tutorial's client: ``python examples/tutorial_client.py``.
"""

from __future__ import annotations

import sys

import anyio

from acp_generated import v1
from acp_generated.v1 import builders as b
from acp_runtime import Connection, Responder, run_agent
from acp_runtime.contrib import PermissionBroker, PromptTurns, ToolCallTracker, Turn

OPTIONS = [
    v1.PermissionOption(option_id="allow", name="Allow", kind="allow_once"),
    v1.PermissionOption(option_id="reject", name="Reject", kind="reject_once"),
]


class FileAgent(v1.AgentHandler):
    """Says how many lines the file named by the prompt has, once the user allows reading it."""

    def __init__(self) -> None:
        self.turns = PromptTurns(cancelled=v1.PromptResponse(stop_reason="cancelled"))
        self.sessions = 0
        self.can_read = False

    async def initialize(
        self, params: v1.InitializeRequest, responder: Responder[v1.InitializeResponse]
    ) -> v1.InitializeResponse:
        self.can_read = params.client_capabilities.fs.read_text_file
        return v1.InitializeResponse(protocol_version=1)

    async def session_new(
        self, params: v1.NewSessionRequest, responder: Responder[v1.NewSessionResponse]
    ) -> v1.NewSessionResponse:
        self.sessions += 1
        return v1.NewSessionResponse(session_id=f"session-{self.sessions}")

    async def session_prompt(
        self, params: v1.PromptRequest, responder: Responder[v1.PromptResponse]
    ) -> None:
        client = v1.RemoteClient(responder.connection)
        self.turns.start(params.session_id, responder, self._turn, params, client)

    async def session_cancel(self, params: v1.CancelNotification, cx: Connection) -> None:
        self.turns.cancel(params.session_id)

    async def _turn(
        self, turn: Turn, params: v1.PromptRequest, client: v1.RemoteClient
    ) -> v1.PromptResponse:
        words = [block.text for block in params.prompt if isinstance(block, v1.TextContentBlock)]
        path = " ".join(words).strip()
        if not self.can_read:  # the client did not offer fs/read_text_file
            await say(client, turn, f"I cannot read {path}: this editor does not share files.")
            return v1.PromptResponse(stop_reason="end_turn")
        await say(client, turn, f"Let me read {path}.")
        tools = ToolCallTracker(client, b, session_id=turn.session_id)
        location = b.tool_call_location(path=path)
        async with tools.track(title=f"Read {path}", kind="read", locations=[location]) as call:
            broker = PermissionBroker(client)
            decision = await broker.ask(
                session_id=turn.session_id, tool_call=call.as_update(), options=OPTIONS
            )
            if not decision.allowed:
                await call.fail(content=[b.tool_content(content=b.text(text="not allowed"))])
                return v1.PromptResponse(stop_reason="refusal")
            await call.update(status="in_progress")
            file = await client.read_text_file(session_id=turn.session_id, path=path)
            await call.complete(content=[b.tool_content(content=b.text(text=file.content))])
        await say(client, turn, f"{path} has {len(file.content.splitlines())} lines.")
        return v1.PromptResponse(stop_reason="end_turn")


async def say(client: v1.RemoteClient, turn: Turn, sentence: str) -> None:
    """Stream a sentence word by word, as a model would."""
    for word in sentence.split(" "):
        chunk = b.agent_message_chunk(content=b.text(text=word + " "))
        await client.session_update(session_id=turn.session_id, update=chunk)
        await anyio.sleep(0.01)


if __name__ == "__main__":
    sys.exit(run_agent(FileAgent()))
