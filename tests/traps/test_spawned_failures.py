"""Issue #15 trap 5: a failure escaping spawned work answers its request; the connection lives.

Before, a ``RequestError`` escaping spawned work (the literal port of the seed's
``respond_with_result(run_until_cancelled(work).await)``) ended the whole connection,
every session with it, and the peer saw -32603 instead of -32800.
"""

from __future__ import annotations

import gc
import logging

import anyio
import pytest

from acp_runtime import ConnectionBuilder, JsonValue, RequestError, Responder
from acp_runtime.testing import cancel, error, request, result, wire_connection

pytestmark = pytest.mark.anyio


def builder_with(work_for: dict[str, object]) -> ConnectionBuilder:
    """A raw handler that spawns ``work_for[method](responder)`` and returns."""

    async def handle(method: str, params: JsonValue, responder: Responder[JsonValue]) -> None:
        if method == "ping":
            responder.respond("pong")
            return
        responder.connection.spawn(work_for[method], responder)  # type: ignore[arg-type]

    return ConnectionBuilder().on_raw_request(handle)


async def cancellable_turn(responder: Responder[JsonValue]) -> None:
    """The seed's pattern, ported literally: the -32800 escapes the spawned work."""
    outcome = await responder.cancellation.run_until_cancelled(anyio.sleep_forever())
    responder.respond(outcome)


async def broken_turn(responder: Responder[JsonValue]) -> None:
    raise ValueError("secret internals /home/user/.token")


async def answered_then_broken(responder: Responder[JsonValue]) -> None:
    responder.respond("done")
    raise ValueError("after the answer")


async def test_a_cancelled_turn_answers_32800_and_the_connection_goes_on() -> None:
    async with wire_connection(builder_with({"turn": cancellable_turn})) as (_, peer):
        await peer.send(request(1, "turn"))
        await peer.receive_nothing_until_barrier()  # the turn is running
        await peer.send(cancel(1))
        with anyio.fail_after(5):
            assert await peer.receive() == error(1, -32800, "Request cancelled")
            await peer.send(request(2, "ping"))
            assert await peer.receive() == result(2, "pong")


async def test_any_other_failure_answers_32603_naming_the_method_and_is_logged(
    caplog: pytest.LogCaptureFixture,
) -> None:
    with caplog.at_level(logging.ERROR, logger="acp_runtime"):
        async with wire_connection(builder_with({"turn": broken_turn})) as (_, peer):
            await peer.send(request(1, "turn"))
            with anyio.fail_after(5):
                answer = await peer.receive()
                await peer.send(request(2, "ping"))
                assert await peer.receive() == result(2, "pong")
    assert answer == error(1, -32603, "Internal error in turn")  # nothing of the failure leaks
    records = [r for r in caplog.records if "broken_turn" in r.getMessage()]
    assert records and records[0].exc_info is not None
    assert "turn" in records[0].getMessage() and "answering -32603" in records[0].getMessage()


async def test_a_failure_after_the_answer_is_logged_and_not_answered_twice(
    caplog: pytest.LogCaptureFixture,
) -> None:
    with caplog.at_level(logging.ERROR, logger="acp_runtime"):
        async with wire_connection(builder_with({"turn": answered_then_broken})) as (_, peer):
            await peer.send(request(1, "turn"))
            with anyio.fail_after(5):
                assert await peer.receive() == result(1, "done")
                await peer.receive_nothing_until_barrier()
    assert any("after the answer" in r.getMessage() for r in caplog.records)


async def test_work_spawned_outside_a_handler_fails_alone(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """No request to answer: logged, and the connection still serves the peer."""

    async def boom() -> None:
        raise ValueError("spawned failure")

    with caplog.at_level(logging.ERROR, logger="acp_runtime"):
        async with wire_connection(builder_with({})) as (cx, peer):
            cx.spawn(boom)
            await peer.send(request(1, "ping"))
            with anyio.fail_after(5):
                assert await peer.receive() == result(1, "pong")
    assert any("boom" in r.getMessage() and r.exc_info for r in caplog.records)


async def test_a_dropped_responder_answers_32603() -> None:
    """Trap 5's other half: a responder dropped unanswered does not leave the peer waiting."""

    async def drop(method: str, params: JsonValue, responder: Responder[JsonValue]) -> None:
        responder.connection.spawn(lose, responder)

    async def lose(responder: Responder[JsonValue]) -> None:
        del responder
        gc.collect()

    async with wire_connection(ConnectionBuilder().on_raw_request(drop)) as (_, peer):
        await peer.send(request(4, "lost"))
        with anyio.fail_after(5):
            answer = await peer.receive()
    assert answer["id"] == 4 and answer["error"]["code"] == -32603
    assert answer["error"]["data"]["reason"] == "responder_dropped"


async def test_a_request_error_raised_by_spawned_work_is_answered_as_itself() -> None:
    async def refuse(responder: Responder[JsonValue]) -> None:
        raise RequestError.invalid_params({"field": "path"})

    async with wire_connection(builder_with({"turn": refuse})) as (_, peer):
        await peer.send(request(1, "turn"))
        with anyio.fail_after(5):
            assert await peer.receive() == error(1, -32602, "Invalid params", {"field": "path"})
