"""ACP over WebSocket against the TypeScript SDK 2.4.0, both directions, both backends.

Our client (``connect_websocket``) against the TS ``AcpServer`` with its Node upgrade
handler (peers/ws_server.mjs, and peers/http_server.mjs, whose agent also answers
``session/load``), and the TS ``createWebSocketStream`` client (peers/ws_client.mjs)
against our ASGI server under hypercorn (``EchoAgent``, and ``LoadingEchoAgent`` with
``session/load``). Each runs initialize, session/new, a prompt with a permission round
trip, a prompt reading a file, a prompt cancelled with ``$/cancel_request``, a prompt
ended by ``session/cancel``, and close; where the agent loads sessions, a fresh socket
then sends initialize and ``session/load`` of the same session, and gets its replay.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Callable
from contextlib import AbstractAsyncContextManager
from typing import Any

import anyio
import httpx
import pytest
from httpx_ws import aconnect_ws
from remote import direct_server, hypercorn_server
from remote.http_agent import LoadingEchoAgent  # tests/ is on sys.path (rootdir)

from acp_generated import v1
from acp_generated.v1 import builders as b
from acp_runtime import Connection, ConnectionBuilder, RequestError, Responder
from acp_runtime.remote import connect_websocket, websocket_app

from .node_peers import PEERS_DIR, REPO_ROOT

pytestmark = pytest.mark.anyio

Serving = Callable[..., AbstractAsyncContextManager[int]]


@pytest.fixture(params=["hypercorn", "direct"])
def our_server(request: pytest.FixtureRequest) -> Serving:
    """``serving(app)`` for our server: mounted in hypercorn, or on a socket of its own
    (``WebSocketApp.serve``)."""
    module = direct_server if request.param == "direct" else hypercorn_server
    return module.serving


FILE_TEXT = "line one\nline two\n"


class Client(v1.ClientHandler):
    """Collects the agent's text chunks, allows every permission, serves one file."""

    def __init__(self) -> None:
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
    ) -> v1.RequestPermissionResponse:
        outcome = v1.SelectedRequestPermissionOutcome(
            outcome="selected", option_id=params.options[0].option_id
        )
        return v1.RequestPermissionResponse(outcome=outcome)

    async def read_text_file(
        self, params: v1.ReadTextFileRequest, responder: Responder[v1.ReadTextFileResponse]
    ) -> v1.ReadTextFileResponse:
        return v1.ReadTextFileResponse(content=FILE_TEXT)


async def run_flow(url: str, client: Client) -> dict[str, Any]:
    """The whole flow on one socket; what it saw."""
    seen: dict[str, Any] = {}
    builder = ConnectionBuilder(role="client")
    client.attach(builder)
    async with connect_websocket(url) as transport:
        assert transport.connection_id
        async with builder.connect(transport) as cx:
            agent = v1.RemoteAgent(cx)
            fs = v1.FileSystemCapabilities(read_text_file=True)
            await agent.initialize(
                protocol_version=1, client_capabilities=v1.ClientCapabilities(fs=fs)
            )
            session = await agent.new_session(cwd="/tmp", mcp_servers=[])
            sid = seen["session"] = session.session_id

            async def prompt(text: str) -> str:
                answer = await agent.prompt(session_id=sid, prompt=[b.text(text=text)])
                return answer.stop_reason

            seen["permission"] = await prompt("permission")
            seen["read"] = await prompt("read /any/file")
            params = {"sessionId": sid, "prompt": [{"type": "text", "text": "sleep 30000"}]}
            sleeping = cx.send_raw_request("session/prompt", params)
            await anyio.sleep(0.2)
            sleeping.cancel()
            with pytest.raises(RequestError) as caught:
                await sleeping
            seen["$/cancel_request"] = caught.value.code
            turn = cx.send_raw_request("session/prompt", params)
            await anyio.sleep(0.2)
            await agent.cancel(session_id=sid)  # session/cancel: the turn ends
            seen["session/cancel"] = (await turn)["stopReason"]
    return seen


async def load_on_fresh_socket(url: str, sid: str, client: Client) -> v1.LoadSessionResponse:
    """A reconnect: a new socket, ``initialize``, then ``session/load`` of ``sid``."""
    builder = ConnectionBuilder(role="client")
    client.attach(builder)
    async with connect_websocket(url) as transport, builder.connect(transport) as cx:
        agent = v1.RemoteAgent(cx)
        await agent.initialize(protocol_version=1)
        loaded = await agent.load_session(session_id=sid, cwd="/tmp", mcp_servers=[])
        # The replay precedes the answer on the socket, but its handler may not have run
        # when the answer is handed back: the replay is waited for.
        with anyio.fail_after(5):
            while not client.texts:  # noqa: ASYNC110
                await anyio.sleep(0.01)
    return loaded


@pytest.mark.parametrize(
    ("peer", "reconnects"),
    [("ws_server.mjs", False), ("http_server.mjs", True)],
)
async def test_our_client_against_the_ts_websocket_server(
    node: str, peer: str, reconnects: bool
) -> None:
    """http_server.mjs serves the same TS echo agent plus ``session/load`` (on the same
    upgrade handler), so the flow ends with a reconnect loading the session."""
    async with await anyio.open_process(
        [node, str(PEERS_DIR / peer)], stderr=subprocess.DEVNULL
    ) as process:
        assert process.stdout is not None and process.stdin is not None
        with anyio.fail_after(20):
            port = int((await process.stdout.receive()).decode().split()[0])
        client, reloaded = Client(), Client()
        url = f"ws://127.0.0.1:{port}/acp"
        with anyio.fail_after(30):
            seen = await run_flow(url, client)
            if reconnects:
                loaded = await load_on_fresh_socket(url, seen["session"], reloaded)
        await process.stdin.aclose()
        with anyio.fail_after(10):
            await process.wait()
    assert (seen["permission"], seen["read"]) == ("end_turn", "end_turn")
    assert seen["$/cancel_request"] == -32800
    assert seen["session/cancel"] == "cancelled"
    assert "permission:selected:allow" in client.texts
    assert FILE_TEXT in client.texts
    assert process.returncode == 0
    if reconnects:
        assert loaded == v1.LoadSessionResponse()
        assert reloaded.texts == [f"replay:{seen['session']}"]


async def test_the_ts_server_shutting_down_ends_our_connection(node: str) -> None:
    """``AcpServer.close()`` sends a close frame without a code (seen as 1005), not 1001."""
    async with await anyio.open_process(
        [node, str(PEERS_DIR / "ws_server.mjs")], stderr=subprocess.DEVNULL
    ) as process:
        assert process.stdout is not None and process.stdin is not None
        with anyio.fail_after(20):
            port = int((await process.stdout.receive()).decode().split()[0])
        with anyio.fail_after(20):
            async with connect_websocket(f"ws://127.0.0.1:{port}/acp") as transport:
                async with ConnectionBuilder(role="client").connect(transport) as cx:
                    await v1.RemoteAgent(cx).initialize(protocol_version=1)
                    await process.stdin.aclose()  # the peer calls AcpServer.close()
                    await cx.wait_incoming_closed()
            await process.wait()
    assert (transport.close_code, transport.close_reason) == (1005, "")


@pytest.mark.parametrize("loads", [False, True], ids=["echo", "loading-echo"])
async def test_the_ts_websocket_client_against_our_server(
    node: str, loads: bool, our_server: Serving
) -> None:
    """With ``LoadingEchoAgent`` (``loadSession``) the TS client reconnects on a fresh
    socket and loads its session; the plain echo agent cannot, so it only initializes."""
    sys.path.insert(0, str(REPO_ROOT / "examples"))
    try:
        from echo_agent import EchoAgent
    finally:
        sys.path.remove(str(REPO_ROOT / "examples"))
    async with our_server(websocket_app(LoadingEchoAgent if loads else EchoAgent)) as port:
        with anyio.fail_after(60):
            done = await anyio.run_process(
                [node, str(PEERS_DIR / "ws_client.mjs"), f"ws://127.0.0.1:{port}/acp", "/x"],
                check=False,
            )
    assert done.returncode == 0, done.stderr.decode()
    report = json.loads(done.stdout.decode().strip().splitlines()[-1])
    assert report["ok"] is True
    assert report["stopReasons"] == ["end_turn", "end_turn"]
    assert "permission:selected:allow" in report["seen"]
    assert FILE_TEXT in report["seen"]
    assert report["cancelCode"] == -32800
    assert report["cancelledTurn"] == "cancelled"
    if loads:
        assert report["loaded"] == {}
        assert report["replayed"] is True
        assert sum(text.startswith("replay ") for text in report["seen"]) == 1
    else:
        assert report["loaded"] == "unsupported"
        assert report["replayed"] is False


# -- the same raw frames to both servers -------------------------------------------------

INITIALIZE = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": 1}}


async def observe(url: str) -> dict[str, object]:
    """What a server answers to bad frames, before and after ``initialize``, and how it
    closes on a bad first message: exact frames where the wire is fixed."""
    import httpx
    from httpx_ws import WebSocketDisconnect, aconnect_ws

    seen: dict[str, object] = {}
    async with httpx.AsyncClient() as http:

        async def closing(first: dict[str, object]) -> tuple[int, str]:
            async with aconnect_ws(url, http, keepalive_ping_interval_seconds=None) as ws:
                await ws.send_text(json.dumps(first))
                with anyio.fail_after(5), pytest.raises(WebSocketDisconnect) as caught:
                    while True:
                        await ws.receive()
            return caught.value.code, caught.value.reason

        async with aconnect_ws(url, http, keepalive_ping_interval_seconds=None) as ws:
            assert ws.response is not None
            seen["connection id header"] = "acp-connection-id" in ws.response.headers
            seen["subprotocol"] = ws.subprotocol
            before: list[str] = []
            for frame in (
                "{not json",
                "NaN",
                "[1,2]",
                "42",
                "null",
                '{"id":1,"method":"initialize"}',
                '{"jsonrpc":"2.0","id":true,"method":"initialize"}',
                '{"jsonrpc":"2.0","id":1,"method":7}',
            ):
                await ws.send_text(frame)
                with anyio.fail_after(5):
                    before.append(await ws.receive_text())
            seen["before initialize"] = before
            await ws.send_text('{"jsonrpc":"2.0","id":7,"result":{}}')  # dropped by both
            await ws.send_bytes(b"binary")  # ignored by both
            await ws.send_text(json.dumps(INITIALIZE))
            with anyio.fail_after(5):
                seen["initialize answer id"] = json.loads(await ws.receive_text())["id"]
            await ws.send_text(json.dumps({**INITIALIZE, "id": 2}))
            with anyio.fail_after(5):
                seen["second initialize"] = await ws.receive_text()
            after: list[tuple[object, object]] = []
            for frame in ("{oops", "[]", "[1]"):
                await ws.send_text(frame)
                with anyio.fail_after(5):
                    answer = json.loads(await ws.receive_text())
                after.append((answer["id"], answer["error"]["code"]))
            seen["after initialize (id, code)"] = after
        request = {"jsonrpc": "2.0", "id": 1, "method": "session/new", "params": {}}
        seen["request first"] = await closing(request)
        notification = {"jsonrpc": "2.0", "method": "initialize", "params": {}}
        seen["initialize notification"] = await closing(notification)
        seen["initialize with id null"] = await closing({**INITIALIZE, "id": None})
    return seen


async def test_our_server_answers_raw_frames_as_the_ts_server_does(
    node: str, our_server: Serving
) -> None:
    async with await anyio.open_process(
        [node, str(PEERS_DIR / "ws_server.mjs")], stderr=subprocess.DEVNULL
    ) as process:
        assert process.stdout is not None and process.stdin is not None
        with anyio.fail_after(20):
            port = int((await process.stdout.receive()).decode().split()[0])
        theirs = await observe(f"http://127.0.0.1:{port}/acp")
        await process.stdin.aclose()
        await process.wait()
    sys.path.insert(0, str(REPO_ROOT / "examples"))
    try:
        from echo_agent import EchoAgent
    finally:
        sys.path.remove(str(REPO_ROOT / "examples"))
    async with our_server(websocket_app(EchoAgent)) as port:
        ours = await observe(f"http://127.0.0.1:{port}/acp")
    assert ours == theirs
    assert theirs["request first"] == (1002, "First message must be initialize")


# -- the version router over WebSocket: ours and the TypeScript SDK's answer alike -------------

ROUTED_VERSIONS: list[object] = [1, 2, 3, "1", 0]


async def initialize_over_websocket(port: int, version: object) -> Any:
    """The answer to one ``initialize`` with ``version``, each on a fresh socket."""
    request = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {"protocolVersion": version, "info": {"name": "t", "version": "1"}},
    }
    async with httpx.AsyncClient() as http:
        url = f"http://127.0.0.1:{port}/acp"
        async with aconnect_ws(url, http, keepalive_ping_interval_seconds=None) as ws:
            await ws.send_text(json.dumps(request))
            with anyio.fail_after(10):
                return json.loads(await ws.receive_text())


def verdict(answer: Any) -> tuple[object, ...]:
    """What a router decided: the version it answered with, or its error (code, data)."""
    if "result" in answer:
        return ("version", answer["result"]["protocolVersion"])
    return ("error", answer["error"]["code"], answer["error"].get("data"))


async def test_both_version_routers_over_websocket_pick_and_refuse_alike(
    node: str, our_server: Serving
) -> None:
    sys.path.insert(0, str(REPO_ROOT / "examples"))
    try:
        from router_agent import make_router
    finally:
        sys.path.remove(str(REPO_ROOT / "examples"))
    async with our_server(websocket_app(lambda: make_router({1, 2}, 0.0)[0])) as port:
        ours = [verdict(await initialize_over_websocket(port, v)) for v in ROUTED_VERSIONS]
    async with await anyio.open_process(
        [node, str(PEERS_DIR / "ws_router_server.mjs")], stderr=subprocess.DEVNULL
    ) as process:
        assert process.stdout is not None and process.stdin is not None
        with anyio.fail_after(20):
            port = int((await process.stdout.receive()).decode().split()[0])
        theirs = [verdict(await initialize_over_websocket(port, v)) for v in ROUTED_VERSIONS]
        await process.stdin.aclose()
        with anyio.fail_after(10):
            await process.wait()
    assert ours[:3] == [("version", 1), ("version", 2), ("version", 2)]
    assert ours[4] == ("error", -32022, {"requested": 0, "supported": [1, 2]})
    assert ours[3][:2] == ("error", -32602)
    assert ours == theirs
