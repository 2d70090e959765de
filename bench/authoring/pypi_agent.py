"""The tutorial's agent written with the PyPI package ``agent-client-protocol`` 0.12.1.

Only here to measure what an agent author writes with that package
(``python -m bench.authoring.count_lines``); the behaviour is the tutorial agent's
(``examples/tutorial_agent.py``): a prompt names a file; the agent says what it will do,
reports a read tool call, asks permission, reads the file from the client, reports the
tool call's progress and result, and streams a one-line summary. ``session/cancel`` ends
the turn with stop reason ``cancelled``. The package cannot handle ``$/cancel_request``
(it has no incoming-request cancellation), so that part of the behaviour is missing here.
"""

from __future__ import annotations

import asyncio
import itertools
from typing import Any

from acp import (
    run_agent,
    start_read_tool_call,
    text_block,
    tool_content,
    update_agent_message_text,
    update_tool_call,
)
from acp.interfaces import Client
from acp.schema import (
    AgentCapabilities,
    AllowedOutcome,
    Implementation,
    InitializeResponse,
    NewSessionResponse,
    PermissionOption,
    PromptResponse,
    TextContentBlock,
)

OPTIONS = [
    PermissionOption(option_id="allow", name="Allow", kind="allow_once"),
    PermissionOption(option_id="reject", name="Reject", kind="reject_once"),
]


class TutorialAgent:
    def __init__(self) -> None:
        self._client: Client | None = None
        self._sessions = itertools.count(1)
        self._turns: dict[str, asyncio.Task[PromptResponse]] = {}

    def on_connect(self, conn: Client) -> None:
        self._client = conn

    async def initialize(self, protocol_version: int, **kwargs: Any) -> InitializeResponse:
        return InitializeResponse(
            protocol_version=1,
            agent_capabilities=AgentCapabilities(),
            agent_info=Implementation(name="tutorial-agent", version="1.0"),
        )

    async def new_session(self, cwd: str, **kwargs: Any) -> NewSessionResponse:
        return NewSessionResponse(session_id=f"session-{next(self._sessions)}")

    async def prompt(self, prompt: list[Any], session_id: str, **kwargs: Any) -> PromptResponse:
        turn = asyncio.ensure_future(self._turn(session_id, prompt))
        self._turns[session_id] = turn
        try:
            return await turn
        except asyncio.CancelledError:
            if not turn.cancelled():
                raise
            return PromptResponse(stop_reason="cancelled")
        finally:
            self._turns.pop(session_id, None)

    async def cancel(self, session_id: str, **kwargs: Any) -> None:
        turn = self._turns.get(session_id)
        if turn is not None:
            turn.cancel()

    async def _say(self, session_id: str, sentence: str) -> None:
        assert self._client is not None
        for word in sentence.split(" "):
            await self._client.session_update(session_id, update_agent_message_text(word + " "))
            await asyncio.sleep(0.01)

    async def _turn(self, session_id: str, prompt: list[Any]) -> PromptResponse:
        client = self._client
        assert client is not None
        path = "".join(b.text for b in prompt if isinstance(b, TextContentBlock)).strip()
        await self._say(session_id, f"Let me read {path}.")
        tool_call = f"read-{path}"
        await client.session_update(
            session_id, start_read_tool_call(tool_call, f"Read {path}", path)
        )
        answer = await client.request_permission(
            session_id, update_tool_call(tool_call, title=f"Read {path}"), OPTIONS
        )
        if not (isinstance(answer.outcome, AllowedOutcome) and answer.outcome.option_id == "allow"):
            failed = update_tool_call(
                tool_call, status="failed", content=[tool_content(text_block("not allowed"))]
            )
            await client.session_update(session_id, failed)
            return PromptResponse(stop_reason="refusal")
        await client.session_update(session_id, update_tool_call(tool_call, status="in_progress"))
        read = await client.read_text_file(session_id, path)
        await client.session_update(
            session_id,
            update_tool_call(
                tool_call, status="completed", content=[tool_content(text_block(read.content))]
            ),
        )
        await self._say(session_id, f"{path} has {len(read.content.splitlines())} lines.")
        return PromptResponse(stop_reason="end_turn")


if __name__ == "__main__":
    asyncio.run(run_agent(TutorialAgent()))  # type: ignore[arg-type]  # implements what it needs
