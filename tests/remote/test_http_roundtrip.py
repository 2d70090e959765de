"""Our Streamable HTTP client (``connect_http``) against our server (``http_app``, and
``acp_app`` with ``connect_to_remote_agent`` over both schemes) under hypercorn, and under
uvicorn on asyncio: the whole runtime over HTTP unchanged (initialize, a session, a
permission round trip, a file read, ``session/cancel``, ``$/cancel_request``,
``session/load`` on a fresh connection, close with DELETE)."""

from __future__ import annotations

from collections.abc import Callable
from contextlib import AbstractAsyncContextManager
from pathlib import Path

import anyio
import pytest

from acp_generated import v1
from acp_generated.v1 import CancelNotification
from acp_generated.v1 import builders as b
from acp_runtime import ConnectionBuilder, RequestError
from acp_runtime.remote import acp_app, connect_http, connect_to_remote_agent, http_app

from .http_agent import LoadingEchoAgent
from .test_websocket_roundtrip import Client

pytestmark = pytest.mark.anyio

Serving = Callable[..., AbstractAsyncContextManager[int]]
"""``serving(app)`` of the ASGI server under test (the ``asgi_server`` fixture)."""


async def test_our_client_runs_the_whole_flow_against_our_server(
    tmp_path: Path, asgi_server: Serving
) -> None:
    notes = tmp_path / "notes.txt"
    notes.write_text("h\u00e9llo over http\n", encoding="utf-8")
    app = http_app(LoadingEchoAgent)
    client = Client()
    async with asgi_server(app) as port:
        url = f"http://127.0.0.1:{port}/acp"
        builder = ConnectionBuilder(role="client")
        client.attach(builder)
        with anyio.fail_after(30):
            async with connect_http(url) as transport, builder.connect(transport) as cx:
                agent = v1.RemoteAgent(cx)
                fs = v1.FileSystemCapabilities(read_text_file=True)
                init = await agent.initialize(
                    protocol_version=1, client_capabilities=v1.ClientCapabilities(fs=fs)
                )
                first_id = transport.connection_id
                assert first_id is not None and app.connection(first_id) is not None
                sid = (await agent.new_session(cwd=str(tmp_path), mcp_servers=[])).session_id

                async def prompt(text: str) -> str:
                    answer = await agent.prompt(session_id=sid, prompt=[b.text(text=text)])
                    return answer.stop_reason

                assert await prompt("permission") == "end_turn"
                assert await prompt(f"read {notes}") == "end_turn"
                turn = cx.send_raw_request(
                    "session/prompt",
                    {"sessionId": sid, "prompt": [{"type": "text", "text": "sleep 20000"}]},
                )
                await anyio.sleep(0.2)
                cx.send_notification(CancelNotification(session_id=sid))
                assert (await turn) == {"stopReason": "cancelled"}
                aborted = cx.send_raw_request(
                    "session/prompt",
                    {"sessionId": sid, "prompt": [{"type": "text", "text": "sleep 20000"}]},
                )
                await anyio.sleep(0.2)
                aborted.cancel()
                with pytest.raises(RequestError) as caught:
                    await aborted
            assert app.connection(first_id) is None  # closing sent DELETE
            builder = ConnectionBuilder(role="client")
            client.attach(builder)
            async with connect_http(url) as transport, builder.connect(transport) as cx:
                agent = v1.RemoteAgent(cx)
                await agent.initialize(protocol_version=1)
                await agent.load_session(session_id=sid, cwd=str(tmp_path), mcp_servers=[])
                for _ in range(500):  # the replay comes on the session's own stream
                    if f"replay {sid}" in client.texts:
                        break
                    await anyio.sleep(0.01)
    assert init.agent_capabilities is not None and init.agent_capabilities.load_session
    assert f"replay {sid}" in client.texts
    assert caught.value.code == -32800
    assert "permission:selected:allow" in client.texts
    assert "h\u00e9llo over http\n" in client.texts


@pytest.mark.parametrize("scheme", ["http", "ws"])
async def test_one_acp_app_serves_our_client_on_either_scheme(
    scheme: str, asgi_server: Serving
) -> None:
    async with asgi_server(acp_app(LoadingEchoAgent)) as port:
        with anyio.fail_after(20):
            url = f"{scheme}://127.0.0.1:{port}/acp"
            async with connect_to_remote_agent(url, Client()) as cx:
                agent = v1.RemoteAgent(cx)
                await agent.initialize(protocol_version=1)
                sid = (await agent.new_session(cwd="/tmp", mcp_servers=[])).session_id
                answer = await agent.prompt(session_id=sid, prompt=[b.text(text="permission")])
    assert answer.stop_reason == "end_turn"
