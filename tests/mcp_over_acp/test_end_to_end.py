"""An MCP SDK server behind our provider, an MCP SDK ClientSession behind our caller, one
ACP connection between them: both bindings, cancellation both ways, failures."""

from __future__ import annotations

import anyio
import pytest
from mcp.shared.exceptions import MCPError

from acp_generated.v1.unstable import (
    AcpMcpServer,
    AgentHandler,
    NewSessionRequest,
    NewSessionResponse,
    PromptRequest,
    PromptResponse,
    TextContentBlock,
)
from acp_runtime import ConnectionBuilder, RequestError, Responder
from acp_runtime.mcp import BindingErrorCode, DeclaredServer, acp_servers

from .servers import ToolProbe, acp_pair, tools_server

pytestmark = pytest.mark.anyio

BINDINGS = pytest.mark.parametrize("binding", ["stateless", "connect"])


@BINDINGS
async def test_session_lists_and_calls_tools_with_progress(binding: str) -> None:
    probe = ToolProbe()
    async with acp_pair() as pair:
        tools = pair.provider.register(pair.client, tools_server(probe), name="tools")
        progress_seen: list[tuple[float, float | None, str | None]] = []

        async def on_progress(progress: float, total: float | None, message: str | None) -> None:
            progress_seen.append((progress, total, message))

        with anyio.fail_after(5):
            async with pair.caller.session(pair.agent, tools.server_id, binding=binding) as session:  # type: ignore[arg-type]
                listed = await session.list_tools()
                called = await session.call_tool(
                    "echo", {"text": "hi"}, progress_callback=on_progress
                )
                unknown = await session.call_tool("nope", {})
    assert [tool.name for tool in listed.tools] == ["echo", "slow", "boom"]
    assert called.structured_content == {"result": "echo: hi"}
    assert progress_seen == [(1.0, 2.0, "half way")]
    assert unknown.is_error
    assert probe.calls == ["hi"]


@BINDINGS
async def test_an_unknown_server_fails_the_call_with_33001_and_the_connection_goes_on(
    binding: str,
) -> None:
    async with acp_pair() as pair:
        tools = pair.provider.register(pair.client, tools_server(ToolProbe()), name="tools")
        code: int
        with anyio.fail_after(5):
            if binding == "connect":  # mcp/connect itself fails: entering the session raises
                with pytest.raises(RequestError) as refused:
                    async with pair.caller.session(pair.agent, "no-such-server", binding="connect"):
                        pass  # pragma: no cover
                code = refused.value.code
            else:
                async with pair.caller.session(pair.agent, "no-such-server") as s:
                    with pytest.raises(MCPError) as failure:
                        await s.list_tools()
                code = failure.value.code
        assert code == BindingErrorCode.SERVER_UNAVAILABLE
        with anyio.fail_after(5):
            async with pair.caller.session(pair.agent, tools.server_id, binding=binding) as s:  # type: ignore[arg-type]
                assert len((await s.list_tools()).tools) == 3


@BINDINGS
async def test_a_failing_tool_is_one_error_result_and_later_calls_work(binding: str) -> None:
    async with acp_pair() as pair:
        tools = pair.provider.register(pair.client, tools_server(ToolProbe()), name="tools")
        with anyio.fail_after(5):
            async with pair.caller.session(pair.agent, tools.server_id, binding=binding) as s:  # type: ignore[arg-type]
                broken = await s.call_tool("boom", {})
                fine = await s.call_tool("echo", {"text": "after"})
    assert broken.is_error
    assert "Error executing tool boom" in str(broken.content)
    assert fine.structured_content == {"result": "echo: after"}


@BINDINGS
async def test_cancelling_the_mcp_call_cancels_the_tool_on_the_provider(binding: str) -> None:
    """Caller side MCP -> ACP: the task awaiting call_tool is cancelled, the session sends
    notifications/cancelled, the caller cancels the ACP request, the provider cancels the
    tool (MCP notifications/cancelled inside the editor)."""
    probe = ToolProbe()
    async with acp_pair() as pair:
        tools = pair.provider.register(pair.client, tools_server(probe), name="tools")
        with anyio.fail_after(5):
            async with pair.caller.session(pair.agent, tools.server_id, binding=binding) as s:  # type: ignore[arg-type]
                async with anyio.create_task_group() as tg:
                    tg.start_soon(s.call_tool, "slow", {})
                    await probe.started.wait()
                    tg.cancel_scope.cancel()
                await probe.cancelled.wait()
                again = await s.call_tool("echo", {"text": "still here"})
    assert again.structured_content == {"result": "echo: still here"}


@BINDINGS
async def test_a_read_timeout_in_the_session_cancels_the_tool(binding: str) -> None:
    probe = ToolProbe()
    async with acp_pair() as pair:
        tools = pair.provider.register(pair.client, tools_server(probe), name="tools")
        with anyio.fail_after(5):
            async with pair.caller.session(pair.agent, tools.server_id, binding=binding) as s:  # type: ignore[arg-type]
                with pytest.raises(MCPError):
                    await s.call_tool("slow", {}, read_timeout_seconds=0.2)
                await probe.cancelled.wait()


class McpAgent(AgentHandler):
    """An agent whose prompt turn calls the editor's ``slow`` tool; the turn's work is
    spawned and cancelled with the prompt (the pattern of the docs)."""

    def __init__(self, binding: str) -> None:
        self.binding = binding
        self.servers: list[DeclaredServer] = []
        self.outcome: list[str] = []
        self.caller: object = None

    async def new_session(
        self, params: NewSessionRequest, responder: Responder[NewSessionResponse]
    ) -> NewSessionResponse:
        self.servers = acp_servers(params.mcp_servers)
        return NewSessionResponse(session_id="s1")

    async def prompt(
        self, params: PromptRequest, responder: Responder[PromptResponse]
    ) -> None:
        turn = responder.cancellation.run_until_cancelled(self._turn(responder))
        responder.connection.spawn(responder.respond_with, turn)

    async def _turn(self, responder: Responder[PromptResponse]) -> PromptResponse:
        from acp_runtime.mcp import McpCaller

        assert isinstance(self.caller, McpCaller)
        async with self.caller.session(
            responder.connection, self.servers[0], binding=self.binding
        ) as s:  # type: ignore[arg-type]
            await s.call_tool("slow", {})
        return PromptResponse(stop_reason="end_turn")  # pragma: no cover


@BINDINGS
async def test_cancelling_the_prompt_cancels_its_mcp_tool_call(binding: str) -> None:
    """ACP -> MCP -> ACP -> MCP: $/cancel_request for session/prompt cancels the turn,
    whose MCP call is cancelled, whose ACP mcp/message is cancelled, whose tool is."""
    probe = ToolProbe()
    agent = McpAgent(binding)
    builder = ConnectionBuilder(role="agent")
    agent.attach(builder)
    async with acp_pair(builder) as pair:
        agent.caller = pair.caller
        tools = pair.provider.register(pair.client, tools_server(probe), name="tools")
        with anyio.fail_after(5):
            await pair.client.send_request(
                NewSessionRequest(cwd="/", mcp_servers=[tools.declaration_as(AcpMcpServer)])
            )
            prompt = pair.client.send_request(
                PromptRequest(session_id="s1", prompt=[TextContentBlock(type="text", text="go")])
            )
            await probe.started.wait()
            prompt.cancel()
            with pytest.raises(RequestError) as answer:
                await prompt
            await probe.cancelled.wait()
    assert answer.value.code == -32800


async def test_disposing_a_registration_cancels_active_calls_and_refuses_new_ones() -> None:
    probe = ToolProbe()
    async with acp_pair() as pair:
        tools = pair.provider.register(pair.client, tools_server(probe), name="tools")
        with anyio.fail_after(5):
            async with pair.caller.session(pair.agent, tools.server_id) as s:
                async with anyio.create_task_group() as tg:

                    async def call() -> None:
                        with pytest.raises(MCPError) as failure:
                            await s.call_tool("slow", {})
                        assert failure.value.code == -32800

                    tg.start_soon(call)
                    await probe.started.wait()
                    tools.dispose()
                await probe.cancelled.wait()
                with pytest.raises(MCPError) as later:
                    await s.list_tools()
    assert later.value.code == BindingErrorCode.SERVER_UNAVAILABLE


async def test_two_servers_on_one_connection_are_routed_by_server_id() -> None:
    first, second = ToolProbe(), ToolProbe()
    async with acp_pair() as pair:
        a = pair.provider.register(pair.client, tools_server(first), name="a")
        b = pair.provider.register(pair.client, tools_server(second), name="b")
        with anyio.fail_after(5):
            async with (
                pair.caller.session(pair.agent, a.server_id) as sa,
                pair.caller.session(pair.agent, b.server_id) as sb,
            ):
                await sa.call_tool("echo", {"text": "to a"})
                await sb.call_tool("echo", {"text": "to b"})
    assert (first.calls, second.calls) == (["to a"], ["to b"])
