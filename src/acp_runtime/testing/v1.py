"""A scripted ACP v1 client for testing an agent in one process.

``agent_client(MyAgent(), files={...})`` connects to the agent in memory, initializes it
with the capabilities configured, and yields a :class:`TestClient`::

    async with agent_client(MyAgent(), files={"/r/README.md": "hi"}) as client:
        updates, answer = await client.prompt("read /r/README.md")
        assert_stop_reason(answer, "end_turn")
        assert "hi" in text_of(updates)

Every message the agent sends is checked against the strict v1 schema; the first call
after an invalid one raises :class:`~acp_runtime.testing._client.AgentProtocolError`
naming the method and the field.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator, Mapping, Sequence
from contextlib import asynccontextmanager

import anyio

from acp_generated import v1
from acp_generated.v1 import methods as m

from .._connection import Connection
from .._responder import Responder
from .._run import Attachable
from ._client import connect_in_memory, raise_on_errors
from ._fakes import FakeCommand, FakeFiles, FakeTerminals, PermissionRule, choose_option
from ._validation import Finding, MessageValidator

__all__ = ["ScriptedClient", "TestClient", "agent_client", "assert_stop_reason", "text_of"]


class ScriptedClient(v1.ClientHandler):
    """The client side: records updates, answers permissions by a rule, serves fakes."""

    def __init__(
        self,
        files: FakeFiles,
        terminals: FakeTerminals,
        permission: PermissionRule[v1.RequestPermissionRequest],
    ) -> None:
        self.files = files
        self.terminals = terminals
        self.permission: PermissionRule[v1.RequestPermissionRequest] = permission
        self.notifications: list[v1.SessionNotification] = []
        self.permission_requests: list[v1.RequestPermissionRequest] = []

    async def session_update(self, params: v1.SessionNotification, cx: Connection) -> None:
        self.notifications.append(params)

    async def request_permission(
        self,
        params: v1.RequestPermissionRequest,
        responder: Responder[v1.RequestPermissionResponse],
    ) -> v1.RequestPermissionResponse:
        self.permission_requests.append(params)
        options = [(option.option_id, option.kind) for option in params.options]
        chosen = choose_option(self.permission, params, options)
        outcome: v1.RequestPermissionOutcome = (
            v1.CancelledRequestPermissionOutcome()
            if chosen is None
            else v1.SelectedRequestPermissionOutcome(option_id=chosen)
        )
        return v1.RequestPermissionResponse(outcome=outcome)

    async def read_text_file(
        self, params: v1.ReadTextFileRequest, responder: Responder[v1.ReadTextFileResponse]
    ) -> v1.ReadTextFileResponse:
        return v1.ReadTextFileResponse(
            content=self.files.read(params.path, params.line, params.limit)
        )

    async def write_text_file(
        self, params: v1.WriteTextFileRequest, responder: Responder[v1.WriteTextFileResponse]
    ) -> v1.WriteTextFileResponse:
        self.files.write(params.path, params.content)
        return v1.WriteTextFileResponse()

    async def create_terminal(
        self, params: v1.CreateTerminalRequest, responder: Responder[v1.CreateTerminalResponse]
    ) -> v1.CreateTerminalResponse:
        terminal_id = self.terminals.create(params.command, params.args or [])
        return v1.CreateTerminalResponse(terminal_id=terminal_id)

    async def terminal_output(
        self, params: v1.TerminalOutputRequest, responder: Responder[v1.TerminalOutputResponse]
    ) -> v1.TerminalOutputResponse:
        terminal = self.terminals.get(params.terminal_id)
        status = v1.TerminalExitStatus(exit_code=terminal.result.exit_code)
        return v1.TerminalOutputResponse(
            output=terminal.result.output, truncated=False, exit_status=status
        )

    async def wait_for_terminal_exit(
        self,
        params: v1.WaitForTerminalExitRequest,
        responder: Responder[v1.WaitForTerminalExitResponse],
    ) -> v1.WaitForTerminalExitResponse:
        terminal = self.terminals.get(params.terminal_id)
        return v1.WaitForTerminalExitResponse(exit_code=terminal.result.exit_code)

    async def kill_terminal(
        self, params: v1.KillTerminalRequest, responder: Responder[v1.KillTerminalResponse]
    ) -> v1.KillTerminalResponse:
        self.terminals.get(params.terminal_id).killed = True
        return v1.KillTerminalResponse()

    async def release_terminal(
        self, params: v1.ReleaseTerminalRequest, responder: Responder[v1.ReleaseTerminalResponse]
    ) -> v1.ReleaseTerminalResponse:
        self.terminals.get(params.terminal_id).released = True
        return v1.ReleaseTerminalResponse()


class TestClient:
    """One connection to the agent under test, as a client that scripts its side."""

    __test__ = False  # not a pytest test class

    def __init__(
        self,
        cx: Connection,
        scripted: ScriptedClient,
        validator: MessageValidator,
        capabilities: v1.ClientCapabilities,
    ) -> None:
        self.connection = cx
        self.agent = v1.RemoteAgent(cx)
        """The typed facade, for requests this client has no shortcut for."""
        self.capabilities = capabilities
        self.files = scripted.files
        self.terminals = scripted.terminals
        self._scripted = scripted
        self._validator = validator
        self.initialized: v1.InitializeResponse | None = None
        self.session_id: str | None = None

    @property
    def notifications(self) -> list[v1.SessionNotification]:
        """Every ``session/update`` received so far, in order."""
        return self._scripted.notifications

    @property
    def permission_requests(self) -> list[v1.RequestPermissionRequest]:
        return self._scripted.permission_requests

    @property
    def warnings(self) -> list[Finding]:
        """Fields the strict schema refused but a lenient rule salvaged."""
        return self._validator.warnings()

    def check(self) -> None:
        """Raise :class:`AgentProtocolError` if the agent sent an invalid message."""
        raise_on_errors(self._validator)

    async def initialize(self) -> v1.InitializeResponse:
        answer = await self.agent.initialize(
            protocol_version=m.PROTOCOL_VERSION,
            client_capabilities=self.capabilities,
            client_info=v1.Implementation(name="acp-test-client", version="1"),
        )
        self.check()
        self.initialized = answer
        return answer

    async def new_session(self, cwd: str = "/", mcp_servers: Sequence[v1.McpServer] = ()) -> str:
        """Open a session (initializing first if needed); later prompts go to it."""
        if self.initialized is None:
            await self.initialize()
        answer = await self.agent.new_session(cwd=cwd, mcp_servers=list(mcp_servers))
        self.check()
        self.session_id = answer.session_id
        return answer.session_id

    async def prompt(
        self,
        prompt: str | Sequence[v1.ContentBlock],
        *,
        session_id: str | None = None,
        time_limit: float = 10,
    ) -> tuple[list[v1.SessionUpdate], v1.PromptResponse]:
        """One prompt turn: the updates the agent sent during it, and its answer."""
        if session_id is None:
            session_id = self.session_id or await self.new_session()
        blocks = [v1.TextContentBlock(text=prompt)] if isinstance(prompt, str) else list(prompt)
        start = len(self.notifications)
        with anyio.fail_after(time_limit):
            answer = await self.agent.prompt(session_id=session_id, prompt=blocks)
        self.check()
        turn = self.notifications[start:]
        return [n.update for n in turn if n.session_id == session_id], answer

    async def cancel(self, session_id: str | None = None) -> None:
        """Send ``session/cancel`` for the session (the current one by default)."""
        sid = session_id or self.session_id
        assert sid is not None, "no session to cancel: call new_session() or prompt() first"
        await self.agent.cancel(session_id=sid)

    def text(self, updates: Sequence[v1.SessionUpdate] | None = None) -> str:
        """The agent's message text: every ``agent_message_chunk``'s text, joined."""
        return text_of(updates if updates is not None else [n.update for n in self.notifications])


def text_of(updates: Sequence[v1.SessionUpdate]) -> str:
    """The text of the ``agent_message_chunk`` updates among ``updates``, joined."""
    return "".join(
        update.content.text
        for update in updates
        if isinstance(update, v1.AgentMessageChunkSessionUpdate)
        and isinstance(update.content, v1.TextContentBlock)
    )


def assert_stop_reason(answer: v1.PromptResponse, expected: v1.StopReason) -> None:
    """Assert the turn stopped for ``expected``, saying what it stopped for instead."""
    assert answer.stop_reason == expected, (
        f"session/prompt result: stopReason: expected {expected!r}, got {answer.stop_reason!r}"
    )


@asynccontextmanager
async def agent_client(
    agent: Attachable,
    *,
    files: Mapping[str, str] | None = None,
    terminals: Mapping[str, FakeCommand | str] | None = None,
    permission: PermissionRule[v1.RequestPermissionRequest] = "allow",
    capabilities: v1.ClientCapabilities | None = None,
    initialize: bool = True,
) -> AsyncGenerator[TestClient, None]:
    """Connect a scripted client to ``agent`` (a ``v1.AgentHandler`` instance).

    Capabilities default to what is configured: ``fs`` read and write when ``files`` is
    given, ``terminal`` when ``terminals`` is; pass ``capabilities`` to declare others.
    With ``initialize`` (the default) the client has sent ``initialize`` on entry.
    """
    if capabilities is None:
        capabilities = v1.ClientCapabilities(
            fs=v1.FileSystemCapabilities(
                read_text_file=files is not None, write_text_file=files is not None
            ),
            terminal=terminals is not None,
        )
    scripted = ScriptedClient(FakeFiles(dict(files or {})), FakeTerminals(terminals), permission)
    validator = MessageValidator(m.REQUESTS, m.NOTIFICATIONS)
    async with connect_in_memory(agent, scripted, validator) as cx:
        client = TestClient(cx, scripted, validator, capabilities)
        if initialize:
            await client.initialize()
        yield client
    client.check()
