"""The Python SDK as a client, over real pipes, against the TypeScript SDK's agent
(peers/agent.mjs) and against examples/echo_agent.py: both must behave the same."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio
import pytest

from acp_generated.v1 import (
    AgentMessageChunkSessionUpdate,
    AgentThoughtChunkSessionUpdate,
    CancelledRequestPermissionOutcome,
    CancelNotification,
    ClientCapabilities,
    ClientHandler,
    FileSystemCapabilities,
    InitializeRequest,
    NewSessionRequest,
    PlanSessionUpdate,
    PromptRequest,
    PromptResponse,
    ReadTextFileRequest,
    ReadTextFileResponse,
    RequestPermissionRequest,
    RequestPermissionResponse,
    SelectedRequestPermissionOutcome,
    SessionNotification,
    SessionUpdate,
    TextContentBlock,
    ToolCallSessionUpdate,
    ToolCallUpdateSessionUpdate,
)
from acp_runtime import (
    Connection,
    ConnectionBuilder,
    RequestError,
    Responder,
    SentRequest,
    Transport,
    spawn_agent,
)
from acp_runtime.tracing import TraceEvent, TraceSink, TracingTransport

from .node_peers import echo_agent_command, ts_agent_command

STARTUP_TIMEOUT = 15
"""Seconds for spawning the agent and initializing (Node starts slowly on a busy machine)."""
STEP_TIMEOUT = 5


class RecordingClient(ClientHandler):
    """Records updates; answers permission with a fixed option, or holds the request
    until the agent cancels it; serves files from disk."""

    def __init__(self, permission: str) -> None:
        self.permission = permission
        self.updates: list[SessionUpdate] = []
        self.permission_requested = anyio.Event()
        self.permission_cancel_seen = anyio.Event()

    async def session_update(self, params: SessionNotification, cx: Connection) -> None:
        self.updates.append(params.update)

    async def request_permission(
        self, params: RequestPermissionRequest, responder: Responder[RequestPermissionResponse]
    ) -> RequestPermissionResponse | None:
        self.permission_requested.set()
        if self.permission == "hold":
            # Waiting for the cancellation inside the handler would stop the dispatch
            # loop that delivers it (IN-5): wait in spawned work instead.
            responder.connection.spawn(self._answer_when_cancelled, responder)
            return None
        return RequestPermissionResponse(
            outcome=SelectedRequestPermissionOutcome(outcome="selected", option_id=self.permission)
        )

    async def _answer_when_cancelled(self, responder: Responder[RequestPermissionResponse]) -> None:
        await responder.cancellation.cancelled()
        self.permission_cancel_seen.set()
        responder.respond(
            RequestPermissionResponse(
                outcome=CancelledRequestPermissionOutcome(outcome="cancelled")
            )
        )

    async def read_text_file(
        self, params: ReadTextFileRequest, responder: Responder[ReadTextFileResponse]
    ) -> ReadTextFileResponse:
        try:
            return ReadTextFileResponse(content=await anyio.Path(params.path).read_text())
        except OSError:
            raise RequestError(-32002, "Resource not found", {"uri": params.path}) from None

    def texts(self) -> list[str]:
        return [
            u.content.text
            for u in self.updates
            if isinstance(u, AgentMessageChunkSessionUpdate)
            and isinstance(u.content, TextContentBlock)
        ]


@dataclass
class Session:
    cx: Connection
    session_id: str
    client: RecordingClient

    def prompt(self, text: str) -> SentRequest[PromptResponse]:
        return self.cx.send_request(
            PromptRequest(
                session_id=self.session_id, prompt=[TextContentBlock(type="text", text=text)]
            )
        )


AGENTS = {"ts-agent": ts_agent_command, "echo-agent": echo_agent_command}


@pytest.fixture(params=sorted(AGENTS))
def agent_command(request: pytest.FixtureRequest) -> list[str]:
    if request.param == "ts-agent":
        request.getfixturevalue("node")  # skips without Node.js
    return AGENTS[request.param]("--quiet")


@asynccontextmanager
async def session(
    agent: list[str], *, permission: str = "allow", trace: TraceSink | None = None
) -> AsyncIterator[Session]:
    client = RecordingClient(permission)
    builder = ConnectionBuilder(role="client")
    client.attach(builder)
    async with spawn_agent(agent, stderr="discard") as process:
        transport: Transport = process if trace is None else TracingTransport(process, trace)
        async with builder.connect(transport) as cx:
            yield await _open_session(cx, client)


async def _open_session(cx: Connection, client: RecordingClient) -> Session:
    """initialize (advertising fs reads) and session/new."""
    with anyio.fail_after(STARTUP_TIMEOUT):
        init = await cx.send_request(
            InitializeRequest(
                protocol_version=1,
                client_capabilities=ClientCapabilities(
                    fs=FileSystemCapabilities(read_text_file=True)
                ),
            )
        )
        new = await cx.send_request(NewSessionRequest(cwd=str(Path.cwd()), mcp_servers=[]))
    assert init.protocol_version == 1
    assert new.session_id == "sess-1"
    return Session(cx, new.session_id, client)


@pytest.mark.anyio
async def test_prompt_streams_chunks_then_ends_the_turn(agent_command: list[str]) -> None:
    async with session(agent_command) as s:
        with anyio.fail_after(STEP_TIMEOUT):
            chunks = await s.prompt("chunks 3")
            echoed = await s.prompt("  hello from python  ")
            pong = await s.cx.send_raw_request("_echo/ping", {"seq": [1, 2]})
    assert chunks.stop_reason == echoed.stop_reason == "end_turn"
    texts = s.client.texts()
    assert texts[:3] == ["chunk 0\n", "chunk 1\n", "chunk 2\n"]
    assert "".join(texts[3:]) == "hello from python" and len(texts[3:]) == 3
    assert pong == {"pong": {"seq": [1, 2]}}


@pytest.mark.anyio
async def test_mixed_updates_arrive_typed(agent_command: list[str]) -> None:
    async with session(agent_command) as s:
        with anyio.fail_after(STEP_TIMEOUT):
            await s.prompt("mixed")
    kinds = [type(u) for u in s.client.updates]
    assert kinds == [
        AgentThoughtChunkSessionUpdate,
        ToolCallSessionUpdate,
        ToolCallUpdateSessionUpdate,
        PlanSessionUpdate,
        AgentMessageChunkSessionUpdate,
    ]
    update = s.client.updates[2]
    assert isinstance(update, ToolCallUpdateSessionUpdate) and update.status == "completed"


@pytest.mark.anyio
async def test_permission_answer_reaches_the_agent(agent_command: list[str]) -> None:
    async with session(agent_command, permission="reject") as s:
        with anyio.fail_after(STEP_TIMEOUT):
            response = await s.prompt("permission")
    assert s.client.permission_requested.is_set()
    assert s.client.texts() == ["permission:selected:reject"]
    assert response.stop_reason == "end_turn"


@pytest.mark.anyio
async def test_agent_reads_a_file_through_the_client(
    agent_command: list[str], tmp_path: Path
) -> None:
    notes = tmp_path / "notes.txt"
    notes.write_text("line one\nline two \u2603\n")
    async with session(agent_command) as s:
        with anyio.fail_after(STEP_TIMEOUT):
            await s.prompt(f"read {notes}")
            await s.prompt(f"read {tmp_path / 'absent.txt'}")
    found, missing = s.client.texts()
    assert found == "line one\nline two \u2603\n"
    assert missing == "read-error:-32002:Resource not found"


@pytest.mark.anyio
async def test_session_cancel_ends_the_turn_as_cancelled(agent_command: list[str]) -> None:
    async with session(agent_command) as s:
        with anyio.fail_after(STEP_TIMEOUT):
            turn = s.prompt("sleep 20000")
            s.cx.send_notification(CancelNotification(session_id=s.session_id))
            response = await turn
    assert response.stop_reason == "cancelled"
    assert s.client.texts() == []


@pytest.mark.anyio
async def test_cancel_request_gets_minus_32800_from_the_agent(agent_command: list[str]) -> None:
    async with session(agent_command) as s:
        with anyio.fail_after(STEP_TIMEOUT):
            turn = s.prompt("sleep 20000")
            turn.cancel()  # $/cancel_request; the agent's real answer still arrives (OUT-3)
            with pytest.raises(RequestError) as caught:
                await turn
            after = await s.prompt("after")
    assert caught.value.code == -32800
    assert after.stop_reason == "end_turn"


@pytest.mark.anyio
async def test_agent_cancels_its_permission_request_to_the_python_client(
    agent_command: list[str],
) -> None:
    async with session(agent_command, permission="hold") as s:
        with anyio.fail_after(STEP_TIMEOUT):
            turn = s.prompt("permission")
            await s.client.permission_requested.wait()
            s.cx.send_notification(CancelNotification(session_id=s.session_id))
            await s.client.permission_cancel_seen.wait()  # the agent's $/cancel_request
            response = await turn
    assert response.stop_reason == "cancelled"
    assert s.client.texts() == ["permission:cancelled"]


class WireLog:
    """Trace sink: decoded messages in both directions, and an event per awaited match."""

    def __init__(self) -> None:
        self.messages: list[tuple[str, dict[str, Any]]] = []
        self._waiters: list[tuple[Callable[[str, dict[str, Any]], bool], anyio.Event]] = []

    def __call__(self, event: TraceEvent) -> None:
        message = json.loads(event.message)
        self.messages.append((event.direction, message))
        for matches, seen in self._waiters:
            if matches(event.direction, message):
                seen.set()

    def when(self, matches: Callable[[str, dict[str, Any]], bool]) -> anyio.Event:
        seen = anyio.Event()
        self._waiters.append((matches, seen))
        return seen


@pytest.mark.anyio
async def test_abandoned_prompt_is_cancelled_on_the_wire(agent_command: list[str]) -> None:
    """OUT-5 against a real peer: when the task awaiting a request is cancelled, the
    runtime sends `$/cancel_request`; the agent then answers -32800, and the late answer
    is dropped quietly."""
    wire = WireLog()
    async with session(agent_command, trace=wire) as s:
        prompt_sent = wire.when(lambda d, m: d == "out" and m.get("method") == "session/prompt")
        answered = wire.when(lambda d, m: d == "in" and m.get("error", {}).get("code") == -32800)

        async def await_prompt() -> None:
            await s.prompt("sleep 20000")

        with anyio.fail_after(STEP_TIMEOUT):
            async with anyio.create_task_group() as tg:
                tg.start_soon(await_prompt)
                await prompt_sent.wait()
                tg.cancel_scope.cancel()  # the awaiting task gives up
            await answered.wait()
            after = await s.prompt("still usable")
    out = [m for d, m in wire.messages if d == "out"]
    prompt = next(m for m in out if m.get("method") == "session/prompt")
    assert {
        "jsonrpc": "2.0",
        "method": "$/cancel_request",
        "params": {"requestId": prompt["id"]},
    } in out
    responses = [m for d, m in wire.messages if d == "in" and "method" not in m]
    [answer] = [m for m in responses if m["id"] == prompt["id"]]
    assert answer["error"]["code"] == -32800
    assert after.stop_reason == "end_turn"
