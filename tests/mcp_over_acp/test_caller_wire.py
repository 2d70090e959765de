"""The caller against exact wire messages: what it sends, how it reads answers and
notifications, and how a cancelled MCP call becomes ``$/cancel_request``."""

from __future__ import annotations

from typing import Any

import anyio
import pytest
from mcp.shared.exceptions import MCPError

from acp_runtime import ConnectionBuilder, RequestError
from acp_runtime.mcp import McpCaller, McpError, McpNotification
from acp_runtime.testing import (
    WirePeer,
    cancel,
    error,
    notification,
    request,
    result,
    wire_connection,
)

pytestmark = pytest.mark.anyio

META = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientCapabilities": {"roots": {}},
    "io.modelcontextprotocol/clientInfo": {"name": "agent", "version": "1"},
}


def caller() -> McpCaller:
    return McpCaller(
        client_info={"name": "agent", "version": "1"}, client_capabilities={"roots": {}}
    )


async def test_request_sends_the_envelope_with_the_mcp_keys_and_reads_the_carrier() -> None:
    mcp = caller()
    async with wire_connection(mcp.attach(ConnectionBuilder(role="agent"))) as (cx, peer):
        async with anyio.create_task_group() as tg:
            outcome: list[Any] = []

            async def call() -> None:
                outcome.append(
                    await mcp.request(
                        cx, "srv", "tools/list", {"cursor": "c", "_meta": {"k": 1}}, request_id="r1"
                    )
                )

            tg.start_soon(call)
            sent = await peer.receive()
            assert sent == request(
                1,
                "mcp/message",
                {
                    "serverId": "srv",
                    "requestId": "r1",
                    "method": "tools/list",
                    "params": {"cursor": "c", "_meta": {"k": 1, **META}},
                },
            )
            await peer.send(result(1, {"result": {"tools": []}, "_meta": {"carrier": True}}))
    assert outcome == [{"tools": []}]


@pytest.mark.parametrize(
    ("answer", "raised"),
    [
        ({"error": {"code": -32602, "message": "Unknown tool"}}, McpError(-32602, "Unknown tool")),
        ({"error": {"code": 1, "message": "m", "data": None}}, McpError(1, "m", None)),
        ({"result": None, "error": {"code": 1, "message": "m"}}, None),  # result wins
        (
            {"neither": 1},
            RequestError(
                -33002, "Invalid MCP-over-ACP response carrier", {"response": {"neither": 1}}
            ),
        ),
        (
            {"error": {"code": "x"}},
            RequestError(
                -33002,
                "Invalid MCP-over-ACP response carrier",
                {"response": {"error": {"code": "x"}}},
            ),
        ),
    ],
)
async def test_carriers_inner_errors_and_broken_carriers(
    answer: Any, raised: Exception | None
) -> None:
    mcp = caller()
    async with wire_connection(mcp.attach(ConnectionBuilder(role="agent"))) as (cx, peer):
        async with anyio.create_task_group() as tg:
            outcome: list[Any] = []

            async def call() -> None:
                try:
                    outcome.append(await mcp.request(cx, "srv", "x"))
                except (McpError, RequestError) as failure:
                    outcome.append(failure)

            tg.start_soon(call)
            await peer.receive()
            await peer.send(result(1, answer))
    assert outcome == [raised]


async def test_outer_errors_raise_request_error_and_add_meta_false_sends_params_as_given() -> None:
    mcp = caller()
    async with wire_connection(mcp.attach(ConnectionBuilder(role="agent"))) as (cx, peer):
        async with anyio.create_task_group() as tg:
            outcome: list[Any] = []

            async def call() -> None:
                try:
                    await mcp.request(cx, "gone", "x", {"a": 1}, request_id="r", add_meta=False)
                except RequestError as failure:
                    outcome.append(failure.code)

            tg.start_soon(call)
            sent = await peer.receive()
            assert sent["params"]["params"] == {"a": 1}
            await peer.send(error(1, -33001, "MCP server registration unavailable"))
    assert outcome == [-33001]


async def test_notifications_reach_their_request_only_while_it_is_active() -> None:
    mcp = caller()
    seen: list[McpNotification] = []
    async with wire_connection(mcp.attach(ConnectionBuilder(role="agent"))) as (cx, peer):
        async with anyio.create_task_group() as tg:
            tg.start_soon(
                lambda: mcp.request(cx, "srv", "x", request_id="r1", on_notification=seen.append)
            )
            await peer.receive()
            progress = {
                "serverId": "srv",
                "requestId": "r1",
                "method": "notifications/progress",
                "params": {"p": 1},
            }
            await peer.send(notification("mcp/message", progress))
            await peer.send(notification("mcp/message", {**progress, "requestId": "other"}))
            await peer.send(notification("mcp/message", {"serverId": 5}))  # malformed: ignored
            await peer.send(result(1, {"result": {}}))
        await peer.send(notification("mcp/message", progress))  # finished: dropped
        await peer.receive_nothing_until_barrier()
    assert seen == [McpNotification("notifications/progress", {"p": 1})]


async def test_a_duplicate_active_request_id_is_refused_locally() -> None:
    mcp = caller()
    async with wire_connection(mcp.attach(ConnectionBuilder(role="agent"))) as (cx, peer):
        async with anyio.create_task_group() as tg:
            tg.start_soon(lambda: mcp.request(cx, "srv", "x", request_id="r1"))
            await peer.receive()
            with pytest.raises(ValueError, match="already active"):
                await mcp.request(cx, "srv", "x", request_id="r1")
            await peer.send(result(1, {"result": {}}))


async def test_cancelling_the_awaiting_task_sends_cancel_request() -> None:
    mcp = caller()
    async with wire_connection(mcp.attach(ConnectionBuilder(role="agent"))) as (cx, peer):
        async with anyio.create_task_group() as tg:
            tg.start_soon(lambda: mcp.request(cx, "srv", "x"))
            await peer.receive()
            tg.cancel_scope.cancel()
        assert await peer.receive() == cancel(1)


async def answer_session_calls(peer: WirePeer, answers: dict[str, Any]) -> list[dict[str, Any]]:
    """Play a stateless provider: answer each mcp/message by its inner method."""
    sent: list[dict[str, Any]] = []
    while True:
        message = await peer.receive()
        sent.append(message)
        if message.get("method") != "mcp/message":
            continue
        params = message["params"]
        answer = answers[params["method"]]
        if callable(answer):
            await answer(params)
        called = {"content": [], "resultType": "complete"}
        await peer.send(result(message["id"], {"result": called if callable(answer) else answer}))


async def test_a_client_session_speaks_the_stateless_binding() -> None:
    mcp = caller()
    progress_seen: list[float] = []

    async def tool_with_progress(params: dict[str, Any]) -> None:
        token = params["params"]["_meta"]["progressToken"]
        note = {
            **params,
            "method": "notifications/progress",
            "params": {"progressToken": token, "progress": 0.5},
        }
        await peer.send(notification("mcp/message", note))

    answers = {
        "tools/list": {
            "tools": [{"name": "t", "inputSchema": {"type": "object"}}],
            "resultType": "complete",
            "ttlMs": 0,
            "cacheScope": "private",
        },
        "tools/call": tool_with_progress,
    }

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        progress_seen.append(progress)

    async with wire_connection(mcp.attach(ConnectionBuilder(role="agent"))) as (cx, peer):
        async with anyio.create_task_group() as tg:
            sent: list[dict[str, Any]] = []

            async def provider() -> None:
                sent.extend(await answer_session_calls(peer, answers))

            tg.start_soon(provider)
            with anyio.fail_after(5):
                async with mcp.session(cx, "srv") as session:
                    await session.list_tools()
                    await session.call_tool("t", {}, progress_callback=on_progress)
            tg.cancel_scope.cancel()
    assert progress_seen == [0.5]


async def test_cancelling_a_session_call_sends_cancel_request_and_drops_the_late_answer() -> None:
    mcp = caller()
    async with wire_connection(mcp.attach(ConnectionBuilder(role="agent"))) as (cx, peer):
        with anyio.fail_after(5):
            async with mcp.session(cx, "srv") as session:
                async with anyio.create_task_group() as tg:
                    tg.start_soon(session.list_tools)
                    sent = await peer.receive()
                    assert sent["params"]["method"] == "tools/list"
                    tg.cancel_scope.cancel()
                assert await peer.receive() == cancel(sent["id"])
                await peer.send(error(sent["id"], -32800, "Request cancelled"))
                await peer.receive_nothing_until_barrier()


async def test_a_binding_failure_reaches_the_session_as_its_code() -> None:
    mcp = caller()
    async with wire_connection(mcp.attach(ConnectionBuilder(role="agent"))) as (cx, peer):
        with anyio.fail_after(5):
            async with mcp.session(cx, "srv") as session, anyio.create_task_group() as tg:

                async def provider() -> None:
                    message = await peer.receive()
                    await peer.send(error(message["id"], -33002, "MCP server handler failed"))

                tg.start_soon(provider)
                with pytest.raises(MCPError) as failure:
                    await session.list_tools()
    assert failure.value.code == -33002


async def test_connect_binding_session_connects_initializes_and_disconnects() -> None:
    mcp = caller()
    pinged = anyio.Event()
    async with wire_connection(mcp.attach(ConnectionBuilder(role="agent"))) as (cx, peer):

        async def provider() -> list[Any]:
            log: list[Any] = []
            connect = await peer.receive()
            log.append(connect["method"])
            await peer.send(result(connect["id"], {"connectionId": "c1"}))
            init = await peer.receive()
            log.append((init["params"]["connectionId"], init["params"]["method"]))
            await peer.send(
                result(
                    init["id"],
                    {
                        "protocolVersion": "2025-06-18",
                        "capabilities": {"tools": {}},
                        "serverInfo": {"name": "wire", "version": "1"},
                    },
                )
            )
            initialized = await peer.receive()
            log.append((initialized["method"], initialized["params"]["method"]))
            # A server-to-client request arrives as an mcp/message request to the agent.
            await peer.send(request(90, "mcp/message", {"connectionId": "c1", "method": "ping"}))
            log.append(await peer.receive())
            await peer.send(request(91, "mcp/message", {"connectionId": "nope", "method": "ping"}))
            log.append((await peer.receive())["error"]["code"])
            pinged.set()
            disconnect = await peer.receive()
            log.append((disconnect["method"], disconnect["params"]))
            await peer.send(result(disconnect["id"], {}))
            return log

        log: list[Any] = []
        async with anyio.create_task_group() as tg:

            async def run_provider() -> None:
                log.extend(await provider())

            tg.start_soon(run_provider)
            with anyio.fail_after(5):
                async with mcp.session(cx, "srv", binding="connect") as session:
                    assert session.server_info is not None and session.server_info.name == "wire"
                    await pinged.wait()
    assert log == [
        "mcp/connect",
        ("c1", "initialize"),
        ("mcp/message", "notifications/initialized"),
        result(90, {}),
        -32602,
        ("mcp/disconnect", {"connectionId": "c1"}),
    ]


async def test_a_connection_id_already_in_use_is_refused_and_the_open_one_keeps_it() -> None:
    """An editor that answered a second ``mcp/connect`` with the open connection's id took
    over its messages, and the first one's release then dropped the second's route."""
    mcp = caller()
    async with wire_connection(mcp.attach(ConnectionBuilder(role="agent"))) as (cx, peer):
        async with anyio.create_task_group() as tg:
            opened: list[Any] = []

            async def open_one() -> None:
                opened.append(await mcp.connect(cx, "srv"))

            tg.start_soon(open_one)
            first = await peer.receive()
            await peer.send(result(first["id"], {"connectionId": "c1"}))
        refused: list[RequestError] = []

        async def open_again() -> None:
            try:
                await mcp.connect(cx, "srv")
            except RequestError as exc:
                refused.append(exc)

        async with anyio.create_task_group() as tg:
            tg.start_soon(open_again)
            second = await peer.receive()
            await peer.send(result(second["id"], {"connectionId": "c1"}))
        assert [exc.code for exc in refused] == [-33002]
        assert mcp._state(cx).connections == {"c1": opened[0]}  # pyright: ignore[reportPrivateUsage]
