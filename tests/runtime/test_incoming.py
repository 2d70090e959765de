"""Incoming requests: cancellation markers and exactly-one response (DESIGN.md IN-1..IN-6)."""

from __future__ import annotations

import gc
from collections.abc import Awaitable, Callable
from typing import Any

import anyio
import pytest

from acp_runtime import (
    CancellationMarker,
    Connection,
    ConnectionBuilder,
    JsonValue,
    NotificationMethod,
    RequestError,
    Responder,
)
from acp_runtime.testing import wire_connection

from .helpers import ASK, CANCEL, Answer, Ask, Parking, cancel, error, notification, request, result

pytestmark = pytest.mark.anyio


class CancelParams:
    """Stand-in for the generated ``CancelRequestNotification`` params model."""


async def test_in1_marker_is_set_by_cancel_request_and_run_until_cancelled_yields_32800() -> None:
    """IN-1: the marker flips on ``$/cancel_request``; run_until_cancelled stops the work and
    yields the standard -32800 to answer with."""
    stopped = anyio.Event()
    forever = anyio.Event()

    async def work() -> Answer:
        try:
            await forever.wait()
        finally:
            stopped.set()
        return Answer(text="never")

    async def handle(params: Ask, responder: Responder[Answer]) -> None:
        assert not responder.cancellation.is_cancelled()
        responder.connection.spawn(
            responder.respond_with, responder.cancellation.run_until_cancelled(work())
        )

    async with wire_connection(ConnectionBuilder("agent").on_request(ASK, handle)) as (_cx, peer):
        await peer.send(request(7, params={"question": "q"}))
        await peer.barrier()
        await peer.send(cancel(7))
        assert await peer.receive() == error(7, -32800, "Request cancelled")
        assert stopped.is_set()


async def test_in1_cancelled_waiters_wake_and_late_marker_reads_are_cancelled() -> None:
    """IN-1: ``await cancelled()`` wakes every waiter; is_cancelled stays true."""
    woke: list[int] = []
    markers: list[CancellationMarker] = []

    async def handle(method: str, params: JsonValue, responder: Responder[JsonValue]) -> None:
        marker = responder.cancellation
        markers.append(marker)

        async def wait(n: int) -> None:
            await marker.cancelled()
            woke.append(n)
            if n == 2:
                responder.respond_with_error(RequestError.request_cancelled())

        for n in range(3):
            responder.connection.spawn(wait, n)

    async with wire_connection(ConnectionBuilder().on_raw_request(handle)) as (_cx, peer):
        await peer.send(request("r", "x"))
        await peer.barrier()
        await peer.send(cancel("r"))
        assert await peer.receive() == error("r", -32800, "Request cancelled")
        assert markers[0].is_cancelled()
        await markers[0].cancelled()  # already set: returns at once
        assert sorted(woke) == [0, 1, 2]


async def test_in1_run_until_cancelled_on_a_set_marker_never_starts_the_work() -> None:
    """IN-1: with the marker already set, the work is not started (no coroutine warning)."""
    started: list[bool] = []

    async def work() -> None:
        started.append(True)

    async def handle(method: str, params: JsonValue, responder: Responder[JsonValue]) -> JsonValue:
        if method == "park":
            responder.connection.spawn(park_then_run, responder)
            return None
        return "ok"

    gate = anyio.Event()

    async def park_then_run(responder: Responder[JsonValue]) -> None:
        await gate.wait()
        await responder.respond_with(responder.cancellation.run_until_cancelled(work()))

    async with wire_connection(ConnectionBuilder().on_raw_request(handle)) as (_cx, peer):
        await peer.send(request(1, "park"))
        await peer.send(cancel(1))
        await peer.barrier()
        gate.set()
        assert await peer.receive() == error(1, -32800, "Request cancelled")
        assert started == []


async def test_in2_marker_is_updated_before_a_user_cancel_handler_runs() -> None:
    """IN-2: a user ``$/cancel_request`` handler observes; the marker is already set."""
    seen: list[tuple[JsonValue, bool]] = []
    responders: dict[JsonValue, Responder[JsonValue]] = {}

    async def park(method: str, params: JsonValue, responder: Responder[JsonValue]) -> None:
        responders[responder.id] = responder

    async def observe(method: str, params: JsonValue, cx: Connection) -> None:
        assert isinstance(params, dict)
        request_id = params["requestId"]
        seen.append((request_id, responders[request_id].cancellation.is_cancelled()))

    builder = ConnectionBuilder().on_raw_request(park).on_raw_notification(observe)
    async with wire_connection(builder) as (_cx, peer):
        await peer.send(request(5, "x"))
        await peer.send(cancel(5))
        await peer.barrier()
        assert seen == [(5, True)]
        responders[5].respond("done")
        assert await peer.receive() == result(5, "done")


async def test_in2_typed_cancel_handler_observes_and_does_not_replace_builtin_handling() -> None:
    """IN-2: a typed binding for ``$/cancel_request`` (side "protocol") sees every cancel."""
    from pydantic import BaseModel, ConfigDict, Field

    class CancelRequest(BaseModel):
        model_config = ConfigDict(populate_by_name=True)
        request_id: int | str | None = Field(alias="requestId")

    cancel_binding: NotificationMethod[CancelRequest] = NotificationMethod(
        CANCEL, CancelRequest, side="protocol"
    )
    observed: list[JsonValue] = []
    parking = Parking()

    async def on_cancel(params: CancelRequest, cx: Connection) -> None:
        observed.append(params.request_id)

    builder = ConnectionBuilder("agent").on_raw_request(parking.handle)
    builder.on_notification(cancel_binding, on_cancel)
    async with wire_connection(builder) as (_cx, peer):
        await peer.send(request(3, "x"))
        responder = await parking.parked("x")
        await peer.send(cancel(3))
        await peer.send(cancel(3))  # duplicates reach the observer too
        await peer.barrier()
        assert observed == [3, 3]
        assert responder.cancellation.is_cancelled()
        responder.respond_with_error(RequestError.request_cancelled())
        assert await peer.receive() == error(3, -32800, "Request cancelled")


@pytest.mark.parametrize(
    "params",
    [None, [], {}, {"requestId": True}, {"requestId": {"x": 1}}, {"requestId": 1.5}, {"id": 1}],
    ids=["missing", "array", "empty", "bool", "object", "float", "wrong-key"],
)
async def test_in3_malformed_cancel_is_ignored_unanswered_and_skips_handlers(
    params: JsonValue,
) -> None:
    """IN-3: malformed params are logged and ignored; no reply; user handlers not invoked."""
    parking = Parking()
    async with wire_connection(parking.builder()) as (_cx, peer):
        await peer.send(request(1, "x"))
        responder = await parking.parked("x")
        await peer.send(notification(CANCEL, params))
        await peer.receive_nothing_until_barrier()
        assert parking.cancels_seen == []
        assert not responder.cancellation.is_cancelled()
        responder.respond(None)


async def test_in3_ids_match_by_exact_json_value() -> None:
    """IN-3: ``"5"`` does not cancel ``5``, ``true`` is not ``1``; null id matches null."""
    parking = Parking()
    markers: dict[str, CancellationMarker] = {}
    async with wire_connection(parking.builder()) as (_cx, peer):
        for request_id, name in ((5, "five"), (1, "one"), (None, "null"), ("7", "seven")):
            await peer.send(request(request_id, name))
            markers[name] = (await parking.parked(name)).cancellation
        await peer.send(cancel("5"))
        await peer.send(notification(CANCEL, {"requestId": True}))
        await peer.send(cancel(7))
        await peer.barrier()
        assert not any(marker.is_cancelled() for marker in markers.values())
        await peer.send(cancel(5))
        await peer.send(cancel(None))
        await peer.send(cancel("7"))
        await peer.barrier()
        assert {name for name, m in markers.items() if m.is_cancelled()} == {
            "five",
            "null",
            "seven",
        }
        for name in ("five", "one", "null", "seven"):
            parking.responders[name].respond(name)
        answers = [await peer.receive() for _ in range(4)]
        # Answers to cancelled requests go ahead of the rest (the outbox's urgent lane).
        assert answers == [
            result(5, "five"),
            result(None, "null"),
            result("7", "seven"),
            result(1, "one"),
        ]


async def test_in3_cancel_for_unknown_finished_or_future_id_is_not_remembered() -> None:
    """IN-3: unknown ids are ignored and not remembered, finished ones too."""
    parking = Parking()
    async with wire_connection(parking.builder()) as (cx, peer):
        await peer.send(cancel(9))  # arrives before its request
        await peer.send(request(9, "x"))
        responder = await parking.parked("x")
        await peer.receive_nothing_until_barrier()
        assert not responder.cancellation.is_cancelled()
        responder.respond("r")
        assert await peer.receive() == result(9, "r")
        await peer.send(cancel(9))  # finished
        await peer.receive_nothing_until_barrier()
        assert not responder.cancellation.is_cancelled()
        assert cx.incoming_request_count == 0


async def test_in3_duplicate_cancels_fire_the_marker_once() -> None:
    """IN-3: k cancels for one id: the marker callbacks fire once, no replies."""
    parking = Parking()
    async with wire_connection(parking.builder()) as (_cx, peer):
        await peer.send(request("a", "x"))
        responder = await parking.parked("x")
        fired: list[int] = []
        responder.cancellation._add_callback(lambda: fired.append(1))
        for _ in range(4):
            await peer.send(cancel("a"))
        await peer.receive_nothing_until_barrier()
        assert fired == [1]
        assert parking.cancels_seen == ["a"] * 4
        responder.respond(None)


async def test_in3_cancel_request_sent_as_a_request_is_not_a_cancellation() -> None:
    """IN-3/IN-4: ``$/cancel_request`` with an id is an ordinary request: it reaches the raw
    request fallback (which refuses it here) and the marker is untouched. Without a
    fallback the runtime itself answers -32601: the GAP-13 test below."""
    parking = Parking()
    builder = ConnectionBuilder().on_raw_notification(parking.observe_cancel)

    async def park(method: str, params: JsonValue, responder: Responder[JsonValue]) -> None:
        if method == CANCEL:
            raise RequestError.method_not_found(method)
        await parking.handle(method, params, responder)

    builder.on_raw_request(park)
    async with wire_connection(builder) as (_cx, peer):
        await peer.send(request(1, "x"))
        responder = await parking.parked("x")
        await peer.send(request(2, CANCEL, {"requestId": 1}))
        assert await peer.receive() == error(2, -32601, "Method not found", CANCEL)
        assert not responder.cancellation.is_cancelled()
        responder.respond(None)


async def test_in4_unhandled_notifications_are_ignored_and_unhandled_requests_get_32601() -> None:
    """IN-4: any unhandled notification (including other ``$/`` ones) is ignored."""
    async with wire_connection(ConnectionBuilder()) as (_cx, peer):
        await peer.send(notification("$/progress", {"x": 1}))
        await peer.send(notification("_vendor/thing"))
        await peer.send(notification("unknown/notification", [1, 2]))
        await peer.receive_nothing_until_barrier()
        await peer.send(request(0, "unknown/request"))
        assert await peer.receive() == error(0, -32601, "Method not found", "unknown/request")


async def test_in6_handler_answers_then_raises_gets_one_response() -> None:
    """IN-6: the first answer wins; the later exception is logged, not sent."""

    async def handle(method: str, params: JsonValue, responder: Responder[JsonValue]) -> JsonValue:
        responder.respond("first")
        raise RequestError.internal_error("second")

    async with wire_connection(ConnectionBuilder().on_raw_request(handle)) as (_cx, peer):
        await peer.send(request(1, "x"))
        assert await peer.receive() == result(1, "first")
        await peer.receive_nothing_until_barrier()


async def test_in6_double_respond_and_returned_value_after_respond_send_one_response() -> None:
    """IN-6: respond twice, or respond and return a value: one message."""

    async def handle(method: str, params: JsonValue, responder: Responder[JsonValue]) -> JsonValue:
        responder.respond(1)
        responder.respond(2)
        responder.respond_with_error(RequestError.request_cancelled())
        return 3

    async with wire_connection(ConnectionBuilder().on_raw_request(handle)) as (_cx, peer):
        await peer.send(request(1, "x"))
        assert await peer.receive() == result(1, 1)
        await peer.receive_nothing_until_barrier()


async def test_in6_cancel_after_the_handler_answered_is_ignored() -> None:
    """IN-6: a cancel racing a sent answer changes nothing and gets no reply."""

    async def handle(method: str, params: JsonValue, responder: Responder[JsonValue]) -> JsonValue:
        return "done"

    async with wire_connection(ConnectionBuilder().on_raw_request(handle)) as (_cx, peer):
        await peer.send(request(1, "x"))
        await peer.send(cancel(1))
        assert await peer.receive() == result(1, "done")
        await peer.receive_nothing_until_barrier()


async def test_in6_responder_dropped_unanswered_sends_32603() -> None:
    """IN-6: a responder collected without an answer answers -32603 (never a hang)."""

    async def forget(method: str, params: JsonValue, responder: Responder[JsonValue]) -> None:
        return None

    async with wire_connection(ConnectionBuilder().on_raw_request(forget)) as (_cx, peer):
        await peer.send(request("f", "forgetful"))
        gc.collect()
        reply = await peer.receive()
        assert reply["id"] == "f" and reply["error"]["code"] == -32603
        assert reply["error"]["data"] == {"reason": "responder_dropped", "method": "forgetful"}
        await peer.receive_nothing_until_barrier()


async def test_in6_cancel_and_close_racing_a_spawned_answer_give_at_most_one_response() -> None:
    """IN-6: cancel, then the spawned work answers, then the peer closes: one response."""
    release = anyio.Event()

    async def handle(method: str, params: JsonValue, responder: Responder[JsonValue]) -> None:
        async def work() -> None:
            await release.wait()
            responder.respond("result")
            responder.respond_with_error(RequestError.request_cancelled())

        responder.connection.spawn(work)

    got: list[Any] = []
    async with wire_connection(ConnectionBuilder().on_raw_request(handle)) as (_cx, peer):
        await peer.send(request(1, "x"))
        await peer.send(cancel(1))
        await peer.barrier()
        release.set()
        got.append(await peer.receive())
        await peer.receive_nothing_until_barrier()
    assert got == [result(1, "result")]


async def test_in1_reused_incoming_id_cancel_hits_the_newest_request() -> None:
    """IN-1/IN-3 with a misbehaving peer reusing an id in flight: the newest one is cancelled;
    finishing the stale one leaves the newest cancellable."""
    responders: list[Responder[JsonValue]] = []

    async def park(method: str, params: JsonValue, responder: Responder[JsonValue]) -> None:
        responders.append(responder)

    async with wire_connection(ConnectionBuilder().on_raw_request(park)) as (_cx, peer):
        await peer.send(request(4, "a"))
        await peer.send(request(4, "b"))
        await peer.barrier()
        old, new = responders
        old.respond("old")
        assert await peer.receive() == result(4, "old")
        await peer.send(cancel(4))
        await peer.barrier()
        assert new.cancellation.is_cancelled() and not old.cancellation.is_cancelled()
        new.respond("new")
        assert await peer.receive() == result(4, "new")


async def test_in3_gap13_cancel_request_sent_as_a_request_gets_32601_from_the_runtime() -> None:
    """IN-3/IN-4 (GAP-13): with no handler that claims it, a ``$/cancel_request`` carrying an
    id is an unhandled request: the runtime answers -32601 and no marker is touched."""
    responders: list[Responder[Answer]] = []

    async def park(params: Ask, responder: Responder[Answer]) -> None:
        responders.append(responder)

    async with wire_connection(ConnectionBuilder("agent").on_request(ASK, park)) as (_cx, peer):
        await peer.send(request(1, "test/ask", {"question": "q"}))
        await peer.send(request(2, CANCEL, {"requestId": 1}))
        assert await peer.receive() == error(2, -32601, "Method not found", CANCEL)
        assert not responders[0].cancellation.is_cancelled()
        await peer.send(cancel(1))  # the notification form does cancel it
        await peer.barrier()
        assert responders[0].cancellation.is_cancelled()
        responders[0].respond(Answer(text="done"))
        assert await peer.receive() == result(1, {"text": "done"})


async def test_in5_gap16_a_cancel_behind_a_busy_handler_applies_only_after_it_returns() -> None:
    """IN-5 (GAP-16): while one handler holds the dispatch loop, a cancel for an earlier
    request is not read; the marker flips as soon as that handler returns."""
    parked: dict[str, Responder[JsonValue]] = {}
    cancel_sent = anyio.Event()
    seen_while_busy: list[bool] = []

    async def handle(method: str, params: JsonValue, responder: Responder[JsonValue]) -> JsonValue:
        if method == "parked":
            parked[method] = responder
            return None
        with anyio.fail_after(5):
            await cancel_sent.wait()  # holds the loop until the cancel is in the pipe
        seen_while_busy.append(parked["parked"].cancellation.is_cancelled())
        return "busy done"

    async with wire_connection(ConnectionBuilder().on_raw_request(handle)) as (_cx, peer):
        await peer.send(request(1, "parked"))
        await peer.send(request(2, "busy"))
        await peer.send(cancel(1))
        cancel_sent.set()
        assert await peer.receive() == result(2, "busy done")
        await peer.barrier()
        assert seen_while_busy == [False]
        assert parked["parked"].cancellation.is_cancelled()
        parked["parked"].respond_with_error(RequestError.request_cancelled())
        assert await peer.receive() == error(1, -32800, "Request cancelled")


Plan = Callable[[Responder[JsonValue]], Awaitable[JsonValue]]


def _plans() -> dict[str, Plan]:
    """Every way a handler can end up answering (or failing to answer) its request."""

    async def returns(responder: Responder[JsonValue]) -> JsonValue:
        return "returned"

    async def raises(responder: Responder[JsonValue]) -> JsonValue:
        raise RuntimeError("handler failed")

    async def answers_then_raises(responder: Responder[JsonValue]) -> JsonValue:
        responder.respond("answered")
        raise RequestError.internal_error("too late")

    async def answers_then_returns(responder: Responder[JsonValue]) -> JsonValue:
        responder.respond("answered")
        return "returned too"

    async def forgets(responder: Responder[JsonValue]) -> JsonValue:
        return None  # the responder is collected unanswered

    async def spawns_run_until_cancelled(responder: Responder[JsonValue]) -> JsonValue:
        async def work() -> JsonValue:
            await anyio.sleep_forever()
            return None

        responder.connection.spawn(
            responder.respond_with, responder.cancellation.run_until_cancelled(work())
        )
        return None

    async def spawns_and_answers_twice_when_cancelled(
        responder: Responder[JsonValue],
    ) -> JsonValue:
        async def work() -> None:
            await responder.cancellation.cancelled()
            responder.respond_with_error(RequestError.request_cancelled())
            responder.respond("after the error")

        responder.connection.spawn(work)
        return None

    return {
        plan.__name__: plan
        for plan in (
            returns,
            raises,
            answers_then_raises,
            answers_then_returns,
            forgets,
            spawns_run_until_cancelled,
            spawns_and_answers_twice_when_cancelled,
        )
    }


async def test_in6_exactly_one_response_per_request_whatever_races_with_it() -> None:
    """IN-6: every handler outcome (return, raise, answer then raise or return, forget the
    responder, spawned work that answers on cancel, once or twice) combined with a cancel
    that arrives never, before, twice or long after the answer: exactly one response per
    id, and the registry of in-flight requests ends empty."""
    plans = _plans()
    timings = ("no-cancel", "cancel-before-answer", "cancel-twice", "cancel-after-answer")
    needs_cancel = {"spawns_run_until_cancelled", "spawns_and_answers_twice_when_cancelled"}

    async def handle(method: str, params: JsonValue, responder: Responder[JsonValue]) -> JsonValue:
        return await plans[method](responder)

    async with wire_connection(ConnectionBuilder().on_raw_request(handle)) as (cx, peer):
        ids: list[str] = []
        for plan in plans:
            for timing in timings:
                if plan in needs_cancel and timing in ("no-cancel", "cancel-after-answer"):
                    continue  # they only answer when cancelled
                request_id = f"{plan}/{timing}"
                ids.append(request_id)
                await peer.send(request(request_id, plan))
                if timing in ("cancel-before-answer", "cancel-twice"):
                    await peer.send(cancel(request_id))
                if timing == "cancel-twice":
                    await peer.send(cancel(request_id))
        await peer.barrier()  # every handler has run
        gc.collect()  # forgotten responders answer -32603 from here on
        replies = list(peer.log)
        while len(replies) < len(ids):
            replies.append(await peer.receive())
        for request_id in ids:
            if request_id.endswith("cancel-after-answer"):
                await peer.send(cancel(request_id))
        await peer.receive_nothing_until_barrier()
        by_id: dict[str, list[Any]] = {}
        for reply in replies:
            by_id.setdefault(reply["id"], []).append(reply)
        assert {request_id: len(by_id.get(request_id, [])) for request_id in ids} == {
            request_id: 1 for request_id in ids
        }
        assert by_id["returns/cancel-before-answer"][0]["result"] == "returned"
        assert by_id["answers_then_raises/no-cancel"][0]["result"] == "answered"
        assert by_id["raises/no-cancel"][0]["error"]["code"] == -32603
        assert by_id["forgets/no-cancel"][0]["error"]["data"]["reason"] == "responder_dropped"
        assert by_id["spawns_and_answers_twice_when_cancelled/cancel-twice"][0]["error"] == {
            "code": -32800,
            "message": "Request cancelled",
        }
        assert cx.incoming_request_count == 0
