"""Our WebSocket client against our server under hypercorn, under uvicorn and on its
own listener: the whole runtime runs over the socket unchanged (initialize, a session, a
prompt with a permission round trip and a file read, ``$/cancel_request``)."""

from __future__ import annotations

from collections.abc import Callable
from contextlib import AbstractAsyncContextManager
from pathlib import Path

import anyio
import pytest

from acp_generated import v1
from acp_generated.v1 import builders as b
from acp_runtime import Connection, ConnectionBuilder, Responder
from acp_runtime.remote import connect_websocket, websocket_app

pytestmark = pytest.mark.anyio

Serving = Callable[..., AbstractAsyncContextManager[int]]
"""``serving(app)`` of the server under test (the ``any_websocket_server`` fixture)."""


class Client(v1.ClientHandler):
    """Allows every permission (or holds it until cancelled) and reads files."""

    def __init__(self, hold: bool = False) -> None:
        self.hold = hold
        self.asked = anyio.Event()
        self.withdrawn = anyio.Event()
        self.texts: list[str] = []

    async def session_update(self, params: v1.SessionNotification, cx: Connection) -> None:
        update = params.update
        if isinstance(update, v1.AgentMessageChunkSessionUpdate) and isinstance(
            update.content, v1.TextContentBlock
        ):
            self.texts.append(update.content.text)

    async def request_permission(
        self,
        params: v1.RequestPermissionRequest,
        responder: Responder[v1.RequestPermissionResponse],
    ) -> v1.RequestPermissionResponse | None:
        self.asked.set()
        if self.hold:
            responder.connection.spawn(self._hold, responder)
            return None
        outcome = v1.SelectedRequestPermissionOutcome(outcome="selected", option_id="allow")
        return v1.RequestPermissionResponse(outcome=outcome)

    async def _hold(self, responder: Responder[v1.RequestPermissionResponse]) -> None:
        await responder.cancellation.cancelled()  # the agent withdraws it: $/cancel_request
        self.withdrawn.set()
        cancelled = v1.DeniedRequestPermissionOutcome(outcome="cancelled")
        responder.respond(v1.RequestPermissionResponse(outcome=cancelled))

    async def read_text_file(
        self, params: v1.ReadTextFileRequest, responder: Responder[v1.ReadTextFileResponse]
    ) -> v1.ReadTextFileResponse:
        content = await anyio.Path(params.path).read_text(encoding="utf-8")
        return v1.ReadTextFileResponse(content=content)


def agent_app() -> object:
    from tutorial_agent import FileAgent  # examples/, put on sys.path by conftest

    return websocket_app(FileAgent)


async def test_a_prompt_with_a_permission_and_a_file_read_over_websocket(
    tmp_path: Path, any_websocket_server: Serving
) -> None:
    file = tmp_path / "three.txt"
    file.write_text("a\nb\nc\n", encoding="utf-8")
    client = Client()
    builder = ConnectionBuilder(role="client")
    client.attach(builder)
    async with any_websocket_server(agent_app()) as port:
        async with connect_websocket(f"ws://127.0.0.1:{port}/acp") as transport:
            assert transport.connection_id
            async with builder.connect(transport) as cx:
                agent = v1.RemoteAgent(cx)
                fs = v1.FileSystemCapabilities(read_text_file=True)
                init = await agent.initialize(
                    protocol_version=1, client_capabilities=v1.ClientCapabilities(fs=fs)
                )
                assert init.protocol_version == 1
                session = await agent.new_session(cwd=str(tmp_path), mcp_servers=[])
                assert session.session_id == "session-1"
                answer = await agent.prompt(
                    session_id=session.session_id, prompt=[b.text(text=str(file))]
                )
    assert answer.stop_reason == "end_turn"
    assert client.asked.is_set()
    assert client.texts[-1].endswith("has 3 lines. ")


async def test_cancel_request_over_websocket_ends_the_prompt_cancelled(
    tmp_path: Path, any_websocket_server: Serving
) -> None:
    client = Client(hold=True)
    builder = ConnectionBuilder(role="client")
    client.attach(builder)
    async with any_websocket_server(agent_app()) as port:
        async with connect_websocket(f"ws://127.0.0.1:{port}/acp") as transport:
            async with builder.connect(transport) as cx:
                agent = v1.RemoteAgent(cx)
                await agent.initialize(
                    protocol_version=1,
                    client_capabilities=v1.ClientCapabilities(
                        fs=v1.FileSystemCapabilities(read_text_file=True)
                    ),
                )
                session = await agent.new_session(cwd=str(tmp_path), mcp_servers=[])
                params = {
                    "sessionId": session.session_id,
                    "prompt": [{"type": "text", "text": str(tmp_path / "x")}],
                }
                prompt = cx.send_raw_request("session/prompt", params)
                with anyio.fail_after(10):
                    await client.asked.wait()
                prompt.cancel()  # sends $/cancel_request for it (a raw request: nothing else)
                with anyio.fail_after(10):
                    answer = await prompt
                with anyio.fail_after(10):
                    await client.withdrawn.wait()
    # The tutorial agent ends a turn whose prompt was cancelled either way with stop reason
    # `cancelled` (a typed client's cancel sends both $/cancel_request and session/cancel).
    assert answer == {"stopReason": "cancelled"}


async def test_each_socket_gets_a_fresh_handler(
    tmp_path: Path, any_websocket_server: Serving
) -> None:
    async with any_websocket_server(agent_app()) as port:
        for _ in range(2):
            async with connect_websocket(f"ws://127.0.0.1:{port}/acp") as transport:
                async with ConnectionBuilder(role="client").connect(transport) as cx:
                    agent = v1.RemoteAgent(cx)
                    await agent.initialize(
                        protocol_version=1,
                        client_capabilities=v1.ClientCapabilities(
                            fs=v1.FileSystemCapabilities(read_text_file=True)
                        ),
                    )
                    session = await agent.new_session(cwd=str(tmp_path), mcp_servers=[])
                    assert session.session_id == "session-1"
