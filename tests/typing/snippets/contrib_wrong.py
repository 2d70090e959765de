"""Negative control: the helpers refuse what is not a facade, builders module or option."""

from __future__ import annotations

from acp_generated import v1
from acp_generated.v1 import builders
from acp_runtime import Connection
from acp_runtime.contrib import PermissionBroker, ToolCallTracker


async def wrong(cx: Connection) -> None:
    ToolCallTracker(v1.RemoteAgent(cx), builders, session_id="s")  # expect-error
    ToolCallTracker(v1.RemoteClient(cx), v1.models, session_id="s")  # expect-error
    broker = PermissionBroker(v1.RemoteClient(cx))
    await broker.ask(session_id="s", tool_call=None, options=["ok"])  # expect-error
