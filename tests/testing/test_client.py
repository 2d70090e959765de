"""The typed test client (``acp_runtime.testing.v1`` / ``v2``): fakes, rules, and failures
that name the message and the field."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from acp_generated import v1
from acp_generated.v1 import builders as b
from acp_runtime import Responder
from acp_runtime.testing import AgentProtocolError, FakeCommand
from acp_runtime.testing import v2 as testing_v2
from acp_runtime.testing.v1 import agent_client, assert_stop_reason, text_of

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "examples"))

from v2_agent import V2Agent


class ToolAgent(v1.AgentHandler):
    """Runs the prompt as a command in a terminal, asks to save its output, saves it."""

    async def initialize(
        self, params: v1.InitializeRequest, responder: Responder[v1.InitializeResponse]
    ) -> v1.InitializeResponse:
        return v1.InitializeResponse(protocol_version=1)

    async def new_session(
        self, params: v1.NewSessionRequest, responder: Responder[v1.NewSessionResponse]
    ) -> v1.NewSessionResponse:
        return v1.NewSessionResponse(session_id="s")

    async def prompt(
        self, params: v1.PromptRequest, responder: Responder[v1.PromptResponse]
    ) -> None:
        responder.connection.spawn(self._turn, params, responder)

    async def _turn(
        self, params: v1.PromptRequest, responder: Responder[v1.PromptResponse]
    ) -> None:
        client = v1.RemoteClient(responder.connection)
        sid = params.session_id
        [block] = params.prompt
        assert isinstance(block, v1.TextContentBlock)
        command, *args = block.text.split()
        terminal = await client.create_terminal(session_id=sid, command=command, args=args)
        tid = terminal.terminal_id
        exit_status = await client.wait_for_terminal_exit(session_id=sid, terminal_id=tid)
        output = await client.terminal_output(session_id=sid, terminal_id=tid)
        await client.release_terminal(session_id=sid, terminal_id=tid)
        await client.session_update(
            session_id=sid,
            update=b.agent_message_chunk(content=b.text(text=f"exit {exit_status.exit_code}")),
        )
        options = [
            v1.PermissionOption(option_id="save", name="Save", kind="allow_once"),
            v1.PermissionOption(option_id="skip", name="Skip", kind="reject_once"),
        ]
        tool_call = v1.ToolCallUpdate(tool_call_id="t1", title="Save output")
        answer = await client.request_permission(
            session_id=sid, tool_call=tool_call, options=options
        )
        if answer.outcome.outcome == "selected" and answer.outcome.option_id == "save":
            await client.write_text_file(session_id=sid, path="/w/out.txt", content=output.output)
        responder.respond(v1.PromptResponse(stop_reason="end_turn"))


@pytest.mark.anyio
async def test_terminals_permissions_and_writes_through_the_fakes() -> None:
    terminals = {
        "make test": FakeCommand(output="2 passed\n", exit_code=0),
        "false": FakeCommand(exit_code=1),
    }
    async with agent_client(ToolAgent(), files={}, terminals=terminals) as client:
        updates, answer = await client.prompt("make test")
        assert_stop_reason(answer, "end_turn")
        assert text_of(updates) == "exit 0"
        assert client.files.writes == [("/w/out.txt", "2 passed\n")]
        assert client.terminals.run == ["make test"]
        assert client.terminals.terminals["term-1"].released
        updates, _ = await client.prompt("no-such-tool --flag")
        assert text_of(updates) == "exit 127"


@pytest.mark.anyio
async def test_a_callable_permission_rule_sees_the_typed_request() -> None:
    seen: list[str] = []

    def skip(request: v1.RequestPermissionRequest) -> str:
        seen.append(str(request.tool_call.title))
        return "skip"

    async with agent_client(ToolAgent(), files={}, terminals={}, permission=skip) as client:
        await client.prompt("ls")
    assert seen == ["Save output"]
    assert client.files.writes == []


class InvalidUpdateAgent(ToolAgent):
    """Sends a text chunk without its text: the strict schema refuses it."""

    async def prompt(
        self, params: v1.PromptRequest, responder: Responder[v1.PromptResponse]
    ) -> v1.PromptResponse:
        broken = v1.TextContentBlock.model_construct(type="text")
        update = v1.AgentMessageChunkSessionUpdate.model_construct(
            session_update="agent_message_chunk", content=broken
        )
        await responder.connection.send_notification(
            v1.SessionNotification(session_id=params.session_id, update=update)
        )
        return v1.PromptResponse(stop_reason="end_turn")


@pytest.mark.anyio
async def test_an_invalid_message_fails_naming_the_method_and_the_field() -> None:
    with pytest.raises(AgentProtocolError) as caught:
        async with agent_client(InvalidUpdateAgent()) as client:
            await client.prompt("hi")
    message = str(caught.value)
    assert "session/update params: update.content.text: Field required" in message
    [finding] = caught.value.findings
    assert (finding.method, finding.part, finding.severity) == ("session/update", "params", "error")


class SalvagedAgent(ToolAgent):
    """A tool call whose ``kind`` is not one the schema knows: salvaged to the default."""

    async def prompt(
        self, params: v1.PromptRequest, responder: Responder[v1.PromptResponse]
    ) -> v1.PromptResponse:
        update = v1.ToolCallSessionUpdate.model_construct(
            session_update="tool_call", tool_call_id="t", title="x", kind="teleport"
        )
        await responder.connection.send_notification(
            v1.SessionNotification(session_id=params.session_id, update=update)
        )
        return v1.PromptResponse(stop_reason="end_turn")


@pytest.mark.anyio
async def test_a_salvaged_field_is_a_warning_naming_it() -> None:
    async with agent_client(SalvagedAgent()) as client:
        updates, _ = await client.prompt("hi")
    assert len(updates) == 1
    [warning] = client.warnings
    assert warning.method == "session/update" and warning.where.endswith("kind")


@pytest.mark.anyio
async def test_assert_stop_reason_says_what_the_turn_stopped_for() -> None:
    with pytest.raises(AssertionError, match="expected 'refusal', got 'end_turn'"):
        assert_stop_reason(v1.PromptResponse(stop_reason="end_turn"), "refusal")


@pytest.mark.anyio
async def test_the_v2_client_waits_for_the_idle_state_update() -> None:
    async with testing_v2.agent_client(V2Agent(0.0)) as client:
        updates, stop_reason = await client.prompt("one two")
    assert stop_reason == "end_turn"
    assert client.text(updates) == "one two"
    assert updates[-1].session_update == "state_update"


def test_wire_peer_is_still_where_it_was() -> None:
    from acp_runtime.testing import WirePeer, wire_connection

    assert WirePeer.__module__ == "acp_runtime.testing._wire" and callable(wire_connection)
