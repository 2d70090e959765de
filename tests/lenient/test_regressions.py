"""Issue #14's named cases, over a connection: what a newer or sloppier peer sends is
salvaged where the schema says so, delivered to the typed handler, and reported.

On strict parsing each of these loses the whole message: the notification is dropped
with a warning, the request answered -32602, the result raised as an error.
"""

from __future__ import annotations

import logging
from typing import Any

import anyio
import pytest

from acp_generated import v1
from acp_runtime import Connection, ConnectionBuilder, Responder
from acp_runtime._lenient import Salvage
from acp_runtime.testing import notification, request, result, wire_connection

pytestmark = pytest.mark.anyio

SESSION = "sess_1"


async def _deliver_update(update: dict[str, Any]) -> v1.SessionNotification:
    """A client connection gets ``session/update`` with ``update``; its typed handler's params."""
    got: list[v1.SessionNotification] = []
    arrived = anyio.Event()

    async def on_update(params: v1.SessionNotification, cx: Connection) -> None:
        got.append(params)
        arrived.set()

    builder = ConnectionBuilder("client").on_notification(v1.SESSION_UPDATE, on_update)
    async with wire_connection(builder) as (_cx, agent):
        await agent.send(notification("session/update", {"sessionId": SESSION, "update": update}))
        with anyio.fail_after(5):
            await arrived.wait()
    return got[0]


def _salvage_records(caplog: pytest.LogCaptureFixture) -> list[logging.LogRecord]:
    return [r for r in caplog.records if r.name == "acp_runtime._salvage"]


async def test_tool_call_update_with_unknown_kind_is_delivered_without_the_kind(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.WARNING)
    params = await _deliver_update(
        {
            "sessionUpdate": "tool_call_update",
            "toolCallId": "call_1",
            "kind": "teleport",
            "title": "Beam",
        }
    )
    update = params.update
    assert isinstance(update, v1.ToolCallUpdateSessionUpdate)
    assert (update.kind, update.title) == (None, "Beam")
    assert "kind" not in update.model_fields_set  # absent, not "cleared" with null
    assert params.model_dump(mode="json", exclude_unset=True) == {
        "sessionId": SESSION,
        "update": {"sessionUpdate": "tool_call_update", "toolCallId": "call_1", "title": "Beam"},
    }
    assert params.salvaged == (Salvage(("update", "kind"), "literal_error", "default"),)
    (record,) = _salvage_records(caplog)
    assert record.acp_method == "session/update"  # type: ignore[attr-defined]
    assert record.acp_path == "update.kind"  # type: ignore[attr-defined]
    assert record.acp_error_type == "literal_error"  # type: ignore[attr-defined]
    assert "teleport" not in record.getMessage()  # never the value


async def test_plan_with_one_malformed_entry_keeps_the_others() -> None:
    entries = [
        {"content": "Read the parser", "priority": "high", "status": "completed"},
        {"content": "Refactor", "priority": "urgent!!", "status": "pending"},
        {"content": "Run the tests", "priority": "low", "status": "pending"},
    ]
    params = await _deliver_update({"sessionUpdate": "plan", "entries": entries})
    update = params.update
    assert isinstance(update, v1.PlanSessionUpdate)
    assert [e.content for e in update.entries] == ["Read the parser", "Run the tests"]
    assert params.salvaged == (Salvage(("update", "entries", 1), "literal_error", "dropped"),)


async def test_tool_call_with_one_content_item_of_unknown_type_keeps_the_rest() -> None:
    content = [
        {"type": "hologram", "frames": 3},
        {"type": "content", "content": {"type": "text", "text": "done"}},
    ]
    params = await _deliver_update(
        {"sessionUpdate": "tool_call", "toolCallId": "call_2", "title": "Build", "content": content}
    )
    update = params.update
    assert isinstance(update, v1.ToolCallSessionUpdate)
    assert update.content is not None and len(update.content) == 1
    assert params.model_dump(mode="json", exclude_unset=True)["update"]["content"] == content[1:]
    assert params.salvaged == (Salvage(("update", "content", 0), "union_tag_invalid", "dropped"),)


async def test_session_new_with_null_mcp_servers_reaches_the_handler_with_an_empty_list() -> None:
    seen: list[v1.NewSessionRequest] = []

    async def new_session(
        params: v1.NewSessionRequest, responder: Responder[v1.NewSessionResponse]
    ) -> v1.NewSessionResponse:
        seen.append(params)
        return v1.NewSessionResponse(session_id=SESSION)

    builder = ConnectionBuilder("agent").on_request(v1.SESSION_NEW, new_session)
    async with wire_connection(builder) as (_cx, client):
        await client.send(request(1, "session/new", {"cwd": "/home/user", "mcpServers": None}))
        with anyio.fail_after(5):
            assert await client.receive() == result(1, {"sessionId": SESSION})
    assert seen[0].mcp_servers == []
    assert seen[0].salvaged == (Salvage(("mcpServers",), "list_type", "null"),)


async def test_initialize_answer_with_one_malformed_auth_method_keeps_the_others() -> None:
    async with wire_connection(ConnectionBuilder("client")) as (cx, agent):
        sent = cx.send_request(v1.InitializeRequest(protocol_version=1))
        assert (await agent.receive())["method"] == "initialize"
        methods = [
            {"id": "oauth", "name": "Sign in"},
            {"id": "broken", "name": 42},
            {"id": "key", "name": "API key", "description": "from the environment"},
        ]
        await agent.send(result(sent.id, {"protocolVersion": 1, "authMethods": methods}))
        with anyio.fail_after(5):
            answer = await sent
    assert [m.id for m in answer.auth_methods] == ["oauth", "key"]
    assert answer.salvaged == (Salvage(("authMethods", 1), "string_type", "dropped"),)
