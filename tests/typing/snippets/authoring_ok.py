"""Builders return the concrete variant; remote facade calls are typed like send_request."""

from __future__ import annotations

from collections.abc import Awaitable

from typing_extensions import assert_type, reveal_type

from acp_generated.v1 import PromptResponse, ReadTextFileResponse, RemoteAgent, RemoteClient
from acp_generated.v1.builders import (
    agent_message_chunk,
    plan,
    plan_entry,
    text,
    tool_call,
    tool_call_location,
    tool_call_update,
    tool_content,
    tool_diff,
)
from acp_runtime import Connection, SentRequest


async def agent_side(cx: Connection) -> None:
    client = RemoteClient(cx)
    chunk = agent_message_chunk(content=text(text="hi"))
    reveal_type(chunk)  # expect: AgentMessageChunkSessionUpdate
    reveal_type(text(text="x"))  # expect: TextContentBlock
    started = tool_call(
        tool_call_id="t1",
        title="Edit",
        kind="edit",
        content=(tool_diff(path="/a", new_text="b"),),  # any Sequence
        locations=[tool_call_location(path="/a")],
    )
    reveal_type(started)  # expect: ToolCallSessionUpdate
    done = tool_call_update(
        tool_call_id="t1", status="completed", content=[tool_content(content=text(text="ok"))]
    )
    reveal_type(done)  # expect: ToolCallUpdateSessionUpdate
    steps = plan(entries=[plan_entry(content="read", priority="high", status="pending")])
    reveal_type(steps)  # expect: PlanSessionUpdate
    sent = client.session_update(session_id="s", update=chunk)
    assert_type(sent, Awaitable[None])
    await sent
    read = client.read_text_file(session_id="s", path="/a", line=1)
    assert_type(read, SentRequest[ReadTextFileResponse])
    reveal_type(await read)  # expect: ReadTextFileResponse
    answer = await client.request_permission(session_id="s", tool_call=done, options=[])
    reveal_type(answer)  # expect: RequestPermissionResponse


async def client_side(cx: Connection) -> None:
    agent = RemoteAgent(cx)
    reveal_type(await agent.initialize(protocol_version=1))  # expect: InitializeResponse
    session = await agent.new_session(cwd="/tmp", mcp_servers=())
    reveal_type(session)  # expect: NewSessionResponse
    turn = agent.prompt(session_id=session.session_id, prompt=[text(text="hi")])
    assert_type(turn, SentRequest[PromptResponse])
    assert_type(agent.cancel(session_id=session.session_id), Awaitable[None])
    reveal_type(await turn)  # expect: PromptResponse
