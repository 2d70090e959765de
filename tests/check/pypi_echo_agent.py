"""An echo agent on the PyPI package ``agent-client-protocol`` 0.12.1 (module ``acp``),
over stdio: the other SDK the conformance check must pass.

Prompts: ``sleep <ms>`` waits that long, or until ``session/cancel`` (then ``cancelled``);
anything else is echoed back in one chunk.
"""

from __future__ import annotations

import asyncio
from typing import Any

from acp import run_agent
from acp.helpers import update_agent_message_text
from acp.interfaces import Client
from acp.schema import AgentCapabilities, InitializeResponse, NewSessionResponse, PromptResponse


class EchoAgent:
    def __init__(self) -> None:
        self._client: Client | None = None
        self._cancelled: dict[str, asyncio.Event] = {}
        self._sessions = 0

    def on_connect(self, conn: Client) -> None:
        self._client = conn

    async def initialize(self, protocol_version: int, **kwargs: Any) -> InitializeResponse:
        return InitializeResponse(protocol_version=1, agent_capabilities=AgentCapabilities())

    async def new_session(self, cwd: str, **kwargs: Any) -> NewSessionResponse:
        self._sessions += 1
        return NewSessionResponse(session_id=f"pypi-{self._sessions}")

    async def prompt(self, prompt: list[Any], session_id: str, **kwargs: Any) -> PromptResponse:
        assert self._client is not None
        text = "".join(getattr(block, "text", "") for block in prompt).strip()
        if text.startswith("sleep "):
            cancelled = self._cancelled[session_id] = asyncio.Event()
            try:
                await asyncio.wait_for(cancelled.wait(), int(text.split()[1]) / 1000)
            except TimeoutError:
                return PromptResponse(stop_reason="end_turn")
            return PromptResponse(stop_reason="cancelled")
        await self._client.session_update(session_id, update_agent_message_text(text))
        return PromptResponse(stop_reason="end_turn")

    async def cancel(self, session_id: str, **kwargs: Any) -> None:
        event = self._cancelled.pop(session_id, None)
        if event is not None:
            event.set()


if __name__ == "__main__":
    asyncio.run(run_agent(EchoAgent()))  # type: ignore[arg-type]
