"""ACP over Streamable HTTP against the TypeScript SDK 2.4.0, on both backends.

Our client (``connect_http``) against the TS ``AcpServer`` with its Node HTTP handler
(peers/http_server.mjs, the TS echo agent plus a ``session/load``): initialize,
session/new, a prompt with a permission round trip, a prompt reading a file, a prompt
cancelled with ``session/cancel`` and one with ``$/cancel_request``, close, then
``session/load`` on a fresh connection. What our client put on the wire is recorded
(httpx event hooks) and checked against the rules the TS server enforces. The same peer
serves the TS v1/v2 router (``--router``) for protocol versions 1, 2, 3, "1" and 0.
"""

from __future__ import annotations

import json
import subprocess
from collections.abc import AsyncGenerator
from contextlib import asynccontextmanager
from typing import Any

import anyio
import httpx
import pytest

from acp_generated import v1
from acp_generated.v1 import builders as b
from acp_runtime import ConnectionBuilder, RequestError
from acp_runtime.remote import HttpTransport, connect_http

from .node_peers import PEERS_DIR
from .test_websocket_interop import FILE_TEXT, Client

pytestmark = pytest.mark.anyio

HTTP_SERVER = PEERS_DIR / "http_server.mjs"


@asynccontextmanager
async def ts_http_server(node: str, *args: str) -> AsyncGenerator[str, None]:
    """The URL of peers/http_server.mjs, started for the block and stopped after it."""
    async with await anyio.open_process(
        [node, str(HTTP_SERVER), *args], stderr=subprocess.DEVNULL
    ) as process:
        assert process.stdout is not None and process.stdin is not None
        with anyio.fail_after(20):
            port = int((await process.stdout.receive()).decode().split()[0])
        try:
            yield f"http://127.0.0.1:{port}/acp"
        finally:
            await process.stdin.aclose()
            with anyio.fail_after(10):
                await process.wait()


class Wire:
    """What our client sent (method, headers, body) and what each request got."""

    def __init__(self) -> None:
        self.sent: list[tuple[str, httpx.Headers, bytes]] = []
        self.answers: list[tuple[str, int]] = []

    def client(self) -> httpx.AsyncClient:
        async def on_request(request: httpx.Request) -> None:
            body = request.content if request.method == "POST" else b""
            self.sent.append((request.method, request.headers, body))

        async def on_response(response: httpx.Response) -> None:
            self.answers.append((response.request.method, response.status_code))

        return httpx.AsyncClient(
            timeout=httpx.Timeout(None, connect=30),
            event_hooks={"request": [on_request], "response": [on_response]},
        )

    def posts(self) -> list[tuple[httpx.Headers, Any]]:
        return [
            (headers, json.loads(body)) for method, headers, body in self.sent if method == "POST"
        ]


async def run_flow(url: str, wire: Wire, client: Client) -> dict[str, Any]:
    """The whole flow on one connection; what it saw."""
    seen: dict[str, Any] = {}
    builder = ConnectionBuilder(role="client")
    client.attach(builder)
    async with wire.client() as http, connect_http(url, http_client=http) as transport:
        async with builder.connect(transport) as cx:
            agent = v1.RemoteAgent(cx)
            fs = v1.FileSystemCapabilities(read_text_file=True)
            await agent.initialize(
                protocol_version=1, client_capabilities=v1.ClientCapabilities(fs=fs)
            )
            seen["connection id"] = transport.connection_id
            sid = (await agent.new_session(cwd="/tmp", mcp_servers=[])).session_id
            seen["session"] = sid

            async def prompt(text: str) -> str:
                return (await agent.prompt(session_id=sid, prompt=[b.text(text=text)])).stop_reason

            seen["permission"] = await prompt("permission")
            seen["read"] = await prompt("read /any/file")
            async with anyio.create_task_group() as tg:
                stop: list[str] = []

                async def sleeper() -> None:
                    stop.append(await prompt("sleep 30000"))

                tg.start_soon(sleeper)
                await anyio.sleep(0.3)
                await agent.cancel(session_id=sid)
            seen["session/cancel"] = stop[0]
            params = {"sessionId": sid, "prompt": [{"type": "text", "text": "sleep 30000"}]}
            sleeping = cx.send_raw_request("session/prompt", params)
            await anyio.sleep(0.3)
            sleeping.cancel()
            with pytest.raises(RequestError) as caught:
                await sleeping
            seen["$/cancel_request"] = caught.value.code
    return seen


async def load_on_fresh_connection(url: str, sid: str, client: Client) -> None:
    builder = ConnectionBuilder(role="client")
    client.attach(builder)
    async with connect_http(url) as transport, builder.connect(transport) as cx:
        agent = v1.RemoteAgent(cx)
        await agent.initialize(protocol_version=1)
        await agent.load_session(session_id=sid, cwd="/tmp", mcp_servers=[])
        # The answer comes on the connection's stream, the replay on the session's: the
        # answer may overtake it, so the replay is waited for.
        with anyio.fail_after(5):
            while not client.texts:  # noqa: ASYNC110
                await anyio.sleep(0.01)


async def test_our_http_client_against_the_ts_server(node: str) -> None:
    wire, client = Wire(), Client()
    async with ts_http_server(node) as url:
        with anyio.fail_after(60):
            seen = await run_flow(url, wire, client)
            reloaded = Client()
            await load_on_fresh_connection(url, seen["session"], reloaded)
    sid = seen["session"]
    assert seen["connection id"]
    assert (seen["permission"], seen["read"]) == ("end_turn", "end_turn")
    assert seen["session/cancel"] == "cancelled"
    assert seen["$/cancel_request"] == -32800
    assert "permission:selected:allow" in client.texts
    assert FILE_TEXT in client.texts
    assert reloaded.texts == [f"replay:{sid}"]
    check_wire(wire, sid, seen["connection id"])


def check_wire(wire: Wire, sid: str, connection_id: str) -> None:
    """Each rule the TS server enforces (a 400 otherwise), seen on what we sent."""
    posts = wire.posts()
    init_headers, init = posts[0]
    assert init["method"] == "initialize"
    assert "acp-connection-id" not in init_headers and "acp-session-id" not in init_headers
    for headers, body in posts:
        assert headers["content-type"] == "application/json"
        assert isinstance(body, dict) and body["jsonrpc"] == "2.0"
    for headers, body in posts[1:]:
        assert headers["acp-connection-id"] == connection_id
        params = body.get("params") or {}
        method = body.get("method")
        if method == "$/cancel_request":
            assert "acp-session-id" not in headers
        elif method is None:  # our answers: each to a request that named the session
            assert headers["acp-session-id"] == sid, body
        else:
            assert headers.get("acp-session-id") == params.get("sessionId"), body
    methods = [body.get("method", "answer") for _, body in posts]
    assert methods.count("answer") == 2  # the permission and the file read
    assert "$/cancel_request" in methods and "session/cancel" in methods
    gets = [headers for method, headers, _ in wire.sent if method == "GET"]
    assert all(h["accept"] == "text/event-stream" for h in gets)
    assert [h.get("acp-session-id") for h in gets] == [None, sid]
    first_session_get = next(
        i for i, (m, h, _) in enumerate(wire.sent) if m == "GET" and "acp-session-id" in h
    )
    first_session_post = next(
        i for i, (m, h, _) in enumerate(wire.sent) if m == "POST" and "acp-session-id" in h
    )
    assert first_session_get < first_session_post
    assert wire.sent[-1][0] == "DELETE" and wire.answers[-1] == ("DELETE", 202)
    assert all(status in (200, 202) for _, status in wire.answers), wire.answers


# -- the TS router behind the TS server ---------------------------------------------------


async def initialize_raw(transport: HttpTransport, version: object) -> dict[str, Any]:
    params: dict[str, Any] = {"protocolVersion": version, "clientCapabilities": {}}
    if version in (2, 3):
        params["info"] = {"name": "interop", "version": "1.0"}
    await transport.send(
        json.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": params}).encode()
    )
    with anyio.fail_after(10):
        answer: dict[str, Any] = json.loads(await transport.receive())
    return answer


@pytest.mark.parametrize(
    ("version", "expected"),
    [(1, 1), (2, 2), (3, 2), ("1", -32602), (0, -32022)],
)
async def test_the_ts_router_over_http(node: str, version: object, expected: int) -> None:
    async with ts_http_server(node, "--router") as url:
        async with connect_http(url) as transport:
            answer = await initialize_raw(transport, version)
            if expected > 0:
                assert answer["result"]["protocolVersion"] == expected
                new = {"cwd": "/tmp", "mcpServers": []} if expected == 1 else {"cwd": "/tmp"}
                request = {"jsonrpc": "2.0", "id": 2, "method": "session/new", "params": new}
                await transport.send(json.dumps(request).encode())
                with anyio.fail_after(10):
                    created = json.loads(await transport.receive())
                assert isinstance(created["result"]["sessionId"], str)
            else:
                assert answer["error"]["code"] == expected
                # the TS server keeps the connection of a refused initialize
                assert transport.connection_id
