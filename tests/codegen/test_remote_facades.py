"""The generated remote facades over in-memory connections: each call sends the params
model built from its keywords, and is answered (both anyio backends)."""

from __future__ import annotations

import anyio
import pytest

from acp_generated import v1
from acp_generated.v1.builders import agent_message_chunk, text, tool_call_update
from acp_runtime import Connection, ConnectionBuilder, Responder, memory_pair
from acp_runtime.testing import notification, request, result, wire_connection

pytestmark = pytest.mark.anyio


class Agent(v1.AgentHandler):
    """Answers a prompt after asking the client for a file and a permission, through the
    facade, in spawned work (awaiting inside the dispatch loop would block it)."""

    def __init__(self) -> None:
        self.cancelled = anyio.Event()
        self.seen: list[object] = []

    async def initialize(
        self, params: v1.InitializeRequest, responder: Responder[v1.InitializeResponse]
    ) -> v1.InitializeResponse:
        return v1.InitializeResponse(protocol_version=params.protocol_version)

    async def new_session(
        self, params: v1.NewSessionRequest, responder: Responder[v1.NewSessionResponse]
    ) -> v1.NewSessionResponse:
        return v1.NewSessionResponse(session_id=f"s-{params.cwd}")

    async def prompt(
        self, params: v1.PromptRequest, responder: Responder[v1.PromptResponse]
    ) -> None:
        client = v1.RemoteClient(responder.connection)

        async def turn() -> v1.PromptResponse:
            read = await client.read_text_file(session_id=params.session_id, path="/a")
            await client.session_update(
                session_id=params.session_id,
                update=agent_message_chunk(content=text(text=read.content)),
            )
            answer = await client.request_permission(
                session_id=params.session_id,
                tool_call=tool_call_update(tool_call_id="t1"),
                options=(v1.PermissionOption(option_id="ok", name="Allow", kind="allow_once"),),
            )
            self.seen.append(answer.outcome)
            return v1.PromptResponse(stop_reason="end_turn")

        responder.connection.spawn(responder.respond_with, turn())

    async def cancel(self, params: v1.CancelNotification, cx: Connection) -> None:
        self.cancelled.set()


class Client(v1.ClientHandler):
    def __init__(self) -> None:
        self.updates: list[v1.SessionNotification] = []

    async def session_update(self, params: v1.SessionNotification, cx: Connection) -> None:
        self.updates.append(params)

    async def read_text_file(
        self, params: v1.ReadTextFileRequest, responder: Responder[v1.ReadTextFileResponse]
    ) -> v1.ReadTextFileResponse:
        return v1.ReadTextFileResponse(content=f"contents of {params.path}")

    async def request_permission(
        self,
        params: v1.RequestPermissionRequest,
        responder: Responder[v1.RequestPermissionResponse],
    ) -> v1.RequestPermissionResponse:
        chosen = params.options[0].option_id
        return v1.RequestPermissionResponse(
            outcome=v1.SelectedRequestPermissionOutcome(outcome="selected", option_id=chosen)
        )


async def test_both_facades_over_a_connection_pair() -> None:
    agent, client = Agent(), Client()
    agent_builder, client_builder = ConnectionBuilder("agent"), ConnectionBuilder("client")
    agent.attach(agent_builder)
    client.attach(client_builder)
    a, c = memory_pair()
    with anyio.fail_after(5):
        async with agent_builder.connect(a), client_builder.connect(c) as cx:
            remote = v1.RemoteAgent(cx)
            reads = v1.ClientCapabilities(fs=v1.FileSystemCapabilities(read_text_file=True))
            init = await remote.initialize(protocol_version=1, client_capabilities=reads)
            assert init.protocol_version == 1
            session = await remote.new_session(cwd="/w", mcp_servers=())
            assert session.session_id == "s-/w"
            turn = remote.prompt(session_id=session.session_id, prompt=[text(text="go")])
            assert (await turn).stop_reason == "end_turn"
            await remote.cancel(session_id=session.session_id)
            await agent.cancelled.wait()
    [update] = client.updates
    assert update.update == agent_message_chunk(content=text(text="contents of /a"))
    assert agent.seen == [v1.SelectedRequestPermissionOutcome(outcome="selected", option_id="ok")]


async def test_a_facade_call_sends_exactly_the_params_given() -> None:
    """Unset options stay off the wire; the facade uses the connection's own send, so the
    id and the typed result are the connection's."""
    async with wire_connection(ConnectionBuilder("client")) as (cx, agent):
        sent = v1.RemoteAgent(cx).prompt(session_id="s", prompt=(text(text="hi"),))
        assert await agent.receive() == request(
            sent.id,
            "session/prompt",
            {"sessionId": "s", "prompt": [{"type": "text", "text": "hi"}]},
        )
        await agent.send(result(sent.id, {"stopReason": "cancelled"}))
        with anyio.fail_after(5):
            assert await sent == v1.PromptResponse(stop_reason="cancelled")
        await v1.RemoteAgent(cx).cancel(session_id="s")
        assert await agent.receive() == notification("session/cancel", {"sessionId": "s"})


async def test_the_agent_side_facade_refuses_to_call_what_the_client_does_not_handle() -> None:
    """The role check of the connection applies: an agent cannot send ``session/prompt``."""
    async with wire_connection(ConnectionBuilder("agent")) as (cx, _):
        with pytest.raises(Exception, match="session/prompt"):
            v1.RemoteAgent(cx).prompt(session_id="s", prompt=[])
