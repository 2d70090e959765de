"""ToolCallTracker: fresh ids, only what changed on the wire, completion and failure."""

from __future__ import annotations

import itertools
from typing import Any

import anyio
import pytest

from acp_generated import v1
from acp_generated.v1 import builders as b
from acp_runtime import ConnectionBuilder
from acp_runtime.contrib import ToolCallTracker
from acp_runtime.testing import WirePeer, notification, wire_connection

pytestmark = pytest.mark.anyio


def update(body: dict[str, Any]) -> dict[str, Any]:
    return notification("session/update", {"sessionId": "s1", "update": body})


def numbered() -> Any:
    counter = itertools.count(1)
    return lambda: f"call-{next(counter)}"


async def test_start_update_complete_send_what_changed() -> None:
    async with wire_connection(ConnectionBuilder("agent")) as (cx, client):
        tracker = ToolCallTracker(v1.RemoteClient(cx), b, session_id="s1", new_id=numbered())
        call = await tracker.start(
            title="Read a.py", kind="read", locations=[b.tool_call_location(path="/a.py")]
        )
        assert await client.receive() == update(
            {
                "sessionUpdate": "tool_call",
                "toolCallId": "call-1",
                "title": "Read a.py",
                "kind": "read",
                "status": "pending",
                "locations": [{"path": "/a.py"}],
            }
        )
        await call.update(status="in_progress")
        assert await client.receive() == update(
            {"sessionUpdate": "tool_call_update", "toolCallId": "call-1", "status": "in_progress"}
        )
        await call.complete(content=[b.tool_content(content=b.text(text="x = 1"))])
        assert await client.receive() == update(
            {
                "sessionUpdate": "tool_call_update",
                "toolCallId": "call-1",
                "status": "completed",
                "content": [{"type": "content", "content": {"type": "text", "text": "x = 1"}}],
            }
        )
        assert call.is_finished
        with pytest.raises(RuntimeError, match="already completed"):
            await call.update(title="again")
        await client.receive_nothing_until_barrier()
        assert call.as_update() == b.tool_call_update(
            tool_call_id="call-1",
            title="Read a.py",
            kind="read",
            status="completed",
            locations=[b.tool_call_location(path="/a.py")],
            content=[b.tool_content(content=b.text(text="x = 1"))],
        )


async def test_ids_are_fresh_and_a_reused_id_is_refused() -> None:
    async with wire_connection(ConnectionBuilder("agent")) as (cx, client):
        tracker = ToolCallTracker(v1.RemoteClient(cx), b, session_id="s1")
        first = await tracker.start(title="a")
        second = await tracker.start(title="b")
        assert first.tool_call_id != second.tool_call_id
        assert first.tool_call_id.startswith("call_")
        assert set(tracker.calls) == {first.tool_call_id, second.tool_call_id}
        with pytest.raises(ValueError, match="already used"):
            await tracker.start(title="c", tool_call_id=first.tool_call_id)
        await client.barrier()


async def _statuses(client: WirePeer, count: int) -> list[str | None]:
    return [(await client.receive())["params"]["update"].get("status") for _ in range(count)]


async def test_track_completes_a_block_that_ends_normally() -> None:
    async with wire_connection(ConnectionBuilder("agent")) as (cx, client):
        tracker = ToolCallTracker(v1.RemoteClient(cx), b, session_id="s1")
        async with tracker.track(title="ok") as call:
            await call.update(status="in_progress")
        assert await _statuses(client, 3) == ["pending", "in_progress", "completed"]


async def test_track_fails_a_block_that_raises_and_lets_the_error_go_on() -> None:
    async with wire_connection(ConnectionBuilder("agent")) as (cx, client):
        tracker = ToolCallTracker(v1.RemoteClient(cx), b, session_id="s1")
        with pytest.raises(KeyError):
            async with tracker.track(title="boom"):
                raise KeyError("x")
        assert await _statuses(client, 2) == ["pending", "failed"]


async def test_track_reports_a_cancelled_block_failed() -> None:
    async with wire_connection(ConnectionBuilder("agent")) as (cx, client):
        tracker = ToolCallTracker(v1.RemoteClient(cx), b, session_id="s1")
        with anyio.CancelScope() as scope:
            async with tracker.track(title="slow"):
                scope.cancel()
                await anyio.sleep_forever()
        assert await _statuses(client, 2) == ["pending", "failed"]


async def test_a_block_that_finished_the_call_itself_is_left_as_it_is() -> None:
    async with wire_connection(ConnectionBuilder("agent")) as (cx, client):
        tracker = ToolCallTracker(v1.RemoteClient(cx), b, session_id="s1")
        async with tracker.track(title="t") as call:
            await call.fail(raw_output={"error": "no such file"})
        assert await _statuses(client, 2) == ["pending", "failed"]
        await client.receive_nothing_until_barrier()
