"""Prompt turns and ``session/cancel`` (issue 33, :mod:`acp_runtime._turns`).

Agent side: ``session/cancel`` stops the running ``session/prompt`` handler of its session,
and the turn answers ``cancelled`` after the updates already sent; an agent with its own
``session/cancel`` handler takes over. Client side: cancelling a typed prompt also sends
``session/cancel``, and :meth:`SentRequest.cancel_after` waits, cancels and returns the
turn's real answer.
"""

from __future__ import annotations

import anyio
import pytest

from acp_generated import v1, v2
from acp_runtime import Connection, ConnectionBuilder, Responder, memory_pair
from acp_runtime.testing import error, notification, request, result, wire_connection

pytestmark = pytest.mark.anyio

PROMPT = {"sessionId": "s1", "prompt": [{"type": "text", "text": "hi"}]}
CANCEL = notification("session/cancel", {"sessionId": "s1"})


def _update(text: str) -> v1.SessionNotification:
    return v1.SessionNotification(
        session_id="s1",
        update=v1.AgentMessageChunkSessionUpdate(
            session_update="agent_message_chunk",
            content=v1.TextContentBlock(type="text", text=text),
        ),
    )


class SlowAgent(v1.AgentHandler):
    """Streams one chunk, then works until it is stopped."""

    def __init__(self) -> None:
        self.finished_cleanup = False

    async def prompt(
        self, params: v1.PromptRequest, responder: Responder[v1.PromptResponse]
    ) -> v1.PromptResponse:
        cx = responder.connection
        await cx.send_notification(_update("working"))
        try:
            await anyio.sleep_forever()
        finally:
            self.finished_cleanup = True
        raise AssertionError("not reached")


def _agent(handler: v1.AgentHandler) -> ConnectionBuilder:
    builder = ConnectionBuilder(role="agent")
    handler.attach(builder)
    return builder


async def test_session_cancel_stops_the_running_prompt_and_the_turn_answers_cancelled() -> None:
    agent = SlowAgent()
    async with wire_connection(_agent(agent)) as (cx, client):
        await client.send(request(1, "session/prompt", PROMPT))
        with anyio.fail_after(5):
            assert (await client.receive())["method"] == "session/update"
            assert cx.running_turns.running("s1")
            await client.send(notification("session/cancel", {"sessionId": "other"}))
            await client.send(CANCEL)
            assert await client.receive() == result(1, {"stopReason": "cancelled"})
    assert agent.finished_cleanup
    assert not cx.running_turns.running("s1")


class Stepped(v1.AgentHandler):
    """A prompt handler whose suspensions the test drives: it suspends ``steps`` times
    on events the test sets (``resume[i]``), telling it each time (``reached[i]``), and
    at the last one waits for good."""

    def __init__(self, steps: int) -> None:
        self.reached = [anyio.Event() for _ in range(steps)]
        self.resume = [anyio.Event() for _ in range(steps)]
        self.stopped_at: int | None = None

    async def prompt(
        self, params: v1.PromptRequest, responder: Responder[v1.PromptResponse]
    ) -> v1.PromptResponse:
        for step, (reached, resume) in enumerate(zip(self.reached, self.resume, strict=True)):
            reached.set()
            try:
                await resume.wait()
            except anyio.get_cancelled_exc_class():
                self.stopped_at = step
                raise
        return v1.PromptResponse(stop_reason="end_turn")


@pytest.mark.parametrize("suspensions", [1, 2])
async def test_session_cancel_stops_a_prompt_suspended_at_its_first_or_second_await(
    suspensions: int,
) -> None:
    """The turn is registered when its handler first suspends (before anything else can
    run), so a ``session/cancel`` read while it waits, at its first await or a later
    one, stops it."""
    agent = Stepped(suspensions)
    async with wire_connection(_agent(agent)) as (cx, client):
        await client.send(request(1, "session/prompt", PROMPT))
        with anyio.fail_after(5):
            for step in range(suspensions - 1):
                await agent.reached[step].wait()
                agent.resume[step].set()  # on to its next suspension
            await agent.reached[-1].wait()
            assert cx.running_turns.running("s1")
            await client.send(CANCEL)
            assert await client.receive() == result(1, {"stopReason": "cancelled"})
    assert agent.stopped_at == suspensions - 1
    assert not cx.running_turns.running("s1")


async def test_session_cancel_stops_a_prompt_awaiting_the_client() -> None:
    """Awaiting the peer hands the reading over before the handler suspends; the turn
    is registered all the same, before ``session/cancel`` can be read."""

    class Asking(v1.AgentHandler):
        async def prompt(
            self, params: v1.PromptRequest, responder: Responder[v1.PromptResponse]
        ) -> v1.PromptResponse:
            await responder.connection.send_raw_request("_test/ask", {})
            return v1.PromptResponse(stop_reason="end_turn")

    async with wire_connection(_agent(Asking())) as (cx, client):
        await client.send(request(1, "session/prompt", PROMPT))
        with anyio.fail_after(5):
            asked = await client.receive()
            assert asked["method"] == "_test/ask"
            await client.send(CANCEL)
            assert await client.receive() == notification(
                "$/cancel_request", {"requestId": asked["id"]}
            )
            assert await client.receive() == result(1, {"stopReason": "cancelled"})
    assert not cx.running_turns.running("s1")


async def test_a_prompt_answered_without_suspending_is_never_a_running_turn() -> None:
    """Nothing can read a ``session/cancel`` before such a handler answered: it is not
    registered, and a ``session/cancel`` after its answer changes nothing."""
    seen: list[bool] = []

    class AtOnce(v1.AgentHandler):
        async def prompt(
            self, params: v1.PromptRequest, responder: Responder[v1.PromptResponse]
        ) -> v1.PromptResponse:
            seen.append(responder.connection.running_turns.running("s1"))
            return v1.PromptResponse(stop_reason="end_turn")

    async with wire_connection(_agent(AtOnce())) as (cx, client):
        with anyio.fail_after(5):
            for request_id in (1, 2):
                await client.send(request(request_id, "session/prompt", PROMPT))
                assert await client.receive() == result(request_id, {"stopReason": "end_turn"})
            await client.send(CANCEL)
            await client.receive_nothing_until_barrier()
    assert seen == [False, False]
    assert not cx.running_turns.running("s1")


async def test_session_cancel_stops_every_waiting_turn_of_its_session_only() -> None:
    """Two waiting turns of one session both answer ``cancelled``; another session's
    turn goes on and answers for itself."""
    agent = Stepped(1)
    other = {**PROMPT, "sessionId": "s2"}
    async with wire_connection(_agent(agent)) as (cx, client):
        with anyio.fail_after(5):
            await client.send(request(1, "session/prompt", PROMPT))
            await client.send(request(2, "session/prompt", PROMPT))
            await client.send(request(3, "session/prompt", other))
            await client.barrier()
            assert cx.running_turns.running("s1") and cx.running_turns.running("s2")
            await client.send(CANCEL)
            answers = [await client.receive(), await client.receive()]
            assert sorted(answers, key=lambda m: m["id"]) == [
                result(1, {"stopReason": "cancelled"}),
                result(2, {"stopReason": "cancelled"}),
            ]
            assert not cx.running_turns.running("s1")
            agent.resume[0].set()
            assert await client.receive() == result(3, {"stopReason": "end_turn"})
    assert not cx.running_turns.running("s2")


async def test_an_agent_with_its_own_session_cancel_handler_takes_over() -> None:
    """Its handler decides: here the turn ends with the partial work as ``end_turn``."""

    class OwnCancel(v1.AgentHandler):
        def __init__(self) -> None:
            self.stop = anyio.Event()

        async def cancel(self, params: v1.CancelNotification, cx: object) -> None:
            self.stop.set()

        async def prompt(
            self, params: v1.PromptRequest, responder: Responder[v1.PromptResponse]
        ) -> v1.PromptResponse:
            await self.stop.wait()
            await responder.connection.send_notification(_update("partial"))
            return v1.PromptResponse(stop_reason="end_turn")

    async with wire_connection(_agent(OwnCancel())) as (_cx, client):
        await client.send(request(1, "session/prompt", PROMPT))
        await client.send(CANCEL)
        with anyio.fail_after(5):
            assert (await client.receive())["method"] == "session/update"
            assert await client.receive() == result(1, {"stopReason": "end_turn"})


async def test_a_prompt_handler_may_catch_the_cancellation_and_answer_itself() -> None:
    class Partial(v1.AgentHandler):
        async def prompt(
            self, params: v1.PromptRequest, responder: Responder[v1.PromptResponse]
        ) -> v1.PromptResponse:
            try:
                await anyio.sleep_forever()
            except anyio.get_cancelled_exc_class():
                responder.respond(v1.PromptResponse(stop_reason="max_tokens"))
                raise
            raise AssertionError("not reached")

    async with wire_connection(_agent(Partial())) as (_cx, client):
        await client.send(request(1, "session/prompt", PROMPT))
        await client.send(CANCEL)
        with anyio.fail_after(5):
            assert await client.receive() == result(1, {"stopReason": "max_tokens"})


async def test_v2_session_cancel_drops_a_prompt_not_yet_inserted_with_32800() -> None:
    """V2-1: a v2 prompt answers once the message is inserted; one still in its handler
    when ``session/cancel`` comes is dropped, and its result type has no stop reason."""

    class Waiting(v2.AgentHandler):
        async def prompt(
            self, params: v2.PromptRequest, responder: Responder[v2.PromptResponse]
        ) -> v2.PromptResponse:
            await anyio.sleep_forever()
            raise AssertionError("not reached")

    builder = ConnectionBuilder(role="agent")
    Waiting().attach(builder)
    v2_prompt = {**PROMPT, "messageId": "m1"}
    async with wire_connection(builder) as (_cx, client):
        await client.send(request(1, "session/prompt", v2_prompt))
        await client.send(CANCEL)
        with anyio.fail_after(5):
            assert await client.receive() == error(1, -32800, "Request cancelled")


# -- client side -------------------------------------------------------------------------


async def test_cancelling_a_typed_prompt_also_sends_session_cancel() -> None:
    async with wire_connection(ConnectionBuilder(role="client")) as (cx, agent):
        sent = v1.RemoteAgent(cx).prompt(
            session_id="s1", prompt=[v1.TextContentBlock(type="text", text="hi")]
        )
        with anyio.fail_after(5):
            assert (await agent.receive())["method"] == "session/prompt"
            sent.cancel()
            sent.cancel()  # once only (OUT-4), both notifications
            assert await agent.receive() == notification("$/cancel_request", {"requestId": sent.id})
            assert await agent.receive() == CANCEL
            await agent.receive_nothing_until_barrier()


async def test_abandoning_a_typed_prompt_also_sends_session_cancel() -> None:
    async with wire_connection(ConnectionBuilder(role="client")) as (cx, agent):
        remote = v1.RemoteAgent(cx)
        with anyio.fail_after(5):
            with anyio.move_on_after(0.05):
                await remote.prompt(session_id="s1", prompt=[])
            request_id = (await agent.receive())["id"]
            assert await agent.receive() == notification(
                "$/cancel_request", {"requestId": request_id}
            )
            assert await agent.receive() == CANCEL


async def _answer_only_on_session_cancel(agent: object, answered: list[str]) -> None:
    """A peer like codex-acp: ignores ``$/cancel_request``, stops on ``session/cancel``."""
    from acp_runtime.testing import WirePeer

    assert isinstance(agent, WirePeer)
    prompt = await agent.receive()
    assert prompt["method"] == "session/prompt"
    while True:
        message = await agent.receive()
        answered.append(message["method"])
        if message["method"] == "session/cancel":
            await agent.send(result(prompt["id"], {"stopReason": "cancelled"}))
            return


async def test_cancel_after_waits_cancels_both_ways_and_returns_the_real_answer() -> None:
    seen: list[str] = []
    async with wire_connection(ConnectionBuilder(role="client")) as (cx, agent):
        async with anyio.create_task_group() as tg:
            tg.start_soon(_answer_only_on_session_cancel, agent, seen)
            with anyio.fail_after(5):
                response = (
                    await v1.RemoteAgent(cx).prompt(session_id="s1", prompt=[]).cancel_after(0.05)
                )
    assert response.stop_reason == "cancelled"
    assert seen == ["$/cancel_request", "session/cancel"]


async def test_cancel_after_returns_an_answer_in_time_without_cancelling() -> None:
    async with wire_connection(ConnectionBuilder(role="client")) as (cx, agent):
        sent = v1.RemoteAgent(cx).prompt(session_id="s1", prompt=[])
        with anyio.fail_after(5):
            async with anyio.create_task_group() as tg:

                async def answer() -> None:
                    prompt = await agent.receive()
                    await agent.send(result(prompt["id"], {"stopReason": "end_turn"}))

                tg.start_soon(answer)
                response = await sent.cancel_after(5)
            await agent.receive_nothing_until_barrier()
    assert response.stop_reason == "end_turn"


async def test_cancel_after_between_our_client_and_agent_ends_the_turn_cancelled() -> None:
    """End to end on typed classes: no PromptTurns, no second task."""
    agent = SlowAgent()
    updates: list[str] = []

    class Client(v1.ClientHandler):
        async def session_update(self, params: v1.SessionNotification, cx: object) -> None:
            updates.append(params.update.session_update)

    client_builder = ConnectionBuilder(role="client")
    Client().attach(client_builder)
    ours, theirs = memory_pair()
    async with anyio.create_task_group() as tg:
        tg.start_soon(_agent(agent).serve, theirs)
        async with client_builder.connect(ours) as cx:
            with anyio.fail_after(5):
                response = (
                    await v1.RemoteAgent(cx).prompt(session_id="s1", prompt=[]).cancel_after(0.1)
                )
        tg.cancel_scope.cancel()
    assert response.stop_reason == "cancelled"
    assert updates == ["agent_message_chunk"]  # handled before the answer settled
    assert agent.finished_cleanup


async def test_work_spawned_by_a_notification_after_a_hand_over_is_not_the_waiting_turns() -> None:
    """Once a prompt handler has handed the reading over, the new reader's notification
    handlers spawn work of no request: its failure is logged, it does not answer the
    waiting prompt."""
    release = anyio.Event()

    async def prompt(
        params: v1.PromptRequest, responder: Responder[v1.PromptResponse]
    ) -> v1.PromptResponse:
        await release.wait()
        return v1.PromptResponse(stop_reason="end_turn")

    async def fail() -> None:
        raise RuntimeError("spawned work failed")

    async def on_notification(method: str, params: object, cx: Connection) -> None:
        cx.spawn(fail)
        release.set()

    builder = ConnectionBuilder(role="agent")
    builder.on_request(v1.methods.SESSION_PROMPT, prompt)
    builder.on_raw_notification(on_notification)
    async with wire_connection(builder) as (_cx, client):
        with anyio.fail_after(5):
            await client.send(request(1, "session/prompt", PROMPT))
            await client.send(notification("_test/spawn", {}))
            assert await client.receive() == result(1, {"stopReason": "end_turn"})
