"""The agent of the tutorial (docs/tutorial.md): it reads the file a prompt names.

A prompt turn shows a plan, streams message chunks, reports a tool call and its updates,
asks the user's permission, reads the file through the client (if the client declared
``fs.readTextFile``), and stops with stop reason ``cancelled`` on ``session/cancel``
(-32800 on ``$/cancel_request``). Each session keeps its history, which ``session/load``
replays. Run it under an editor, or with the tutorial's client:
``python examples/tutorial_client.py README.md``.
"""

from __future__ import annotations

import sys

import anyio

from acp_generated import v1
from acp_generated.v1 import builders as b
from acp_runtime import RequestError, Responder, run_agent

OPTIONS = [
    v1.PermissionOption(option_id="allow", name="Allow", kind="allow_once"),
    v1.PermissionOption(option_id="reject", name="Reject", kind="reject_once"),
]
ALLOWED = v1.SelectedRequestPermissionOutcome(outcome="selected", option_id="allow")


class FileAgent(v1.AgentHandler):
    """Says how many lines the file named by the prompt has, once the user allows reading it.

    It serves one client (``run_agent`` serves stdin/stdout) and keeps each session's
    history, the updates it sent, which ``session/load`` replays.
    """

    def __init__(self) -> None:
        self.history: dict[str, list[v1.SessionUpdate]] = {}

    async def initialize(
        self, params: v1.InitializeRequest, responder: Responder[v1.InitializeResponse]
    ) -> v1.InitializeResponse:
        self.client = v1.RemoteClient(responder.connection)
        self.can_read = params.client_capabilities.fs.read_text_file
        capabilities = v1.AgentCapabilities(load_session=True)
        return v1.InitializeResponse(protocol_version=1, agent_capabilities=capabilities)

    async def new_session(
        self, params: v1.NewSessionRequest, responder: Responder[v1.NewSessionResponse]
    ) -> v1.NewSessionResponse:
        session_id = f"session-{len(self.history) + 1}"
        self.history[session_id] = []
        return v1.NewSessionResponse(session_id=session_id)

    async def load_session(
        self, params: v1.LoadSessionRequest, responder: Responder[v1.LoadSessionResponse]
    ) -> v1.LoadSessionResponse:
        for update in self._history_of(params.session_id):  # replay it all, then answer
            await self.client.session_update(session_id=params.session_id, update=update)
        return v1.LoadSessionResponse()

    def _history_of(self, session_id: str) -> list[v1.SessionUpdate]:
        if session_id not in self.history:
            raise RequestError.invalid_params(f"Unknown session {session_id!r}")
        return self.history[session_id]

    async def prompt(
        self, params: v1.PromptRequest, responder: Responder[v1.PromptResponse]
    ) -> v1.PromptResponse:
        try:  # session/cancel cancels the turn and the runtime answers `cancelled`
            return await responder.cancellation.run_until_cancelled(self._turn(params))
        except RequestError:  # and so does $/cancel_request (-32800 otherwise)
            if responder.cancellation.is_cancelled():
                return v1.PromptResponse(stop_reason="cancelled")
            raise

    async def _turn(self, params: v1.PromptRequest) -> v1.PromptResponse:
        sid, history = params.session_id, self._history_of(params.session_id)
        history += [b.user_message_chunk(content=block) for block in params.prompt]  # for load
        path = " ".join(c.text for c in params.prompt if isinstance(c, v1.TextContentBlock))
        if not self.can_read:  # the client did not declare `fs.readTextFile`: never ask it
            await self._say(sid, "This editor does not let me read files.")
            return v1.PromptResponse(stop_reason="end_turn")
        plan = [b.plan_entry(content=s, priority="high", status="pending") for s in ("Ask", "Read")]
        await self._send(sid, b.plan(entries=plan))
        await self._say(sid, f"Let me read {path}.")
        call = f"read-{len(history)}"
        tool = b.tool_call(tool_call_id=call, title=f"Read {path}", kind="read", status="pending")
        await self._send(sid, tool)
        try:
            ask = v1.ToolCallUpdate(tool_call_id=call, title=tool.title)
            answer = await self.client.request_permission(
                session_id=sid, tool_call=ask, options=OPTIONS
            )
            if answer.outcome != ALLOWED:
                await self._tool(sid, call, "failed")
                return v1.PromptResponse(stop_reason="refusal")
            await self._tool(sid, call, "in_progress")
            file = await self.client.read_text_file(session_id=sid, path=path)
        except BaseException:  # cancelled, or the read failed: so did the tool call
            with anyio.CancelScope(shield=True):
                await self._tool(sid, call, "failed")
            raise
        await self._tool(sid, call, "completed", file.content)
        await self._say(sid, f"{path} has {len(file.content.splitlines())} lines.")
        return v1.PromptResponse(stop_reason="end_turn")

    async def _send(self, session_id: str, update: v1.SessionUpdate) -> None:
        self.history[session_id].append(update)
        await self.client.session_update(session_id=session_id, update=update)

    async def _say(self, session_id: str, sentence: str) -> None:
        """Stream a sentence (a model would stream words or tokens)."""
        await self._send(session_id, b.agent_message_chunk(content=b.text(text=sentence + " ")))

    async def _tool(self, sid: str, call: str, status: v1.ToolCallStatus, text: str = "") -> None:
        out = [b.tool_content(content=b.text(text=text))] if text else None
        await self._send(sid, b.tool_call_update(tool_call_id=call, status=status, content=out))


if __name__ == "__main__":
    sys.exit(run_agent(FileAgent()))
