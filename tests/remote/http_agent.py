"""The echo agent (examples/echo_agent.py) with ``session/load``, for the HTTP server
tests: loading a session replays one chunk ``replay <id>`` before answering."""

from __future__ import annotations

import sys
from pathlib import Path

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
if str(EXAMPLES) not in sys.path:  # also imported from tests/interop
    sys.path.insert(0, str(EXAMPLES))

from echo_agent import EchoAgent  # noqa: E402

from acp_generated import v1  # noqa: E402
from acp_runtime import Responder  # noqa: E402


class LoadingEchoAgent(EchoAgent):
    async def initialize(
        self, params: v1.InitializeRequest, responder: Responder[v1.InitializeResponse]
    ) -> v1.InitializeResponse:
        return v1.InitializeResponse(
            protocol_version=1,
            agent_capabilities=v1.AgentCapabilities(load_session=True),
            agent_info=v1.Implementation(name="python-echo-agent", version="1.0.0"),
        )

    async def load_session(
        self, params: v1.LoadSessionRequest, responder: Responder[v1.LoadSessionResponse]
    ) -> v1.LoadSessionResponse:
        chunk = v1.AgentMessageChunkSessionUpdate(
            session_update="agent_message_chunk",
            content=v1.TextContentBlock(type="text", text=f"replay {params.session_id}"),
        )
        await responder.connection.send_notification(
            v1.SessionNotification(session_id=params.session_id, update=chunk)
        )
        return v1.LoadSessionResponse()
