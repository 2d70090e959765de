"""The stream end an MCP SDK object talks to: answers, cancellation, closing."""

from __future__ import annotations

from typing import Any

import anyio
import pytest
from mcp.shared.message import ServerMessageMetadata, SessionMessage
from mcp_types import JSONRPCNotification, JSONRPCRequest, JSONRPCResponse

from acp_runtime.mcp._relay import McpConnectionClosed, StreamPeer
from acp_runtime.mcp._wire import McpError

pytestmark = pytest.mark.anyio


async def test_served_requests_answer_errors_and_cancellation() -> None:
    (toward_send, toward_receive), (back_send, back_receive) = StreamPeer.streams()
    started, cancelled = anyio.Event(), anyio.Event()

    async def on_request(method: str, params: Any) -> Any:
        if method == "list":
            return [1]  # not an object: -32603
        if method == "fail":
            raise McpError(-32000, "no")
        if method == "crash":
            raise RuntimeError("internal")
        started.set()
        try:
            await anyio.sleep_forever()
        finally:
            cancelled.set()

    peer = StreamPeer(
        toward_send, back_receive, on_request=on_request, on_notification=lambda m, p: None
    )

    async def send(message: Any) -> None:
        await back_send.send(SessionMessage(message))

    async def answer() -> dict[str, Any]:
        item = await toward_receive.receive()
        assert isinstance(item, SessionMessage)
        return item.message.model_dump(by_alias=True, exclude_none=True)

    with anyio.fail_after(5):
        async with anyio.create_task_group() as tg:
            tg.start_soon(peer.run)
            await send(JSONRPCRequest(jsonrpc="2.0", id=1, method="list"))
            assert (await answer())["error"]["code"] == -32603
            await send(JSONRPCRequest(jsonrpc="2.0", id=2, method="fail"))
            assert (await answer())["error"] == {"code": -32000, "message": "no"}
            await send(JSONRPCRequest(jsonrpc="2.0", id=3, method="crash"))
            assert (await answer())["error"] == {"code": -32603, "message": "Internal error"}
            await send(JSONRPCRequest(jsonrpc="2.0", id=4, method="wait"))
            await started.wait()
            await send(
                JSONRPCNotification(
                    jsonrpc="2.0", method="notifications/cancelled", params={"requestId": 4}
                )
            )
            await cancelled.wait()
            await send(JSONRPCRequest(jsonrpc="2.0", id=5, method="list"))
            assert (await answer())["id"] == 5  # nothing was written for the cancelled one
            back_send.close()
    with pytest.raises(McpConnectionClosed):
        await peer.request("x", None)


async def test_requests_route_related_notifications_and_fail_when_the_stream_closes() -> None:
    (toward_send, toward_receive), (back_send, back_receive) = StreamPeer.streams()
    loose: list[str] = []
    peer = StreamPeer(
        toward_send, back_receive, on_request=None, on_notification=lambda m, p: loose.append(m)
    )
    related: list[Any] = []
    outcome: list[Any] = []

    async def call() -> None:
        try:
            outcome.append(
                await peer.request("tools/call", {}, on_notification=lambda m, p: related.append(p))
            )
        except McpConnectionClosed:
            outcome.append("closed")

    with anyio.fail_after(5):
        async with anyio.create_task_group() as tg:
            tg.start_soon(peer.run)
            tg.start_soon(call)
            sent = await toward_receive.receive()
            assert isinstance(sent, SessionMessage) and isinstance(sent.message, JSONRPCRequest)
            request_id = sent.message.id
            note = JSONRPCNotification(
                jsonrpc="2.0", method="notifications/progress", params={"p": 1}
            )
            await back_send.send(
                SessionMessage(note, ServerMessageMetadata(related_request_id=request_id))
            )
            await back_send.send(SessionMessage(note))
            # A request from the SDK object with no handler here gets -32601.
            await back_send.send(
                SessionMessage(JSONRPCRequest(jsonrpc="2.0", id="s1", method="ping"))
            )
            reply = await toward_receive.receive()
            assert isinstance(reply, SessionMessage)
            assert reply.message.model_dump(exclude_none=True)["error"]["code"] == -32601
            await back_send.send(
                SessionMessage(JSONRPCResponse(jsonrpc="2.0", id=999, result={}))
            )  # unknown: dropped
            back_send.close()
    assert related == [{"p": 1}] and loose == ["notifications/progress"]
    assert outcome == ["closed"]
