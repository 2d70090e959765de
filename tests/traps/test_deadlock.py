"""Issue #15 trap 1: awaiting an answer inside the dispatch loop raises ``DeadlockError``
(typed request handlers run off the loop since issue 33, so there they simply await).

Before, ``await cx.send_request(...)`` inside a handler hung forever, silently: the loop
that would read the answer is the one running the handler.
"""

from __future__ import annotations

import anyio
import pytest

from acp_generated import v1
from acp_runtime import ConnectionBuilder, DeadlockError, JsonValue, Responder, memory_pair
from acp_runtime.testing import request, result, wire_connection

pytestmark = pytest.mark.anyio

ASK = v1.RequestPermissionRequest(
    session_id="s1",
    tool_call=v1.ToolCallUpdate(tool_call_id="t1", title="run the tests"),
    options=[v1.PermissionOption(option_id="ok", name="Allow", kind="allow_once")],
)


class AskingAgent(v1.AgentHandler):
    """The trap as a user writes it: a permission request awaited inside the handler."""

    def __init__(self) -> None:
        self.raised: list[DeadlockError] = []

    async def prompt(
        self, params: v1.PromptRequest, responder: Responder[v1.PromptResponse]
    ) -> v1.PromptResponse:
        try:
            answer = await responder.connection.send_request(ASK)
        except DeadlockError as error:
            self.raised.append(error)
            return v1.PromptResponse(stop_reason="refusal")
        assert answer.outcome.outcome == "selected"
        return v1.PromptResponse(stop_reason="end_turn")


PROMPT = {"sessionId": "s1", "prompt": [{"type": "text", "text": "hi"}]}
SELECTED = {"outcome": {"outcome": "selected", "optionId": "ok"}}


async def test_typed_handler_awaiting_a_permission_request_gets_its_answer() -> None:
    """Before issue 33 this raised DeadlockError: typed request handlers ran in the loop.
    Now each runs in its own task, so awaiting the client simply works."""
    agent = AskingAgent()
    builder = ConnectionBuilder(role="agent")
    agent.attach(builder)
    async with wire_connection(builder) as (_, client):
        await client.send(request(7, "session/prompt", PROMPT))
        with anyio.fail_after(5):
            ask = await client.receive()
            assert ask["method"] == "session/request_permission"
            await client.send(result(ask["id"], SELECTED))
            assert await client.receive() == result(7, {"stopReason": "end_turn"})
    assert agent.raised == []


async def test_an_inline_typed_handler_awaiting_the_peer_raises_at_once() -> None:
    """``inline=True`` puts the handler back in the dispatch loop: the await that could
    never end raises :class:`DeadlockError` at once instead of hanging."""
    agent = AskingAgent()
    builder = ConnectionBuilder(role="agent").on_request(
        v1.methods.SESSION_PROMPT, agent.prompt, inline=True
    )
    async with wire_connection(builder) as (_, client):
        await client.send(request(7, "session/prompt", PROMPT))
        with anyio.fail_after(5):  # before DeadlockError: no answer, ever
            messages = [await client.receive()]
            while messages[-1].get("id") != 7:
                messages.append(await client.receive())
    assert messages[0]["method"] == "session/request_permission"
    assert messages[-1] == result(7, {"stopReason": "refusal"})
    assert len(agent.raised) == 1
    assert "session/request_permission" in str(agent.raised[0])
    assert "spawn" in str(agent.raised[0])


async def test_sending_without_awaiting_and_awaiting_in_spawned_work_stay_allowed() -> None:
    """The check is about awaiting in the loop: a detached send and spawned work are fine."""
    answered = anyio.Event()
    got: list[JsonValue] = []

    async def handler(method: str, params: JsonValue, responder: Responder[JsonValue]) -> None:
        cx = responder.connection
        cx.send_raw_request("fire").detach()

        async def work() -> None:
            got.append(await cx.send_raw_request("sub"))
            responder.respond("done")
            answered.set()

        cx.spawn(work)

    async with wire_connection(ConnectionBuilder().on_raw_request(handler)) as (_, peer):
        await peer.send(request(1, "go"))
        with anyio.fail_after(5):
            fire, sub = await peer.receive(), await peer.receive()
            assert (fire["method"], sub["method"]) == ("fire", "sub")
            await peer.send(result(sub["id"], "sub-result"))
            await answered.wait()
            assert await peer.receive() == result(1, "done")
    assert got == ["sub-result"]


async def test_a_result_callback_awaiting_raises_too() -> None:
    """Result callbacks run on the dispatch loop as well."""
    raised: list[BaseException] = []
    seen = anyio.Event()

    async with wire_connection(ConnectionBuilder()) as (cx, peer):

        async def on_result(outcome: object) -> None:
            try:
                await cx.send_raw_request("again")
            except DeadlockError as error:
                raised.append(error)
            seen.set()

        cx.send_raw_request("first").on_receiving_result(on_result)
        with anyio.fail_after(5):
            first = await peer.receive()
            await peer.send(result(first["id"], 1))
            await seen.wait()
    assert len(raised) == 1


async def test_awaiting_another_connection_inside_a_handler_is_allowed() -> None:
    """Only the connection whose loop is busy would deadlock: a proxy-like handler awaiting
    a second connection's request gets its answer."""
    upstream_builder = ConnectionBuilder().on_raw_request(
        lambda method, params, responder: _answer(responder)
    )
    ours, theirs = memory_pair()
    async with anyio.create_task_group() as tg:
        tg.start_soon(upstream_builder.serve, theirs)
        async with ConnectionBuilder().connect(ours) as upstream:

            async def relay(
                method: str, params: JsonValue, responder: Responder[JsonValue]
            ) -> JsonValue:
                return await upstream.send_raw_request("up")

            async with wire_connection(ConnectionBuilder().on_raw_request(relay)) as (_, peer):
                await peer.send(request(3, "relay"))
                with anyio.fail_after(5):
                    assert await peer.receive() == result(3, "from upstream")
        tg.cancel_scope.cancel()


async def _answer(responder: Responder[JsonValue]) -> JsonValue:
    return "from upstream"
