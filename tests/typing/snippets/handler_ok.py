"""A handler subclass with correct signatures, attached to a builder."""

from __future__ import annotations

from acp_generated.v1 import (
    AgentHandler,
    CancelNotification,
    PromptRequest,
    PromptResponse,
)
from acp_runtime import Connection, ConnectionBuilder, Responder


class EchoAgent(AgentHandler):
    async def prompt(
        self, params: PromptRequest, responder: Responder[PromptResponse]
    ) -> PromptResponse | None:
        return PromptResponse(stop_reason="end_turn")

    async def cancel(self, params: CancelNotification, cx: Connection) -> None:
        return None


def build() -> ConnectionBuilder:
    builder = ConnectionBuilder(role="agent")
    EchoAgent().attach(builder)
    return builder
