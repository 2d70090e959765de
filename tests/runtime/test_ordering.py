"""Ordering: one dispatch loop, handlers in arrival order, long work spawned (IN-5)."""

from __future__ import annotations

from typing import Any

import anyio
import pytest

from acp_runtime import (
    Connection,
    ConnectionBuilder,
    DeadlockError,
    JsonValue,
    RequestError,
    Responder,
)
from acp_runtime.testing import wire_connection

from .helpers import cancel, error, notification, request, result

pytestmark = pytest.mark.anyio

DEADLOCK_PROBE_SECONDS = 0.3
"""How long the IN-5 test lets an inline handler wait for a cancel that cannot arrive."""


async def test_handlers_run_one_at_a_time_in_arrival_order() -> None:
    events: list[str] = []

    async def on_request(
        method: str, params: JsonValue, responder: Responder[JsonValue]
    ) -> JsonValue:
        events.append(f"start {method}")
        await anyio.lowlevel.checkpoint()  # yielding does not let the next message in
        events.append(f"end {method}")
        return method

    async def on_notification(method: str, params: JsonValue, cx: Connection) -> None:
        events.append(f"note {method}")

    builder = ConnectionBuilder().on_raw_request(on_request).on_raw_notification(on_notification)
    async with wire_connection(builder) as (_cx, peer):
        await peer.send(request(1, "a"))
        await peer.send(notification("n1"))
        await peer.send(request(2, "b"))
        await peer.send(notification("n2"))
        replies = [await peer.receive(), await peer.receive()]
        await peer.barrier()
    assert replies == [result(1, "a"), result(2, "b")]
    assert events == ["start a", "end a", "note n1", "start b", "end b", "note n2"]


async def test_in5_inline_handler_never_sees_its_cancel_but_spawned_work_does() -> None:
    """IN-5: a handler that waits for its own cancellation inside the dispatch loop holds
    the loop, so the ``$/cancel_request`` behind it is never read: deadlock (time-boxed
    here). The same wait in ``cx.spawn`` sees the cancel at once."""
    inline_saw_cancel: list[bool] = []

    async def inline(method: str, params: JsonValue, responder: Responder[JsonValue]) -> JsonValue:
        if method == "inline":
            with anyio.move_on_after(DEADLOCK_PROBE_SECONDS):
                await responder.cancellation.cancelled()
            inline_saw_cancel.append(responder.cancellation.is_cancelled())
            return "timed out waiting"
        responder.connection.spawn(
            responder.respond_with,
            responder.cancellation.run_until_cancelled(anyio.sleep_forever()),
        )
        return None

    async with wire_connection(ConnectionBuilder().on_raw_request(inline)) as (_cx, peer):
        await peer.send(request(1, "inline"))
        await peer.send(cancel(1))
        assert await peer.receive() == result(1, "timed out waiting")
        assert inline_saw_cancel == [False]

        await peer.send(request(2, "spawned"))
        await peer.send(cancel(2))
        with anyio.fail_after(5):
            assert await peer.receive() == error(2, -32800, "Request cancelled")


async def test_result_callback_runs_in_order_with_incoming_messages() -> None:
    """The on_receiving_result callback of a response runs before the next message is
    dispatched (it holds the loop like a handler)."""
    events: list[str] = []

    async def on_notification(method: str, params: JsonValue, cx: Connection) -> None:
        events.append(f"note {method}")

    async with wire_connection(ConnectionBuilder().on_raw_notification(on_notification)) as (
        cx,
        peer,
    ):
        sent = cx.send_raw_request("x")

        async def on_result(value: JsonValue | RequestError) -> None:
            events.append("callback start")
            await anyio.lowlevel.checkpoint()
            events.append(f"callback end {value}")

        sent.on_receiving_result(on_result)
        await peer.receive()
        await peer.send(notification("before"))
        await peer.send(result(sent.id, "r"))
        await peer.send(notification("after"))
        await peer.barrier()
    assert events == ["note before", "callback start", "callback end r", "note after"]


async def test_awaiting_a_request_inside_a_handler_raises_deadlock_error_at_once() -> None:
    """IN-5 corollary (issue #15 trap 1): a handler that awaits its own outgoing request
    inline could never get the response (the loop is busy running the handler), so the
    await raises :class:`DeadlockError` at once instead of hanging; spawned, it works."""
    outcomes: list[Any] = []

    async def handler(method: str, params: JsonValue, responder: Responder[JsonValue]) -> JsonValue:
        sent = responder.connection.send_raw_request("sub")
        if method == "inline":
            with anyio.fail_after(DEADLOCK_PROBE_SECONDS):
                try:
                    await sent
                except DeadlockError as error:
                    outcomes.append(str(error))
            return "refused"

        async def work() -> None:
            responder.respond(await sent)

        responder.connection.spawn(work)
        return None

    async with wire_connection(ConnectionBuilder().on_raw_request(handler)) as (_cx, peer):
        await peer.send(request(1, "inline"))
        sub = await peer.receive()
        assert sub["method"] == "sub"
        # The refused await leaves the request unconsumed: dropped with the handler's
        # frame, it is cancelled (OUT-5), before or after the answer as the backend runs it.
        later = [await peer.receive(), await peer.receive()]
        assert sorted(map(repr, later)) == sorted(
            map(repr, [cancel(sub["id"]), result(1, "refused")])
        )
        assert len(outcomes) == 1 and "spawn" in outcomes[0]

        await peer.send(request(2, "spawned"))
        sub = await peer.receive()
        await peer.send(result(sub["id"], "sub-result"))
        assert await peer.receive() == result(2, "sub-result")
