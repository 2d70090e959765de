"""Ordering: one dispatch loop, inline handlers in arrival order, long work spawned, typed
request handlers started in order in tasks of their own (IN-5)."""

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

from .helpers import ASK, Answer, Ask, cancel, error, notification, request, result

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


# -- typed request handlers run off the loop (issue 33) --------------------------------------


def _asking(events: list[str], release: anyio.Event | None = None) -> ConnectionBuilder:
    """A builder whose typed ``test/ask`` handler records its start, then either awaits
    a ``sub`` request to the peer (``release`` None) or waits for ``release``."""

    async def ask(params: Ask, responder: Responder[Answer]) -> Answer:
        events.append(f"start {params.question}")
        if release is not None:
            await release.wait()
            return Answer(text=params.question)
        sub = await responder.connection.send_raw_request("sub")
        events.append(f"resumed {params.question}")
        return Answer(text=f"{sub} cancelled={responder.cancellation.is_cancelled()}")

    async def note(method: str, params: JsonValue, cx: Connection) -> None:
        events.append(f"note {method}")

    return ConnectionBuilder().on_request(ASK, ask).on_raw_notification(note)


async def test_a_typed_handler_awaiting_the_peer_sees_its_cancel_arrive() -> None:
    """IN-5 off the loop: while the handler awaits the peer, the loop goes on reading, so
    the ``$/cancel_request`` for it sets its marker before the awaited answer arrives."""
    events: list[str] = []
    async with wire_connection(_asking(events)) as (_cx, peer):
        await peer.send(request(1, "test/ask", {"question": "a"}))
        with anyio.fail_after(5):
            sub = await peer.receive()
            assert sub["method"] == "sub"
            await peer.send(cancel(1))
            await peer.send(result(sub["id"], "r"))
            assert await peer.receive() == result(1, {"text": "r cancelled=True"})
    assert events == ["start a", "note $/cancel_request", "resumed a"]


async def test_typed_handlers_start_in_arrival_order_before_the_next_message() -> None:
    """Each handler runs up to its first suspension before the loop reads on: the order
    of starts and inline notifications is the arrival order."""
    events: list[str] = []
    release = anyio.Event()
    async with wire_connection(_asking(events, release)) as (_cx, peer):
        for message in (
            request(1, "test/ask", {"question": "a"}),
            notification("n1"),
            request(2, "test/ask", {"question": "b"}),
            notification("n2"),
        ):
            await peer.send(message)
        await peer.barrier()
        assert events == ["start a", "note n1", "start b", "note n2"]
        release.set()
        with anyio.fail_after(5):
            replies = [await peer.receive(), await peer.receive()]
    assert sorted(map(repr, replies)) == sorted(
        map(repr, [result(1, {"text": "a"}), result(2, {"text": "b"})])
    )


async def test_notifications_sent_before_a_response_are_handled_before_the_handler_resumes() -> (
    None
):
    """The awaited answer is routed inline, in arrival order: what the peer sent before it
    (a ``session/update``, say) has been handled when the handler's ``await`` returns."""
    events: list[str] = []
    async with wire_connection(_asking(events)) as (_cx, peer):
        await peer.send(request(1, "test/ask", {"question": "a"}))
        with anyio.fail_after(5):
            sub = await peer.receive()
            await peer.send(notification("u1"))
            await peer.send(notification("u2"))
            await peer.send(result(sub["id"], "r"))
            assert await peer.receive() == result(1, {"text": "r cancelled=False"})
    assert events == ["start a", "note u1", "note u2", "resumed a"]


async def test_a_slow_request_handler_does_not_hold_notifications() -> None:
    """A handler waiting for something only a later notification brings gets it: the
    loop is not held by the handler, as it is by an inline one."""
    events: list[str] = []
    release = anyio.Event()

    async def note(method: str, params: JsonValue, cx: Connection) -> None:
        events.append(f"note {method}")
        release.set()

    async def ask(params: Ask, responder: Responder[Answer]) -> Answer:
        events.append("start")
        await release.wait()
        events.append("released")
        return Answer(text="done")

    builder = ConnectionBuilder().on_request(ASK, ask).on_raw_notification(note)
    async with wire_connection(builder) as (_cx, peer):
        await peer.send(request(1, "test/ask", {"question": "a"}))
        await peer.send(notification("go"))
        with anyio.fail_after(5):
            assert await peer.receive() == result(1, {"text": "done"})
    assert events == ["start", "note go", "released"]
