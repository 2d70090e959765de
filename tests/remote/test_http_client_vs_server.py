"""Our Streamable HTTP client against our ASGI server (``http_app`` under hypercorn), on
both backends: the interop flow (permission, file read, both cancellations, close, then
``session/load`` on a fresh connection), and a token the server refuses."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import anyio
import pytest

from acp_generated import v1
from acp_generated.v1 import builders as b
from acp_runtime import ConnectionBuilder, RequestError
from acp_runtime.remote import Refusal, connect_http, http_app

from .http_agent import LoadingEchoAgent
from .hypercorn_server import serving

pytestmark = pytest.mark.anyio

FILE_TEXT = "line one\nline two\n"


class Client(v1.ClientHandler):
    def __init__(self) -> None:
        self.texts: list[str] = []

    async def session_update(self, params: v1.SessionNotification, cx: Any) -> None:
        update = params.update
        if isinstance(update, v1.AgentMessageChunkSessionUpdate) and isinstance(
            update.content, v1.TextContentBlock
        ):
            self.texts.append(update.content.text)

    async def request_permission(
        self, params: v1.RequestPermissionRequest, responder: Any
    ) -> v1.RequestPermissionResponse:
        option = params.options[0].option_id
        outcome = v1.SelectedRequestPermissionOutcome(outcome="selected", option_id=option)
        return v1.RequestPermissionResponse(outcome=outcome)

    async def read_text_file(
        self, params: v1.ReadTextFileRequest, responder: Any
    ) -> v1.ReadTextFileResponse:
        return v1.ReadTextFileResponse(content=FILE_TEXT)


async def test_our_client_against_our_server() -> None:
    client, reloaded = Client(), Client()
    async with serving(http_app(LoadingEchoAgent)) as port:
        url = f"http://127.0.0.1:{port}/acp"
        builder = ConnectionBuilder(role="client")
        client.attach(builder)
        with anyio.fail_after(30):
            async with connect_http(url) as transport, builder.connect(transport) as cx:
                agent = v1.RemoteAgent(cx)
                fs = v1.FileSystemCapabilities(read_text_file=True)
                caps = v1.ClientCapabilities(fs=fs)
                await agent.initialize(protocol_version=1, client_capabilities=caps)
                sid = (await agent.new_session(cwd="/tmp", mcp_servers=[])).session_id

                async def prompt(text: str) -> str:
                    answer = await agent.prompt(session_id=sid, prompt=[b.text(text=text)])
                    return answer.stop_reason

                assert await prompt("permission") == "end_turn"
                assert await prompt("read /any/file") == "end_turn"
                stops: list[str] = []
                async with anyio.create_task_group() as tg:

                    async def sleeper() -> None:
                        stops.append(await prompt("sleep 30000"))

                    tg.start_soon(sleeper)
                    await anyio.sleep(0.3)
                    await agent.cancel(session_id=sid)
                params = {"sessionId": sid, "prompt": [{"type": "text", "text": "sleep 30000"}]}
                sleeping = cx.send_raw_request("session/prompt", params)
                await anyio.sleep(0.3)
                sleeping.cancel()
                with pytest.raises(RequestError) as caught:
                    await sleeping
            builder = ConnectionBuilder(role="client")
            reloaded.attach(builder)
            async with connect_http(url) as transport, builder.connect(transport) as cx:
                agent = v1.RemoteAgent(cx)
                init = await agent.initialize(protocol_version=1)
                assert init.agent_capabilities.load_session
                await agent.load_session(session_id=sid, cwd="/tmp", mcp_servers=[])
                while not reloaded.texts:  # noqa: ASYNC110 - the replay may come after
                    await anyio.sleep(0.01)
    assert stops == ["cancelled"] and caught.value.code == -32800
    assert "permission:selected:allow" in client.texts and FILE_TEXT in client.texts
    assert reloaded.texts == [f"replay {sid}"]


async def test_a_token_the_server_refuses_fails_initialize_without_echoing_it() -> None:
    def only_good(headers: Mapping[str, str]) -> bool | Refusal:
        return headers.get("authorization") == "Bearer good" or Refusal(401, challenge="Bearer")

    async with serving(http_app(LoadingEchoAgent, authenticate=only_good)) as port:
        url = f"http://127.0.0.1:{port}/acp"
        headers = {"Authorization": "Bearer wrong-token-123"}
        with anyio.fail_after(10):
            async with connect_http(url, headers=headers) as transport:
                async with ConnectionBuilder(role="client").connect(transport) as cx:
                    with pytest.raises(RequestError) as caught:
                        await cx.send_raw_request("initialize", {"protocolVersion": 1})
            async with connect_http(url, headers={"Authorization": "Bearer good"}) as transport:
                async with ConnectionBuilder(role="client").connect(transport) as cx:
                    await cx.send_raw_request("initialize", {"protocolVersion": 1})
    assert caught.value.message.startswith("ACP initialize failed: 401")
    assert "wrong-token-123" not in str(caught.value.message) + str(caught.value.data)
