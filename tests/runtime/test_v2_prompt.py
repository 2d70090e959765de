"""V2-1: protocol v2 prompt semantics with the version-agnostic runtime.

In v2 a successful ``session/prompt`` response only means the user message was inserted;
the turn goes on. Request cancellation of the (already answered) prompt changes nothing,
and stopping the turn is the ``session/cancel`` notification. Raw methods stand in for
the generated v2 bindings: the runtime does not know protocol versions.
"""

from __future__ import annotations

from typing import Any

import anyio
import pytest

from acp_runtime import ConnectionBuilder, JsonValue
from acp_runtime.testing import wire_connection

from .helpers import notification, request, result

pytestmark = pytest.mark.anyio

SESSION: dict[str, JsonValue] = {"sessionId": "sess_1"}


def update(kind: str, **fields: JsonValue) -> dict[str, Any]:
    return notification("session/update", {**SESSION, "update": {"sessionUpdate": kind, **fields}})


async def test_v2_1_cancel_after_prompt_response_is_a_no_op_session_cancel_stops_turn() -> None:
    """V2-1: after the prompt's response, ``cancel()`` sends no ``$/cancel_request``
    (the request is complete); the turn is stopped with the ``session/cancel``
    notification, and completion arrives as a ``state_update``."""
    updates: list[object] = []
    idle = anyio.Event()

    async def on_update(method: str, params: object, cx: object) -> None:
        assert isinstance(params, dict)
        updates.append(params["update"])
        if params["update"].get("state") == "idle":
            idle.set()

    async with wire_connection(ConnectionBuilder().on_raw_notification(on_update)) as (cx, agent):
        prompt = cx.send_raw_request(
            "session/prompt", {**SESSION, "prompt": [{"type": "text", "text": "hi"}]}
        )
        assert (await agent.receive())["method"] == "session/prompt"
        await agent.send(result(prompt.id, {}))  # v2: the user message was inserted
        with anyio.fail_after(5):
            assert await prompt == {}
        await agent.send(update("agent_message_chunk", content={"type": "text", "text": "work"}))

        prompt.cancel()  # request cancellation: the request is already complete
        await agent.receive_nothing_until_barrier()

        cx.send_raw_notification("session/cancel", SESSION)  # the way to stop the turn
        assert await agent.receive() == notification("session/cancel", SESSION)
        await agent.send(update("state_update", state="idle", stopReason="cancelled"))
        with anyio.fail_after(5):
            await idle.wait()
        assert updates[-1] == {
            "sessionUpdate": "state_update",
            "state": "idle",
            "stopReason": "cancelled",
        }
        assert cx.pending_request_count == 0


async def test_v2_1_session_cancel_is_a_notification_and_never_answered() -> None:
    """V2-1: on the agent side ``session/cancel`` arrives as a notification: no reply, no
    request marker involved."""
    seen: list[object] = []

    async def on_cancel(method: str, params: object, cx: object) -> None:
        seen.append((method, params))

    async with wire_connection(ConnectionBuilder().on_raw_notification(on_cancel)) as (cx, client):
        await client.send(notification("session/cancel", SESSION))
        await client.receive_nothing_until_barrier()
        assert seen == [("session/cancel", SESSION)]
        assert cx.incoming_request_count == 0
        await client.send(request(1, "session/cancel", SESSION))  # a request is a different thing
        reply = await client.receive()
        assert reply["error"]["code"] == -32601
