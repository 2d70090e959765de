"""The server's wire, frame by frame, with httpx-ws as a raw client: the checks the TS SDK
2.4.0 server makes (first frame ``initialize``, -32700/-32600 with ``id: null``, close
codes 1002/1008/1011/1001), the ``Acp-Connection-Id`` header, auth and plain HTTP."""

from __future__ import annotations

import json
from collections.abc import AsyncGenerator, Callable, Mapping
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from typing import Any

import anyio
import anyio.lowlevel
import httpx
import pytest
from httpx_ws import AsyncWebSocketSession, WebSocketDisconnect, aconnect_ws

from acp_runtime import ConnectionBuilder, Responder
from acp_runtime.remote import Refusal, WebSocketApp, websocket_app

pytestmark = pytest.mark.anyio

Serving = Callable[..., AbstractAsyncContextManager[int]]
"""``serving(app)`` of the WebSocket server under test (the ``websocket_server`` fixture)."""

INITIALIZE = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": 1}}


def echo_agent() -> ConnectionBuilder:
    builder = ConnectionBuilder(role="untyped")

    async def initialize(method: str, params: Any, responder: Responder[Any]) -> Any:
        if method == "initialize":
            return {"protocolVersion": 1}
        if method == "boom":
            raise ValueError("handler failure")
        return {"echo": params}

    builder.on_raw_request(initialize)
    return builder


@asynccontextmanager
async def raw(
    serving: Serving, app: WebSocketApp, headers: Mapping[str, str] | None = None
) -> AsyncGenerator[tuple[AsyncWebSocketSession, int], None]:
    async with serving(app) as port, httpx.AsyncClient() as client:
        async with aconnect_ws(
            f"http://127.0.0.1:{port}/acp",
            client,
            headers=dict(headers or {}),
            keepalive_ping_interval_seconds=None,
        ) as ws:
            yield ws, port


async def next_json(ws: AsyncWebSocketSession) -> Any:
    with anyio.fail_after(5):
        return json.loads(await ws.receive_text())


async def close_code(ws: AsyncWebSocketSession) -> tuple[int, str]:
    with anyio.fail_after(5), pytest.raises(WebSocketDisconnect) as caught:
        while True:
            await ws.receive()
    return caught.value.code, caught.value.reason


async def test_the_101_carries_an_acp_connection_id_and_no_subprotocol(
    websocket_server: Serving,
) -> None:
    async with raw(websocket_server, websocket_app(echo_agent)) as (ws, _):
        assert ws.response is not None
        assert len(ws.response.headers["acp-connection-id"]) == 36
        assert "sec-websocket-protocol" not in ws.response.headers
        await ws.send_text(json.dumps(INITIALIZE))
        assert await next_json(ws) == {"jsonrpc": "2.0", "id": 1, "result": {"protocolVersion": 1}}


async def test_before_initialize_bad_json_arrays_and_answers_are_answered_or_dropped(
    websocket_server: Serving,
) -> None:
    async with raw(websocket_server, websocket_app(echo_agent)) as (ws, _):
        await ws.send_text("{not json")
        assert await next_json(ws) == {
            "jsonrpc": "2.0",
            "id": None,
            "error": {"code": -32700, "message": "Parse error"},
        }
        await ws.send_text("[1, 2]")
        answer = await next_json(ws)
        assert answer["id"] is None and answer["error"]["code"] == -32600
        assert "batches are not supported" in answer["error"]["message"]
        await ws.send_text("42")
        assert (await next_json(ws))["error"] == {
            "code": -32600,
            "message": "Invalid request",
            "data": 42,
        }
        await ws.send_text('{"jsonrpc":"2.0","id":7,"result":{}}')  # dropped
        await ws.send_bytes(b'{"jsonrpc":"2.0","id":9,"method":"x"}')  # binary: ignored
        await ws.send_text(json.dumps(INITIALIZE))
        assert (await next_json(ws))["id"] == 1  # the socket is still open


@pytest.mark.parametrize(
    ("first", "reason"),
    [
        ({"jsonrpc": "2.0", "id": 1, "method": "session/new", "params": {}}, "First message"),
        ({"jsonrpc": "2.0", "method": "initialize", "params": {}}, "First message"),
        ({"jsonrpc": "2.0", "id": None, "method": "initialize"}, "must include an ID"),
    ],
)
async def test_a_first_message_other_than_an_initialize_request_closes_1002(
    websocket_server: Serving, first: dict[str, Any], reason: str
) -> None:
    async with raw(websocket_server, websocket_app(echo_agent)) as (ws, _):
        await ws.send_text(json.dumps(first))
        code, text = await close_code(ws)
    assert code == 1002
    assert reason in text


async def test_after_initialize_errors_are_answered_and_a_second_initialize_refused(
    websocket_server: Serving,
) -> None:
    async with raw(websocket_server, websocket_app(echo_agent)) as (ws, _):
        await ws.send_text(json.dumps(INITIALIZE))
        await next_json(ws)
        await ws.send_text("{oops")
        answer = await next_json(ws)
        assert answer["id"] is None and answer["error"]["code"] == -32700
        await ws.send_text("[]")
        answer = await next_json(ws)
        assert answer["id"] is None and answer["error"]["code"] == -32600
        await ws.send_text(json.dumps({**INITIALIZE, "id": 2}))
        assert await next_json(ws) == {
            "jsonrpc": "2.0",
            "id": 2,
            "error": {"code": -32600, "message": "Initialize not allowed on existing connection"},
        }
        await ws.send_text('{"jsonrpc":"2.0","id":3,"method":"echo","params":{"initialize":1}}')
        assert (await next_json(ws))["result"] == {"echo": {"initialize": 1}}


def bursting_agent(count: int) -> ConnectionBuilder:
    """``burst``: queues ``count`` notifications at once, then answers."""
    builder = ConnectionBuilder(role="untyped")

    async def handle(method: str, params: Any, responder: Responder[Any]) -> Any:
        if method == "initialize":
            return {"protocolVersion": 1}
        for n in range(count):
            responder.connection.send_raw_notification("agent/chunk", {"n": n, "text": "é"})
        return {"sent": count}

    builder.on_raw_request(handle)
    return builder


async def test_a_burst_goes_out_a_frame_per_message_in_order_with_the_answer_last(
    websocket_server: Serving,
) -> None:
    async with raw(websocket_server, websocket_app(lambda: bursting_agent(300))) as (ws, _):
        await ws.send_text(json.dumps(INITIALIZE))
        await next_json(ws)
        await ws.send_text('{"jsonrpc":"2.0","id":2,"method":"burst"}')
        frames = [await next_json(ws) for _ in range(301)]
    assert [frame["params"]["n"] for frame in frames[:300]] == list(range(300))
    assert {frame["params"]["text"] for frame in frames[:300]} == {"é"}
    assert frames[300] == {"jsonrpc": "2.0", "id": 2, "result": {"sent": 300}}


async def test_a_frame_over_the_limit_closes_1008(websocket_server: Serving) -> None:
    async with raw(websocket_server, websocket_app(echo_agent, max_message_bytes=1000)) as (ws, _):
        await ws.send_text(json.dumps(INITIALIZE))
        await next_json(ws)
        await ws.send_text(json.dumps({"jsonrpc": "2.0", "method": "x", "params": "a" * 1000}))
        code, text = await close_code(ws)
    assert code == 1008
    assert "1000 bytes" in text


async def test_a_failing_connection_closes_1011(websocket_server: Serving) -> None:
    class Failing:
        async def serve(self, transport: Any) -> None:
            await transport.receive()
            raise RuntimeError("the agent broke")

    async with raw(websocket_server, websocket_app(Failing)) as (ws, _):
        await ws.send_text(json.dumps(INITIALIZE))
        code, text = await close_code(ws)
    assert (code, text) == (1011, "Internal error")


async def test_closing_the_app_closes_its_sockets_1001(websocket_server: Serving) -> None:
    app = websocket_app(echo_agent)
    async with raw(websocket_server, app) as (ws, _):
        await ws.send_text(json.dumps(INITIALIZE))
        await next_json(ws)
        await app.aclose()
        code, text = await close_code(ws)
    assert (code, text) == (1001, "Server shutting down")


UPGRADE = {
    "Connection": "Upgrade",
    "Upgrade": "websocket",
    "Sec-WebSocket-Key": "dGhlIHNhbXBsZSBub25jZQ==",
    "Sec-WebSocket-Version": "13",
}


async def upgrade_answer(
    serving: Serving,
    app: WebSocketApp,
    path: str = "/acp",
    headers: Mapping[str, str] | None = None,
) -> httpx.Response:
    """The server's answer to a bare upgrade request (read whole: a refusal has a body)."""
    async with serving(app) as port, httpx.AsyncClient() as client:
        return await client.get(
            f"http://127.0.0.1:{port}{path}", headers={**UPGRADE, **(headers or {})}
        )


async def test_the_authenticate_hook_refuses_with_403_without_echoing_the_token(
    websocket_server: Serving,
) -> None:
    seen: list[str] = []

    def authenticate(headers: Mapping[str, str]) -> bool:
        seen.append(headers.get("authorization", ""))
        return headers.get("authorization") == "Bearer right"

    app = websocket_app(echo_agent, authenticate=authenticate)
    refused = await upgrade_answer(
        websocket_server, app, headers={"Authorization": "Bearer wrong-secret"}
    )
    assert refused.status_code == 403
    assert "wrong-secret" not in refused.text
    assert "wrong-secret" not in str(dict(refused.headers))
    async with raw(websocket_server, app, {"Authorization": "Bearer right"}) as (ws, _):
        await ws.send_text(json.dumps(INITIALIZE))
        assert (await next_json(ws))["id"] == 1
    assert seen == ["Bearer wrong-secret", "Bearer right"]


async def test_an_async_authenticate_hook_is_awaited(websocket_server: Serving) -> None:
    async def authenticate(headers: Mapping[str, str]) -> bool:
        await anyio.lowlevel.checkpoint()
        return False

    refused = await upgrade_answer(
        websocket_server, websocket_app(echo_agent, authenticate=authenticate)
    )
    assert refused.status_code == 403


async def test_a_hook_that_raises_refuses_with_403_and_logs_no_header(
    websocket_server: Serving, caplog: pytest.LogCaptureFixture
) -> None:
    def authenticate(headers: Mapping[str, str]) -> bool:
        raise KeyError(headers["authorization"])

    app = websocket_app(echo_agent, authenticate=authenticate)
    refused = await upgrade_answer(
        websocket_server, app, headers={"Authorization": "Bearer leaked-secret"}
    )
    assert refused.status_code == 403
    assert "leaked-secret" not in refused.text
    assert "KeyError" in caplog.text
    assert "leaked-secret" not in caplog.text


async def test_plain_http_gets_426_on_the_path_and_404_elsewhere(websocket_server: Serving) -> None:
    async with websocket_server(websocket_app(echo_agent)) as port, httpx.AsyncClient() as client:
        on_path = await client.post(f"http://127.0.0.1:{port}/acp", json=INITIALIZE)
        elsewhere = await client.get(f"http://127.0.0.1:{port}/other")
    assert on_path.status_code == 426
    assert "WebSocket" in on_path.text
    assert elsewhere.status_code == 404


async def test_a_websocket_on_another_path_is_refused_404(websocket_server: Serving) -> None:
    refused = await upgrade_answer(websocket_server, websocket_app(echo_agent), path="/elsewhere")
    assert refused.status_code == 404


async def test_a_refusal_from_the_hook_sets_the_upgrade_status_and_challenge(
    websocket_server: Serving,
) -> None:
    def authenticate(headers: Mapping[str, str]) -> bool | Refusal:
        return Refusal(401, challenge='Bearer realm="acp"')

    refused = await upgrade_answer(
        websocket_server, websocket_app(echo_agent, authenticate=authenticate)
    )
    assert refused.status_code == 401
    assert refused.headers["www-authenticate"] == 'Bearer realm="acp"'
    assert refused.text == "Unauthorized\n"


async def test_the_path_is_matched_percent_decoded_as_asgi_servers_give_it(
    websocket_server: Serving,
) -> None:
    app = websocket_app(echo_agent, path="/agents/ä")
    accepted = await upgrade_answer(websocket_server, app, path="/agents/%C3%A4")
    refused = await upgrade_answer(websocket_server, app, path="/agents/%C3%A5")
    assert (accepted.status_code, refused.status_code) == (101, 404)
