"""A real third-party agent, driven the way the tutorial's client drives an agent
(issue 33): ``connect_to_agent`` and the typed ``RemoteAgent`` facade.

codex-acp (``make realworld-agents`` installs ``@zed-industries/codex-acp`` into
``tests/realworld/node_modules``, git-ignored) ignores ``$/cancel_request`` and stops a turn
on ``session/cancel``. With a placeholder API key its prompt turn never gets a model
answer, so cancelling the ``prompt`` call is the only way it ends: the typed cancel sends
both, and the turn must end with stop reason ``cancelled``. Slow (a real agent process, a
few seconds to tens of seconds) and skipped unless installed.
"""

from __future__ import annotations

import os
from pathlib import Path

import anyio
import pytest

from acp_generated import v1
from acp_generated.v1 import builders as b
from acp_runtime import Connection, connect_to_agent

CODEX = Path(__file__).resolve().parent / "node_modules" / ".bin" / "codex-acp"

pytestmark = [
    pytest.mark.slow,
    pytest.mark.anyio,
    pytest.mark.skipif(not CODEX.exists(), reason="make realworld-agents installs codex-acp"),
]


class WatchingClient(v1.ClientHandler):
    """Keeps the kinds of the session updates the agent streams."""

    def __init__(self) -> None:
        self.updates: list[str] = []

    async def session_update(self, params: v1.SessionNotification, cx: Connection) -> None:
        self.updates.append(params.update.session_update)


async def test_cancelling_the_prompt_call_ends_a_codex_turn_cancelled(tmp_path: Path) -> None:
    home = tmp_path / "codex-home"
    home.mkdir()
    env = {
        "PATH": os.environ.get("PATH", ""),
        "HOME": str(tmp_path),
        "CODEX_HOME": str(home),
        "OPENAI_API_KEY": "sk-placeholder-not-a-key",
    }
    client = WatchingClient()
    command = [str(CODEX)]
    async with connect_to_agent(command, client, cwd=tmp_path, env=env, stderr="discard") as cx:
        agent = v1.RemoteAgent(cx)
        with anyio.fail_after(60):
            await agent.initialize(protocol_version=1)
            await agent.authenticate(method_id="openai-api-key")
            session = await agent.new_session(cwd=str(tmp_path), mcp_servers=[])
            turn = agent.prompt(session_id=session.session_id, prompt=[b.text(text="Say hi")])
            response = await turn.cancel_after(1.0)
    assert response.stop_reason == "cancelled"
