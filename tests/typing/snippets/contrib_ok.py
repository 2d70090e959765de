"""The stateful helpers take the generated facade and builders of a version as they are."""

from __future__ import annotations

from typing_extensions import assert_type, reveal_type

from acp_generated import v1
from acp_generated.v1 import builders
from acp_runtime import Connection
from acp_runtime.contrib import PermissionBroker, SessionAccumulator, ToolCallTracker


async def agent_side(cx: Connection) -> None:
    client = v1.RemoteClient(cx)
    tracker = ToolCallTracker(client, builders, session_id="s")
    call = await tracker.start(title="Read", kind="read")
    reveal_type(call)  # expect: TrackedToolCall
    options = [v1.PermissionOption(option_id="ok", name="Allow", kind="allow_once")]
    decision = await PermissionBroker(client).ask(
        session_id="s", tool_call=call.as_update(), options=options
    )
    assert_type(decision.option, v1.PermissionOption | None)


def client_side(notification: v1.SessionNotification) -> str:
    sessions = SessionAccumulator()
    state = sessions.apply(notification)
    reveal_type(state)  # expect: SessionState
    return state.text("agent")
