"""The ``_proxy/successor`` envelope: outgoing wrapping of requests and their cancels
(OUT-2, PROXY-1), incoming peeling for the cancellation markers (IN-2), and
:class:`ConductedProxy`, a proxy run by a conductor over one connection."""

from __future__ import annotations

from typing import Any

import anyio
import pytest

from acp_runtime import Connection, ConnectionBuilder, JsonValue, Responder
from acp_runtime._successor import (
    MAX_ENVELOPE_DEPTH,
    Envelope,
    is_cancel_request,
    open_envelope,
    peel_envelopes,
    wrap_successor,
)
from acp_runtime.proxies import SUCCESSOR, ConductedProxy, SuccessorPeer
from acp_runtime.testing import wire_connection

from .helpers import ASK, CANCELLED, Ask, cancel, error, notification, request, result

pytestmark = pytest.mark.anyio

SUCC = "_proxy/successor"


def wrapped(message: dict[str, Any]) -> dict[str, Any]:
    """``message`` (a request or notification) inside one successor envelope."""
    inner: dict[str, Any] = {"method": message["method"]}
    if "params" in message:
        inner["params"] = message["params"]
    outer: dict[str, Any] = {"jsonrpc": "2.0", "method": SUCC, "params": inner}
    if "id" in message:
        outer = {"jsonrpc": "2.0", "id": message["id"], "method": SUCC, "params": inner}
    return outer


# -- the envelope itself ---------------------------------------------------------------------


def test_wire2_wrapped_cancel_shape() -> None:
    """WIRE-2: the exact envelope of a wrapped cancel."""
    assert wrap_successor("$/cancel_request", {"requestId": 7}) == (
        SUCC,
        {"method": "$/cancel_request", "params": {"requestId": 7}},
    )
    assert wrap_successor("x", None, meta={"trace": 1}) == (
        SUCC,
        {"method": "x", "_meta": {"trace": 1}},
    )


def test_peeling_nested_meta_alias_and_malformed_envelopes() -> None:
    """IN-2 prerequisites: nested envelopes peel to the innermost message; ``meta`` reads as
    ``_meta``; malformed envelopes are not envelopes (left for the handlers)."""
    method, params = wrap_successor(*wrap_successor("$/cancel_request", {"requestId": "r"}))
    assert peel_envelopes(method, params) == ("$/cancel_request", {"requestId": "r"})
    assert is_cancel_request(method, params)
    assert open_envelope(SUCC, {"method": "m", "meta": {"k": 1}}) == Envelope("m", None, {"k": 1})
    assert open_envelope("proxy/successor", {"method": "m", "params": []}) == Envelope("m", [])
    malformed: list[JsonValue] = [
        {"bogus": True},
        {"method": 3},
        {"method": "m", "params": 5},
        [],
        None,
    ]
    for bad in malformed:
        assert open_envelope(SUCC, bad) is None
        assert peel_envelopes(SUCC, bad) == (SUCC, bad)
    assert not is_cancel_request(SUCC, {"method": "session/update", "params": {}})
    assert not is_cancel_request("other", {"method": "$/cancel_request", "params": {}})


def test_peeling_is_bounded() -> None:
    """A pathological nest stops at MAX_ENVELOPE_DEPTH instead of recursing without end."""
    method: str = "$/cancel_request"
    params: JsonValue = {"requestId": 1}
    for _ in range(MAX_ENVELOPE_DEPTH + 1):
        method, params = wrap_successor(method, params)
    assert peel_envelopes(method, params)[0] == SUCC


# -- outgoing: the SentRequest remembers the wrapping (OUT-2) --------------------------------


async def test_out2_request_to_successor_and_its_cancel_use_the_same_envelope_and_outer_id() -> (
    None
):
    """OUT-2/WIRE-2: ``send_request_to(SUCCESSOR, ...)`` wraps the request; ``cancel()``
    sends exactly one wrapped cancel whose requestId is the outer id, and no plain one."""
    async with wire_connection(ConnectionBuilder()) as (cx, peer):
        sent = cx.send_request_to(SUCCESSOR, ASK, Ask(question="q"))
        assert await peer.receive() == wrapped(request(sent.id, "test/ask", {"question": "q"}))
        sent.cancel()
        sent.cancel()  # once-only (OUT-4)
        assert await peer.receive() == wrapped(cancel(sent.id))
        await peer.send(error(sent.id, *CANCELLED))
        with anyio.fail_after(5), pytest.raises(Exception) as caught:
            await sent
        assert getattr(caught.value, "code", None) == -32800
        await peer.receive_nothing_until_barrier()


async def test_out2_handle_and_low_level_cancel_follow_the_peer_wrapping() -> None:
    """OUT-2/PROXY-5: a cancellation handle of a successor request, and
    ``send_cancel_request_to(SUCCESSOR, id)``, both send the wrapped cancel."""
    async with wire_connection(ConnectionBuilder()) as (cx, peer):
        sent = cx.send_raw_request("x", {"a": 1}, peer=SUCCESSOR)
        handle = sent.cancellation_handle()
        sent.detach()
        await peer.receive()
        handle.cancel()
        assert await peer.receive() == wrapped(cancel(sent.id))
        cx.send_cancel_request_to(SUCCESSOR, "their-7")
        assert await peer.receive() == wrapped(cancel("their-7"))


async def test_schema_dialect_peer_sends_plain_cancel_for_the_outer_id() -> None:
    """The v1 unstable schema's ``proxy/successor`` wants a plain cancel with the outer id;
    ``SuccessorPeer("proxy/successor", wrap_cancel=False)`` speaks that dialect."""
    peer_style = SuccessorPeer("proxy/successor", wrap_cancel=False)
    async with wire_connection(ConnectionBuilder()) as (cx, peer):
        sent = cx.send_raw_request("x", None, peer=peer_style)
        assert await peer.receive() == request(sent.id, "proxy/successor", {"method": "x"})
        sent.cancel()
        assert await peer.receive() == cancel(sent.id)
        await peer.send(result(sent.id, None))


# -- incoming: markers peel envelopes (IN-2, GAP-15) -----------------------------------------


def parking_builder(
    parked: dict[JsonValue, Responder[JsonValue]], arrived: anyio.Event
) -> ConnectionBuilder:
    async def park(method: str, params: JsonValue, responder: Responder[JsonValue]) -> None:
        parked[responder.id] = responder
        responder.connection.spawn(
            responder.respond_with,
            responder.cancellation.run_until_cancelled(anyio.sleep_forever()),
        )
        arrived.set()

    return ConnectionBuilder().on_raw_request(park)


@pytest.mark.parametrize(
    ("wrap_request", "wrap_cancel"),
    [(True, True), (True, False), (False, True)],
    ids=["wrapped-wrapped", "wrapped-plain", "plain-wrapped"],
)
async def test_in2_gap15_wrapped_and_plain_cancels_reach_the_request_with_the_outer_id(
    wrap_request: bool, wrap_cancel: bool
) -> None:
    """IN-2/GAP-15 (WIRE-2, WIRE-3): a cancel reaches the request with that outer id, whatever
    the envelopes on either; the answer is exactly -32800 "Request cancelled"."""
    parked: dict[JsonValue, Responder[JsonValue]] = {}
    arrived = anyio.Event()
    async with wire_connection(parking_builder(parked, arrived)) as (_cx, peer):
        message = request(7, "slow", {"n": 1})
        await peer.send(wrapped(message) if wrap_request else message)
        with anyio.fail_after(5):
            await arrived.wait()
        await peer.send(wrapped(cancel(7)) if wrap_cancel else cancel(7))
        assert await peer.receive() == error(7, *CANCELLED)


async def test_in2_wrapped_cancel_sets_the_marker_before_a_claiming_handler_sees_it() -> None:
    """IN-2: a user handler claiming ``_proxy/successor`` notifications sees the wrapped cancel
    unchanged, after the marker was set; unknown ids and malformed envelopes are ignored
    by the registry and still delivered."""
    parked: dict[JsonValue, Responder[JsonValue]] = {}
    arrived = anyio.Event()
    seen: list[tuple[str, JsonValue, bool]] = []

    async def observe(method: str, params: JsonValue, cx: Connection) -> None:
        seen.append((method, params, bool(parked) and parked["r"].cancellation.is_cancelled()))

    builder = parking_builder(parked, arrived).on_raw_notification(observe)
    async with wire_connection(builder) as (_cx, peer):
        await peer.send(request("r", "slow"))
        with anyio.fail_after(5):
            await arrived.wait()
        await peer.send(wrapped(cancel("unknown")))
        await peer.send(notification(SUCC, {"bogus": True}))
        await peer.send(wrapped(cancel("r")))
        assert await peer.receive() == error("r", *CANCELLED)
        await peer.barrier()
    assert seen == [
        (SUCC, {"method": "$/cancel_request", "params": {"requestId": "unknown"}}, False),
        (SUCC, {"bogus": True}, False),
        (SUCC, {"method": "$/cancel_request", "params": {"requestId": "r"}}, True),
    ]


async def test_in2_malformed_wrapped_cancel_params_are_dropped_without_reply() -> None:
    """IN-3 through an envelope: a wrapped cancel with malformed params is logged and
    dropped before the handlers; no reply, the connection stays up."""
    seen: list[str] = []

    async def observe(method: str, params: JsonValue, cx: Connection) -> None:
        seen.append(method)

    async with wire_connection(ConnectionBuilder().on_raw_notification(observe)) as (_cx, peer):
        await peer.send(
            notification(SUCC, {"method": "$/cancel_request", "params": {"requestId": True}})
        )
        await peer.receive_nothing_until_barrier()
    assert seen == []


# -- ConductedProxy: one connection to the conductor -----------------------------------------


async def test_conducted_proxy_initializes_as_proxy_and_refuses_plain_initialize() -> None:
    """``_proxy/initialize`` tells the component it is a proxy; it forwards ``initialize`` to
    its successor and relays the answer. A plain ``initialize`` gets -32600."""
    proxy = ConductedProxy()
    async with wire_connection(proxy.builder) as (_cx, conductor):
        await conductor.send(request("i-1", "initialize", {"protocolVersion": 1}))
        refused = await conductor.receive()
        assert refused["id"] == "i-1" and refused["error"]["code"] == -32600
        assert not proxy.initialized_as_proxy

        await conductor.send(request("i-2", "_proxy/initialize", {"protocolVersion": 1}))
        inner = await conductor.receive()
        assert inner == wrapped(request(inner["id"], "initialize", {"protocolVersion": 1}))
        assert proxy.initialized_as_proxy
        await conductor.send(result(inner["id"], {"protocolVersion": 1}))
        assert await conductor.receive() == result("i-2", {"protocolVersion": 1})


async def test_conducted_proxy_proxy1_cancels_hop_by_hop_in_both_directions() -> None:
    """PROXY-1 through a conductor: a plain request from the predecessor goes to the
    successor wrapped under the proxy's id; its cancel follows wrapped with that id.
    A wrapped request from the successor goes to the predecessor plain; a wrapped cancel
    for its outer id becomes a plain cancel with the proxy's id."""
    proxy = ConductedProxy()
    async with wire_connection(proxy.builder) as (_cx, conductor):
        await conductor.send(request("c-1", "session/prompt", {"sessionId": "s"}))
        down = await conductor.receive()
        assert down == wrapped(request(down["id"], "session/prompt", {"sessionId": "s"}))
        await conductor.send(cancel("c-1"))
        assert await conductor.receive() == wrapped(cancel(down["id"]))
        await conductor.send(error(down["id"], *CANCELLED))
        assert await conductor.receive() == error("c-1", *CANCELLED)

        await conductor.send(wrapped(request(9, "session/request_permission", {"sessionId": "s"})))
        up = await conductor.receive()
        assert up == request(up["id"], "session/request_permission", {"sessionId": "s"})
        await conductor.send(wrapped(cancel(9)))
        assert await conductor.receive() == cancel(up["id"])
        await conductor.send(result(up["id"], {"outcome": {"outcome": "cancelled"}}))
        assert await conductor.receive() == result(9, {"outcome": {"outcome": "cancelled"}})
        await conductor.receive_nothing_until_barrier()


async def test_conducted_proxy_proxy4_forwards_notifications_and_drops_cancels() -> None:
    """PROXY-4: notifications cross the proxy (wrapped one way, unwrapped the other), a raw
    cancel does not, in either direction; a malformed envelope is dropped."""
    proxy = ConductedProxy()
    async with wire_connection(proxy.builder) as (_cx, conductor):
        await conductor.send(notification("session/cancel", {"sessionId": "s"}))
        assert await conductor.receive() == wrapped(
            notification("session/cancel", {"sessionId": "s"})
        )
        await conductor.send(wrapped(notification("session/update", {"sessionId": "s"})))
        assert await conductor.receive() == notification("session/update", {"sessionId": "s"})
        await conductor.send(cancel("nobody"))
        await conductor.send(wrapped(cancel("nobody")))
        await conductor.send(notification(SUCC, {"no": "method"}))
        await conductor.receive_nothing_until_barrier()


async def test_conducted_proxy_malformed_request_envelope_gets_invalid_params() -> None:
    """A ``_proxy/successor`` request that does not carry a message is answered -32602."""
    async with wire_connection(ConductedProxy().builder) as (_cx, conductor):
        await conductor.send(request(3, SUCC, {"params": {}}))
        answer = await conductor.receive()
        assert answer["id"] == 3 and answer["error"]["code"] == -32602


async def test_conducted_proxy_handles_chosen_methods_from_the_successor_itself() -> None:
    """Handle locally, for messages from the successor: the responder answers under the
    envelope's outer id, and a wrapped cancel for that id sets its marker (IN-2)."""
    proxy = ConductedProxy()
    notes: list[JsonValue] = []

    async def auto_approve(
        method: str, params: JsonValue, responder: Responder[JsonValue]
    ) -> JsonValue:
        if isinstance(params, dict) and params.get("hold"):
            work = responder.cancellation.run_until_cancelled(anyio.sleep_forever())
            responder.connection.spawn(responder.respond_with, work)
            return None
        return {"outcome": {"outcome": "selected", "optionId": "allow"}}

    async def note(method: str, params: JsonValue, cx: Connection) -> None:
        notes.append(params)

    proxy.on_request_from_successor("session/request_permission", auto_approve)
    proxy.on_notification_from_successor("session/update", note)
    async with wire_connection(proxy.builder) as (_cx, conductor):
        await conductor.send(wrapped(request(5, "session/request_permission", {"sessionId": "s"})))
        assert await conductor.receive() == result(
            5, {"outcome": {"outcome": "selected", "optionId": "allow"}}
        )
        await conductor.send(wrapped(request(6, "session/request_permission", {"hold": True})))
        await conductor.barrier()
        await conductor.send(wrapped(cancel(6)))
        assert await conductor.receive() == error(6, *CANCELLED)
        await conductor.send(wrapped(notification("session/update", {"sessionId": "s"})))
        await conductor.receive_nothing_until_barrier()
    assert notes == [{"sessionId": "s"}]
