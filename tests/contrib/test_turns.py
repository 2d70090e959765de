"""PromptTurns: one code path for both cancellations of a prompt turn (issue #15).

``session/cancel`` ends the turn with stop reason ``cancelled``; ``$/cancel_request`` for the
prompt answers it -32800; either stops the turn's work and cancels what it awaits on the
client, hop by hop.
"""

from __future__ import annotations

import anyio
import pytest

from acp_generated import v1
from acp_generated.v1 import builders as b
from acp_runtime import ConnectionBuilder, RequestError, Responder
from acp_runtime.contrib import PromptTurns, Turn
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

CANCELLED = v1.PromptResponse(stop_reason="cancelled")


class Agent(v1.AgentHandler):
    """Streams a chunk, asks permission, then ends the turn: one path for both cancels."""

    def __init__(self) -> None:
        self.turns = PromptTurns(cancelled=CANCELLED)
        self.seen: list[Turn] = []
        self.fail_with: Exception | None = None

    async def prompt(
        self, params: v1.PromptRequest, responder: Responder[v1.PromptResponse]
    ) -> None:
        self.turns.start(params.session_id, responder, self._turn, params)

    async def cancel(self, params: v1.CancelNotification, cx: object) -> None:
        self.turns.cancel(params.session_id)

    async def _turn(self, turn: Turn, params: v1.PromptRequest) -> v1.PromptResponse:
        self.seen.append(turn)
        if self.fail_with is not None:
            raise self.fail_with
        client = v1.RemoteClient(self._cx)
        await client.session_update(
            session_id=turn.session_id, update=b.agent_message_chunk(content=b.text(text="hi"))
        )
        await client.request_permission(
            session_id=turn.session_id,
            tool_call=b.tool_call_update(tool_call_id="t1"),
            options=[v1.PermissionOption(option_id="ok", name="OK", kind="allow_once")],
        )
        return v1.PromptResponse(stop_reason="end_turn")

    def bind(self, builder: ConnectionBuilder) -> ConnectionBuilder:
        self.attach(builder)
        return builder


def prompt(request_id: int, session_id: str = "s1") -> dict[str, object]:
    return request(
        request_id,
        "session/prompt",
        {"sessionId": session_id, "prompt": [{"type": "text", "text": "go"}]},
    )


async def started(client: WirePeer) -> dict[str, object]:
    """Read the chunk, then the permission request the turn is now waiting on."""
    chunk = await client.receive()
    assert chunk["method"] == "session/update"
    ask = await client.receive()
    assert ask["method"] == "session/request_permission"
    return ask


async def test_session_cancel_answers_cancelled_and_cancels_the_permission_request() -> None:
    agent = Agent()
    async with wire_connection(agent.bind(ConnectionBuilder(role="agent"))) as (cx, client):
        agent._cx = cx  # type: ignore[attr-defined]
        await client.send(prompt(1))
        with anyio.fail_after(5):
            ask = await started(client)
            await client.send(notification("session/cancel", {"sessionId": "s1"}))
            got = [await client.receive(), await client.receive()]
    assert cancel(ask["id"]) in got  # the turn's own request, cancelled hop by hop
    assert result(1, {"stopReason": "cancelled"}) in got
    assert agent.seen[0].session_cancelled
    assert not agent.turns.running("s1")


async def test_cancel_request_answers_32800_through_the_same_path() -> None:
    agent = Agent()
    async with wire_connection(agent.bind(ConnectionBuilder(role="agent"))) as (cx, client):
        agent._cx = cx  # type: ignore[attr-defined]
        await client.send(prompt(1))
        with anyio.fail_after(5):
            ask = await started(client)
            await client.send(cancel(1))
            got = [await client.receive(), await client.receive()]
    assert cancel(ask["id"]) in got
    assert error(1, -32800, "Request cancelled") in got
    assert not agent.seen[0].session_cancelled


async def test_an_uncancelled_turn_answers_its_result_and_other_sessions_are_untouched() -> None:
    agent = Agent()
    async with wire_connection(agent.bind(ConnectionBuilder(role="agent"))) as (cx, client):
        agent._cx = cx  # type: ignore[attr-defined]
        await client.send(prompt(1, "s1"))
        with anyio.fail_after(5):
            ask1 = await started(client)
            await client.send(prompt(2, "s2"))
            await started(client)
            await client.send(notification("session/cancel", {"sessionId": "s2"}))
            got = [await client.receive(), await client.receive()]
            assert result(2, {"stopReason": "cancelled"}) in got
            outcome = {"outcome": {"outcome": "selected", "optionId": "ok"}}
            await client.send(result(ask1["id"], outcome))
            assert await client.receive() == result(1, {"stopReason": "end_turn"})
    assert agent.turns.running("s1") is False


async def test_a_cancel_read_right_after_the_prompt_still_stops_the_turn() -> None:
    """The turn is registered by ``start``, before its spawned work first runs."""
    agent = Agent()
    async with wire_connection(agent.bind(ConnectionBuilder(role="agent"))) as (cx, client):
        agent._cx = cx  # type: ignore[attr-defined]
        await client.send(prompt(1))
        await client.send(notification("session/cancel", {"sessionId": "s1"}))
        with anyio.fail_after(5):
            answer = await client.receive()
            while "method" in answer:  # the turn may have sent something before it noticed
                answer = await client.receive()
    assert answer == result(1, {"stopReason": "cancelled"})


@pytest.mark.parametrize(
    ("failure", "expected"),
    [
        (
            RequestError.invalid_params({"why": "x"}),
            error(1, -32602, "Invalid params", {"why": "x"}),
        ),
        (ValueError("internal detail"), error(1, -32603, "Internal error in session/prompt")),
    ],
    ids=["request-error", "other"],
)
async def test_a_failing_turn_answers_its_error_and_nothing_leaks(
    failure: Exception, expected: dict[str, object]
) -> None:
    agent = Agent()
    agent.fail_with = failure
    async with wire_connection(agent.bind(ConnectionBuilder(role="agent"))) as (cx, client):
        agent._cx = cx  # type: ignore[attr-defined]
        await client.send(prompt(1))
        with anyio.fail_after(5):
            assert await client.receive() == expected
    assert not agent.turns.running("s1")


def test_cancel_without_a_running_turn_is_false() -> None:
    assert PromptTurns(cancelled=CANCELLED).cancel("nobody") is False
