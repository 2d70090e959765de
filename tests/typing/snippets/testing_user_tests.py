"""A user's test file over ``acp_runtime.testing``: the fixture, the helpers and the
recorded updates are typed, so a test reads its agent's messages as models."""

from __future__ import annotations

import pytest
from typing_extensions import assert_type, reveal_type

from acp_generated import v1
from acp_runtime import Responder
from acp_runtime.testing import FakeCommand
from acp_runtime.testing import v2 as testing_v2
from acp_runtime.testing.v1 import TestClient, agent_client, assert_stop_reason, text_of

pytest_plugins = ["acp_runtime.testing.pytest_plugin"]


class MyAgent(v1.AgentHandler):
    async def prompt(
        self, params: v1.PromptRequest, responder: Responder[v1.PromptResponse]
    ) -> v1.PromptResponse:
        return v1.PromptResponse(stop_reason="end_turn")


@pytest.fixture
def acp_agent() -> MyAgent:
    return MyAgent()


@pytest.mark.anyio
@pytest.mark.acp_client(files={"/w/README.md": "hello"})
async def test_with_the_fixture(acp_client: TestClient) -> None:
    updates, answer = await acp_client.prompt("read /w/README.md")
    assert_type(updates, list[v1.SessionUpdate])
    reveal_type(acp_client.permission_requests[0])  # expect: RequestPermissionRequest
    assert_type(answer, v1.PromptResponse)
    assert_stop_reason(answer, "end_turn")
    assert text_of(updates) == acp_client.text(updates)
    assert_type(acp_client.files.writes, list[tuple[str, str]])


@pytest.mark.anyio
async def test_with_the_context_manager() -> None:
    def pick(request: v1.RequestPermissionRequest) -> str | None:
        return request.options[0].option_id

    terminals = {"make": FakeCommand(output="ok", exit_code=0)}
    async with agent_client(MyAgent(), terminals=terminals, permission=pick) as client:
        _, answer = await client.prompt([v1.TextContentBlock(text="hi")])
        assert_stop_reason(answer, "cancel")  # expect-error
        assert_type(client.notifications, list[v1.SessionNotification])
    async with agent_client(MyAgent(), permission="maybe") as client:  # expect-error
        pass


@pytest.mark.anyio
async def test_v2(agent: v1.AgentHandler) -> None:
    async with testing_v2.agent_client(agent) as client:
        _, stop_reason = await client.prompt("hi")
        assert_type(stop_reason, str | None)
