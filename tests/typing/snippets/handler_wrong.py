"""Negative control: handler overrides with wrong signatures are rejected."""

from __future__ import annotations

from acp_generated.v1 import AgentHandler, NewSessionRequest, PromptResponse
from acp_runtime import Connection, Responder


class WrongParams(AgentHandler):
    async def prompt(  # expect-error
        self, params: NewSessionRequest, responder: Responder[PromptResponse]
    ) -> PromptResponse | None:
        return None


class WrongResult(AgentHandler):
    async def prompt(  # expect-error
        self, params: object, responder: Responder[PromptResponse]
    ) -> str:
        return "end_turn"


class WrongNotification(AgentHandler):
    async def cancel(self, params: int, cx: Connection) -> None:  # expect-error
        return None
