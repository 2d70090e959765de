"""The provider against exact wire messages: both bindings, every binding error, bad
input, cancellation, and failures that stay inside their own answer."""

from __future__ import annotations

from collections.abc import AsyncGenerator
from contextlib import asynccontextmanager
from typing import Any

import anyio
import pytest

from acp_runtime import Connection, ConnectionBuilder, JsonValue, RequestError
from acp_runtime.mcp import McpError, McpProvider, McpRequest
from acp_runtime.testing import (
    WirePeer,
    cancel,
    error,
    notification,
    request,
    result,
    wire_connection,
)

from .servers import ToolProbe, tools_server

pytestmark = pytest.mark.anyio

MISSING = "Invalid params: missing io.modelcontextprotocol/{} in params._meta"
META = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientCapabilities": {},
}


def message(
    request_id: str, method: str, params: dict[str, Any] | None = None, **extra: Any
) -> dict[str, Any]:
    inner = {"_meta": META} if params is None else {**params, "_meta": META}
    return {"serverId": "srv", "requestId": request_id, "method": method, "params": inner, **extra}


class Handler:
    """A plain handler: records calls, and parks ``wait`` until cancelled."""

    def __init__(self) -> None:
        self.seen: list[McpRequest] = []
        self.started = anyio.Event()
        self.cancelled = anyio.Event()

    async def __call__(self, call: McpRequest) -> JsonValue:
        self.seen.append(call)
        if call.method == "tools/list":
            return {"tools": [{"name": "echo", "inputSchema": {"type": "object"}}]}
        if call.method == "progress":
            call.notify("notifications/progress", {"progressToken": 1, "progress": 1})
            return {"done": True}
        if call.method == "null":
            return None
        if call.method == "wait":
            self.started.set()
            try:
                await anyio.sleep_forever()
            finally:
                self.cancelled.set()
        if call.method == "mcp-error":
            raise McpError(-32602, "Unknown tool", {"name": "x"})
        if call.method == "acp-error":
            raise RequestError(-32000, "auth needed")
        if call.method == "crash":
            raise ValueError("secret internals")
        raise McpError(-32601, f"Method not found: {call.method}")


@asynccontextmanager
async def provider_wire(
    handler: Any = None, **options: Any
) -> AsyncGenerator[tuple[Connection, WirePeer, Handler], None]:
    provider = McpProvider(**options)
    plain = Handler()
    async with wire_connection(provider.attach(ConnectionBuilder(role="client"))) as (cx, peer):
        provider.register(cx, plain if handler is None else handler, name="tools", server_id="srv")
        yield cx, peer, plain


async def test_stateless_request_is_answered_with_a_result_carrier() -> None:
    async with provider_wire() as (_, peer, handler):
        await peer.send(request(1, "mcp/message", message("r1", "tools/list")))
        assert await peer.receive() == result(
            1, {"result": {"tools": [{"name": "echo", "inputSchema": {"type": "object"}}]}}
        )
        await peer.send(request(2, "mcp/message", message("r2", "null")))
        assert await peer.receive() == result(2, {"result": None})
    call = handler.seen[0]
    assert (call.server_id, call.request_id, call.protocol_version) == ("srv", "r1", "2026-07-28")
    assert call.client_capabilities == {}


async def test_notifications_of_a_request_come_before_its_answer_and_carry_its_ids() -> None:
    async with provider_wire() as (_, peer, handler):
        await peer.send(request(1, "mcp/message", message("r1", "progress")))
        assert await peer.receive() == notification(
            "mcp/message",
            {
                "serverId": "srv",
                "requestId": "r1",
                "method": "notifications/progress",
                "params": {"progressToken": 1, "progress": 1},
            },
        )
        assert await peer.receive() == result(1, {"result": {"done": True}})
        handler.seen[0].notify("notifications/progress", {"late": True})  # after the answer
        await peer.receive_nothing_until_barrier()


async def test_inner_errors_are_carried_and_binding_errors_are_outer() -> None:
    async with provider_wire() as (_, peer, _handler):
        await peer.send(request(1, "mcp/message", message("r1", "mcp-error")))
        assert await peer.receive() == result(
            1, {"error": {"code": -32602, "message": "Unknown tool", "data": {"name": "x"}}}
        )
        await peer.send(request(2, "mcp/message", {**message("r2", "x"), "serverId": "nope"}))
        assert await peer.receive() == error(
            2, -33001, "MCP server registration unavailable", {"serverId": "nope"}
        )


async def test_a_handler_failure_is_33002_without_internals_and_the_connection_goes_on() -> None:
    async with provider_wire() as (_, peer, _handler):
        await peer.send(request(1, "mcp/message", message("r1", "crash")))
        answer = await peer.receive()
        assert answer == error(1, -33002, "MCP server handler failed")
        assert "secret" not in str(answer)
        await peer.send(request(2, "mcp/message", message("r2", "acp-error")))
        assert await peer.receive() == error(
            2, -33002, "MCP server handler failed", {"details": "auth needed", "code": -32000}
        )
        await peer.send(request(3, "mcp/message", message("r3", "null")))
        assert await peer.receive() == result(3, {"result": None})


@pytest.mark.parametrize(
    ("meta", "expected"),
    [
        (
            None,
            {
                "code": -32602,
                "message": MISSING.format("protocolVersion"),
            },
        ),
        (
            {"io.modelcontextprotocol/protocolVersion": "2025-06-18"},
            {
                "code": -32022,
                "message": "Unsupported protocol version",
                "data": {"supported": ["2026-07-28"], "requested": "2025-06-18"},
            },
        ),
        (
            {
                "io.modelcontextprotocol/protocolVersion": "2026-07-28",
                "io.modelcontextprotocol/clientCapabilities": [],
            },
            {
                "code": -32602,
                "message": MISSING.format("clientCapabilities"),
            },
        ),
    ],
)
async def test_inner_metadata_is_checked_before_the_handler_runs(
    meta: dict[str, Any] | None, expected: dict[str, Any]
) -> None:
    params: dict[str, Any] = {} if meta is None else {"_meta": meta}
    envelope = {"serverId": "srv", "requestId": "r1", "method": "tools/list", "params": params}
    async with provider_wire() as (_, peer, handler):
        await peer.send(request(1, "mcp/message", envelope))
        assert await peer.receive() == result(1, {"error": expected})
    assert handler.seen == []


@pytest.mark.parametrize(
    ("params", "reason"),
    [
        ([1, 2], "params must be an object"),
        ({"serverId": "srv", "requestId": "r", "method": 5}, "method must be a string"),
        ({"serverId": "srv", "method": "x"}, "requestId must be a string"),
        ({"serverId": 1, "requestId": "r", "method": "x"}, "serverId must be a string"),
        (
            {"serverId": "srv", "requestId": "r", "method": "x", "params": [1]},
            "params must be an object",
        ),
        (
            {"serverId": "srv", "requestId": "r", "method": "x", "_meta": "m"},
            "_meta must be an object",
        ),
        ({"method": "x"}, "expected serverId and requestId, or connectionId"),
        (
            {"connectionId": "c", "serverId": "s", "requestId": "r", "method": "x"},
            "connectionId cannot be combined with serverId/requestId",
        ),
    ],
)
async def test_malformed_envelopes_get_32602_and_the_connection_survives(
    params: JsonValue, reason: str
) -> None:
    async with provider_wire() as (_, peer, _handler):
        await peer.send(request(1, "mcp/message", params))
        assert await peer.receive() == error(1, -32602, "Invalid params", {"reason": reason})
        await peer.send(request(2, "mcp/message", message("r2", "null")))
        assert await peer.receive() == result(2, {"result": None})


async def test_duplicate_active_request_id_and_the_active_limit() -> None:
    async with provider_wire(max_active_requests=1) as (_, peer, handler):
        await peer.send(request(1, "mcp/message", message("r1", "wait")))
        await handler.started.wait()
        await peer.send(request(2, "mcp/message", message("r1", "null")))
        assert await peer.receive() == error(
            2, -32602, "duplicate active MCP request ID", {"serverId": "srv", "requestId": "r1"}
        )
        await peer.send(request(3, "mcp/message", message("r3", "null")))
        assert await peer.receive() == error(
            3, -33000, "MCP-over-ACP active request limit exceeded", {"serverId": "srv"}
        )
        await peer.send(cancel(1))
        assert await peer.receive() == error(1, -32800, "Request cancelled")
        await peer.send(request(4, "mcp/message", message("r1", "null")))  # the id is free again
        assert await peer.receive() == result(4, {"result": None})


async def test_cancel_request_cancels_the_handler_and_answers_32800() -> None:
    async with provider_wire() as (_, peer, handler):
        await peer.send(request(1, "mcp/message", message("r1", "wait")))
        await handler.started.wait()
        await peer.send(cancel(1))
        assert await peer.receive() == error(1, -32800, "Request cancelled")
        await handler.cancelled.wait()


async def test_cancel_request_cancels_the_mcp_sdk_tool() -> None:
    """ACP $/cancel_request -> MCP notifications/cancelled inside the editor."""
    probe = ToolProbe()
    async with provider_wire(tools_server(probe)) as (_, peer, _handler):
        call = message("r1", "tools/call", {"name": "slow", "arguments": {}})
        await peer.send(request(1, "mcp/message", call))
        with anyio.fail_after(5):
            await probe.started.wait()
        await peer.send(cancel(1))
        assert await peer.receive() == error(1, -32800, "Request cancelled")
        with anyio.fail_after(5):
            await probe.cancelled.wait()


async def test_mcp_sdk_server_refuses_initialize_on_the_stateless_binding() -> None:
    async with provider_wire(tools_server(ToolProbe())) as (_, peer, _handler):
        await peer.send(
            request(
                1, "mcp/message", message("r1", "initialize", {"protocolVersion": "2025-06-18"})
            )
        )
        answer = await peer.receive()
        assert answer["result"]["error"]["code"] == -32022
        await peer.send(request(2, "mcp/message", message("r2", "tools/list")))
        tools = (await peer.receive())["result"]["result"]["tools"]
        assert [tool["name"] for tool in tools] == ["echo", "slow", "boom"]


async def test_disposing_cancels_active_requests_and_refuses_later_ones() -> None:
    provider = McpProvider()
    handler = Handler()
    async with wire_connection(provider.attach(ConnectionBuilder(role="client"))) as (cx, peer):
        registration = provider.register(cx, handler, name="tools", server_id="srv")
        with pytest.raises(ValueError, match="already registered"):
            provider.register(cx, handler, name="again", server_id="srv")
        await peer.send(request(1, "mcp/message", message("r1", "wait")))
        await handler.started.wait()
        registration.dispose()
        assert await peer.receive() == error(1, -32800, "Request cancelled")
        await peer.send(request(2, "mcp/message", message("r2", "null")))
        assert (await peer.receive())["error"]["code"] == -33001
        with pytest.raises(ValueError, match="already registered"):  # ids are never reused
            provider.register(cx, handler, name="tools", server_id="srv")


async def test_registrations_belong_to_their_connection() -> None:
    provider = McpProvider()
    builder = provider.attach(ConnectionBuilder(role="client"))
    async with wire_connection(builder) as (first, _), wire_connection(builder) as (_, peer):
        provider.register(first, Handler(), name="tools", server_id="srv")
        await peer.send(request(1, "mcp/message", message("r1", "null")))
        assert (await peer.receive())["error"]["code"] == -33001


async def test_the_declaration_is_a_session_new_entry_of_the_generated_models() -> None:
    from acp_generated.v1.unstable import AcpMcpServer as V1Acp
    from acp_generated.v1.unstable import NewSessionRequest as V1New
    from acp_generated.v2.unstable import AcpMcpServer as V2Acp
    from acp_generated.v2.unstable import NewSessionRequest as V2New

    provider = McpProvider()
    async with wire_connection(provider.attach(ConnectionBuilder(role="client"))) as (cx, _):
        declaration = provider.register(cx, Handler(), name="tools").declaration
    assert declaration["type"] == "acp" and str(declaration["serverId"]).startswith("tools:")
    for new, acp in ((V1New, V1Acp), (V2New, V2Acp)):
        parsed = new.model_validate({"cwd": "/", "mcpServers": [declaration]})
        [server] = parsed.mcp_servers or []
        assert isinstance(server, acp)
        assert server.model_dump(mode="json", by_alias=True, exclude_unset=True) == declaration


# -- connect binding ----------------------------------------------------------------------


async def connect(peer: WirePeer, request_id: int = 1, server_id: str = "srv") -> str:
    await peer.send(request(request_id, "mcp/connect", {"serverId": server_id}))
    answer = await peer.receive()
    connection_id = answer["result"]["connectionId"]
    assert isinstance(connection_id, str) and connection_id.startswith("tools:")
    return connection_id


async def test_connect_binding_bare_results_outer_errors_and_disconnect() -> None:
    async with provider_wire() as (_, peer, handler):
        cid = await connect(peer)
        await peer.send(request(2, "mcp/message", {"connectionId": cid, "method": "tools/list"}))
        assert await peer.receive() == result(
            2, {"tools": [{"name": "echo", "inputSchema": {"type": "object"}}]}
        )
        await peer.send(request(3, "mcp/message", {"connectionId": cid, "method": "mcp-error"}))
        assert await peer.receive() == error(3, -32602, "Unknown tool", {"name": "x"})
        await peer.send(request(4, "mcp/message", {"connectionId": cid, "method": "progress"}))
        assert await peer.receive() == notification(
            "mcp/message",
            {
                "connectionId": cid,
                "method": "notifications/progress",
                "params": {"progressToken": 1, "progress": 1},
            },
        )
        assert await peer.receive() == result(4, {"done": True})
        await peer.send(request(5, "mcp/disconnect", {"connectionId": cid}))
        assert await peer.receive() == result(5, {})
        await peer.send(request(6, "mcp/message", {"connectionId": cid, "method": "tools/list"}))
        assert await peer.receive() == error(
            6, -32602, "Invalid params", {"reason": "unknown MCP connection", "connectionId": cid}
        )
    assert [call.connection_id for call in handler.seen] == [cid, cid, cid]
    assert handler.seen[0].request_id is None


async def test_connect_binding_errors() -> None:
    async with provider_wire() as (_, peer, handler):
        await peer.send(request(1, "mcp/connect", {"serverId": "nope"}))
        assert (await peer.receive())["error"]["code"] == -33001
        await peer.send(request(2, "mcp/connect", {}))
        assert await peer.receive() == error(
            2, -32602, "Invalid params", {"reason": "serverId must be a string"}
        )
        await peer.send(request(3, "mcp/disconnect", {"connectionId": "nope"}))
        assert (await peer.receive())["error"]["code"] == -32602
        cid = await connect(peer, 4)
        await peer.send(request(5, "mcp/message", {"connectionId": cid, "method": "wait"}))
        await handler.started.wait()
        await peer.send(cancel(5))
        assert await peer.receive() == error(5, -32800, "Request cancelled")
        await handler.cancelled.wait()
        # Malformed notifications are ignored, MCP's own cancel is never tunnelled.
        await peer.send(notification("mcp/message", {"method": 5}))
        await peer.send(
            notification("mcp/message", {"connectionId": cid, "method": "notifications/cancelled"})
        )
        await peer.receive_nothing_until_barrier()


async def test_connect_binding_serves_a_stateful_mcp_sdk_session() -> None:
    probe = ToolProbe()
    async with provider_wire(tools_server(probe)) as (_, peer, _handler):
        cid = await connect(peer)
        init = {
            "protocolVersion": "2025-06-18",
            "capabilities": {},
            "clientInfo": {"name": "wire", "version": "1"},
        }
        await peer.send(
            request(2, "mcp/message", {"connectionId": cid, "method": "initialize", "params": init})
        )
        answer = await peer.receive()
        assert answer["result"]["serverInfo"]["name"] == "tools"
        await peer.send(
            notification(
                "mcp/message", {"connectionId": cid, "method": "notifications/initialized"}
            )
        )
        call = {"name": "echo", "arguments": {"text": "wire"}, "_meta": {"progressToken": "t"}}
        await peer.send(
            request(3, "mcp/message", {"connectionId": cid, "method": "tools/call", "params": call})
        )
        progress = await peer.receive()
        assert progress["params"]["params"] == {
            "progressToken": "t",
            "progress": 1.0,
            "total": 2.0,
            "message": "half way",
        }
        assert (await peer.receive())["result"]["structuredContent"] == {"result": "echo: wire"}
        await peer.send(request(4, "mcp/disconnect", {"connectionId": cid}))
        assert await peer.receive() == result(4, {})
    assert probe.calls == ["wire"]


async def test_disconnect_cancels_a_plain_handlers_running_request_with_32800() -> None:
    """On the connect binding a plain handler's call ran on after ``mcp/disconnect`` (and
    after dispose), and its ACP request waited until the connection ended."""
    async with provider_wire() as (_, peer, handler):
        cid = await connect(peer)
        await peer.send(request(2, "mcp/message", {"connectionId": cid, "method": "wait"}))
        with anyio.fail_after(5):
            await handler.started.wait()
        await peer.send(request(3, "mcp/disconnect", {"connectionId": cid}))
        answers = [await peer.receive(), await peer.receive()]
        with anyio.fail_after(5):
            await handler.cancelled.wait()
    assert result(3, {}) in answers
    assert error(2, -32800, "Request cancelled") in answers


async def test_a_closed_connections_servers_are_forgotten() -> None:
    """An MCP SDK server's session holds its connection, so the provider's weak key never
    let a closed connection go: one per editor session, for the application's life."""
    import gc

    provider = McpProvider()
    for _ in range(5):
        builder = provider.attach(ConnectionBuilder(role="client"))
        async with wire_connection(builder) as (cx, peer):
            provider.register(cx, tools_server(ToolProbe()), name="tools", server_id="srv")
            await peer.send(request(1, "mcp/connect", {"serverId": "srv"}))
            assert "result" in await peer.receive()
    gc.collect()
    assert len(provider._states) == 0  # pyright: ignore[reportPrivateUsage]
