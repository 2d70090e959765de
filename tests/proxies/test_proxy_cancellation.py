"""Hop-by-hop cancellation through a two-connection :class:`Proxy` (DESIGN.md PROXY-1..5).

The client and the agent are raw wire peers, so every test sees the exact messages on
each hop. The client uses string ids and the proxy's downstream connection allocates
integers, so a foreign id on the agent's hop could never pass for the right one.
"""

from __future__ import annotations

from functools import partial

import anyio
import pytest

from acp_generated.v1 import CANCEL_REQUEST, CancelRequestNotification
from acp_runtime import (
    CancellationMarker,
    Connection,
    ErrorCode,
    JsonValue,
    RequestError,
    Responder,
    memory_pair,
)
from acp_runtime._successor import wrap_successor
from acp_runtime.proxies import COUNTERPART, SUCCESSOR, ProxiedNotification, Proxy
from acp_runtime.testing import WirePeer

from .helpers import (
    ASK,
    CANCELLED,
    Answer,
    Ask,
    around,
    cancel,
    error,
    notification,
    request,
    result,
)

pytestmark = pytest.mark.anyio


async def test_proxy1_forward_response_to_sends_one_cancel_with_the_downstream_id() -> None:
    """PROXY-1: the client's cancel reaches the agent as a fresh ``$/cancel_request`` with
    the downstream id; the agent's -32800 goes back to the client unchanged."""
    async with around(Proxy()) as (client, agent):
        await client.send(request("c-1", "slow", {"n": 1}))
        forwarded = await agent.receive()
        assert forwarded["method"] == "slow" and forwarded["params"] == {"n": 1}
        downstream_id = forwarded["id"]
        assert downstream_id != "c-1"

        await client.send(cancel("c-1"))
        assert await agent.receive() == cancel(downstream_id)
        await agent.send(error(downstream_id, *CANCELLED))
        assert await client.receive() == error("c-1", *CANCELLED)

        await client.send(cancel("c-1"))  # a late duplicate: the request is finished
        await agent.receive_nothing_until_barrier()
        await client.receive_nothing_until_barrier()


async def test_proxy1_data_that_raced_ahead_and_other_errors_are_forwarded_unchanged() -> None:
    """PROXY-1/OUT-3: after a cancel the client still gets whatever the agent answered:
    its data if it raced ahead, or any error verbatim (code, message, data)."""
    async with around(Proxy()) as (client, agent):
        await client.send(request("a", "x"))
        await client.send(request("b", "y"))
        first, second = await agent.receive(), await agent.receive()
        await client.send(cancel("a"))
        await client.send(cancel("b"))
        assert await agent.receive() == cancel(first["id"])
        assert await agent.receive() == cancel(second["id"])
        await agent.send(result(first["id"], {"finished": True}))
        await agent.send(error(second["id"], -32042, "Vendor error", {"detail": [1, 2]}))
        assert await client.receive() == result("a", {"finished": True})
        assert await client.receive() == error("b", -32042, "Vendor error", {"detail": [1, 2]})


async def test_proxy1_agent_to_client_requests_are_cancelled_hop_by_hop_too() -> None:
    """PROXY-1 in the other direction: a request from the agent (say, a permission
    request) that the agent cancels reaches the client as a cancel with the client-side id."""
    async with around(Proxy()) as (client, agent):
        await agent.send(request(70, "session/request_permission", {"sessionId": "s"}))
        forwarded = await client.receive()
        assert forwarded["method"] == "session/request_permission"
        await agent.send(cancel(70))
        assert await client.receive() == cancel(forwarded["id"])
        await client.send(result(forwarded["id"], {"outcome": {"outcome": "cancelled"}}))
        assert await agent.receive() == result(70, {"outcome": {"outcome": "cancelled"}})


async def test_proxy1_gap24_no_downstream_cancel_once_the_downstream_has_answered() -> None:
    """PROXY-1, GAP-24: the agent's answer was routed at the proxy before the client's
    cancel arrived: no cancel goes downstream, and the client gets the data."""
    async with around(Proxy()) as (client, agent):
        await client.send(request("c-9", "x"))
        downstream_id = (await agent.receive())["id"]
        await agent.send(result(downstream_id, "done"))
        await agent.barrier()  # the proxy's downstream connection has dispatched the answer
        await client.send(cancel("c-9"))
        assert await client.receive() == result("c-9", "done")
        await agent.receive_nothing_until_barrier()


async def test_proxy2_forward_cancellation_from_with_rewritten_request_and_result() -> None:
    """PROXY-2 (forward and propagate, custom): the proxy rewrites the request and
    post-processes the result; registering the marker still cancels downstream."""
    proxy = Proxy()

    async def ask(params: Ask, responder: Responder[Answer]) -> None:
        rewritten = Ask(question=params.question.upper())
        sent = proxy.downstream.send_request(ASK, rewritten)

        async def post_process(outcome: Answer | RequestError) -> None:
            if isinstance(outcome, RequestError):
                responder.respond_with_error(outcome)
            else:
                responder.respond(Answer(text=f"[proxied] {outcome.text}"))

        sent.forward_cancellation_from(responder.cancellation).on_receiving_result(post_process)

    proxy.upstream_builder.on_request(ASK, ask)
    async with around(proxy) as (client, agent):
        await client.send(request("c-1", "test/ask", {"question": "why"}))
        forwarded = await agent.receive()
        assert forwarded["params"] == {"question": "WHY"}
        await agent.send(result(forwarded["id"], {"text": "because"}))
        assert await client.receive() == result("c-1", {"text": "[proxied] because"})

        await client.send(request("c-2", "test/ask", {"question": "stop"}))
        forwarded = await agent.receive()
        await client.send(cancel("c-2"))
        assert await agent.receive() == cancel(forwarded["id"])
        await agent.send(error(forwarded["id"], *CANCELLED))
        assert await client.receive() == error("c-2", *CANCELLED)


async def test_proxy3_absorb_marker_is_set_but_nothing_goes_downstream() -> None:
    """PROXY-3 (absorb): consuming the downstream request without registering the marker
    keeps it running there; the upstream marker is set all the same."""
    proxy = Proxy()
    markers: list[CancellationMarker] = []

    async def ask(params: Ask, responder: Responder[Answer]) -> None:
        markers.append(responder.cancellation)

        async def relay(outcome: Answer | RequestError) -> None:
            responder.respond_with_result(outcome)

        proxy.downstream.send_request(ASK, params).on_receiving_result(relay)

    proxy.upstream_builder.on_request(ASK, ask)
    async with around(proxy) as (client, agent):
        await client.send(request("c-1", "test/ask", {"question": "q"}))
        downstream_id = (await agent.receive())["id"]
        await client.send(cancel("c-1"))
        await client.barrier()  # the proxy's upstream connection has dispatched the cancel
        assert markers[0].is_cancelled()
        await agent.receive_nothing_until_barrier()  # absorbed: no cancel downstream
        await agent.send(result(downstream_id, {"text": "released"}))
        assert await client.receive() == result("c-1", {"text": "released"})


async def test_handle_locally_proxy_answers_cancelled_itself_and_sends_nothing_downstream() -> None:
    """Handle locally: the proxy answers the method itself and reacts to its marker."""
    proxy = Proxy()

    async def ask(params: Ask, responder: Responder[Answer]) -> None:
        async def forever() -> Answer:
            await anyio.sleep_forever()
            raise AssertionError("unreachable")

        responder.connection.spawn(
            responder.respond_with, responder.cancellation.run_until_cancelled(forever())
        )

    proxy.upstream_builder.on_request(ASK, ask)
    async with around(proxy) as (client, agent):
        await client.send(request("c-1", "test/ask", {"question": "q"}))
        await client.barrier()
        await client.send(cancel("c-1"))
        assert await client.receive() == error("c-1", *CANCELLED)
        await agent.receive_nothing_until_barrier()


async def test_proxy4_send_proxied_message_drops_raw_cancels_plain_and_wrapped() -> None:
    """PROXY-4: a raw ``$/cancel_request`` is never tunnelled, plain or inside a successor
    envelope; other notifications are forwarded as they are."""
    async with around(Proxy()) as (client, agent):
        await client.send(cancel("c-unknown"))
        method, params = wrap_successor("$/cancel_request", {"requestId": "c-unknown"})
        await client.send(notification(method, params))
        await client.send(notification("session/update", {"sessionId": "s", "x": [1]}))
        assert await agent.receive() == notification("session/update", {"sessionId": "s", "x": [1]})
        await agent.receive_nothing_until_barrier()


async def test_proxy4_connection_method_forwards_notifications_through_a_wrapping_peer() -> None:
    """PROXY-4: ``Connection.send_proxied_message_to`` wraps a forwarded notification for the
    target peer and still drops a cancel."""
    proxy = Proxy()
    async with around(proxy) as (_client, agent):
        downstream = proxy.downstream
        downstream.send_proxied_message_to(SUCCESSOR, ProxiedNotification("note", {"a": 1}))
        downstream.send_proxied_message_to(
            SUCCESSOR, ProxiedNotification("$/cancel_request", {"requestId": 1})
        )
        method, params = wrap_successor("note", {"a": 1})
        assert await agent.receive() == notification(method, params)
        await agent.receive_nothing_until_barrier()


async def test_proxy5_custom_routing_claims_cancel_and_translates_ids() -> None:
    """PROXY-5 (custom routing): a handler claims ``$/cancel_request`` and sends the
    downstream cancel itself with ``send_cancel_request_to``; the built-in marker update
    has already happened when it runs (IN-2)."""
    proxy = Proxy()
    routes: dict[JsonValue, int] = {}
    responders: dict[JsonValue, Responder[Answer]] = {}
    marker_state_seen: list[bool] = []

    async def ask(params: Ask, responder: Responder[Answer]) -> None:
        sent = proxy.downstream.send_request(ASK, params)
        routes[responder.id] = sent.id
        responders[responder.id] = responder

        async def relay(outcome: Answer | RequestError) -> None:
            responder.respond_with_result(outcome)

        sent.on_receiving_result(relay)  # no marker link: routing is done by hand below

    async def route_cancel(params: CancelRequestNotification, cx: Connection) -> None:
        upstream_id = params.request_id
        marker_state_seen.append(responders[upstream_id].cancellation.is_cancelled())
        proxy.downstream.send_cancel_request_to(COUNTERPART, routes[upstream_id])

    proxy.upstream_builder.on_request(ASK, ask).on_notification(CANCEL_REQUEST, route_cancel)
    async with around(proxy) as (client, agent):
        await client.send(request("c-1", "test/ask", {"question": "q"}))
        downstream_id = (await agent.receive())["id"]
        await client.send(cancel("c-1"))
        assert await agent.receive() == cancel(downstream_id)
        assert marker_state_seen == [True]
        await agent.send(error(downstream_id, *CANCELLED))
        assert await client.receive() == error("c-1", *CANCELLED)
        await agent.receive_nothing_until_barrier()


async def test_gap25_several_sources_and_a_local_cancel_send_one_downstream_cancel() -> None:
    """GAP-25 (OUT-4 at a proxy hop): one downstream request watching two upstream markers
    and cancelled locally as well gets exactly one ``$/cancel_request``."""
    proxy = Proxy()
    waiting: list[Responder[Answer]] = []

    async def ask(params: Ask, responder: Responder[Answer]) -> None:
        waiting.append(responder)
        if len(waiting) < 2:
            return
        sent = proxy.downstream.send_request(ASK, params)
        handle = sent.cancellation_handle()
        for upstream in waiting:
            sent.forward_cancellation_from(upstream.cancellation)

        async def answer_all(outcome: Answer | RequestError) -> None:
            for upstream in waiting:
                upstream.respond_with_result(outcome)

        sent.on_receiving_result(answer_all)
        handle.cancel()

    proxy.upstream_builder.on_request(ASK, ask)
    async with around(proxy) as (client, agent):
        await client.send(request("a", "test/ask", {"question": "q"}))
        await client.send(request("b", "test/ask", {"question": "q"}))
        downstream_id = (await agent.receive())["id"]
        assert await agent.receive() == cancel(downstream_id)
        await client.send(cancel("a"))
        await client.send(cancel("b"))
        await client.barrier()
        await agent.receive_nothing_until_barrier()
        await agent.send(error(downstream_id, *CANCELLED))
        assert await client.receive() == error("a", *CANCELLED)
        assert await client.receive() == error("b", *CANCELLED)


async def test_downstream_closing_answers_forwarded_requests_with_connection_closed() -> None:
    """A forwarded request whose downstream goes away is still answered upstream (IN-6):
    the local connection-closed error, code -32603."""
    async with around(Proxy()) as (client, agent):
        await client.send(request("c-1", "x"))
        await agent.receive()
        agent.close()
        answer = await client.receive()
        assert answer["id"] == "c-1"
        assert answer["error"]["code"] == ErrorCode.INTERNAL_ERROR
        assert answer["error"]["data"]["reason"] == "connection_closed"


async def test_proxy2_gap18_source_cancelled_before_consumption_cancels_at_consumption() -> None:
    """PROXY-2, GAP-18: a marker already set when the request is consumed sends the cancel
    right away, right behind the request."""
    proxy = Proxy()

    async def ask(params: Ask, responder: Responder[Answer]) -> None:
        async def later() -> None:
            await responder.cancellation.cancelled()
            proxy.downstream.send_request(ASK, params).forward_response_to(responder)

        responder.connection.spawn(later)

    proxy.upstream_builder.on_request(ASK, ask)
    async with around(proxy) as (client, agent):
        await client.send(request("c-1", "test/ask", {"question": "q"}))
        await client.send(cancel("c-1"))
        downstream_id = (await agent.receive())["id"]
        assert await agent.receive() == cancel(downstream_id)
        await agent.send(result(downstream_id, {"text": "anyway"}))
        assert await client.receive() == result("c-1", {"text": "anyway"})


async def test_proxy2_gap18_source_set_after_the_response_sends_nothing() -> None:
    """PROXY-2, GAP-18 (OUT-7): the downstream answer was routed, the upstream request is
    still open and then cancelled: no cancel goes downstream."""
    proxy = Proxy()
    downstream_answered = anyio.Event()

    async def ask(params: Ask, responder: Responder[Answer]) -> None:
        async def hold(outcome: Answer | RequestError) -> None:
            downstream_answered.set()

            async def answer_when_cancelled() -> None:
                await responder.cancellation.cancelled()
                responder.respond_with_result(outcome)

            responder.connection.spawn(answer_when_cancelled)

        sent = proxy.downstream.send_request(ASK, params)
        sent.forward_cancellation_from(responder.cancellation).on_receiving_result(hold)

    proxy.upstream_builder.on_request(ASK, ask)
    async with around(proxy) as (client, agent):
        await client.send(request("c-1", "test/ask", {"question": "q"}))
        downstream_id = (await agent.receive())["id"]
        await agent.send(result(downstream_id, {"text": "early"}))
        with anyio.fail_after(5):
            await downstream_answered.wait()
        await client.send(cancel("c-1"))
        assert await client.receive() == result("c-1", {"text": "early"})
        await agent.receive_nothing_until_barrier()


async def test_proxy2_gap18_detach_after_registering_ignores_the_sources() -> None:
    """PROXY-2, GAP-18 (OUT-6): a detached request no longer watches its sources."""
    proxy = Proxy()

    async def ask(params: Ask, responder: Responder[Answer]) -> None:
        proxy.downstream.send_request(ASK, params).forward_cancellation_from(
            responder.cancellation
        ).detach()

        async def forever() -> Answer:
            await anyio.sleep_forever()
            raise AssertionError("unreachable")

        responder.connection.spawn(
            responder.respond_with, responder.cancellation.run_until_cancelled(forever())
        )

    proxy.upstream_builder.on_request(ASK, ask)
    async with around(proxy) as (client, agent):
        await client.send(request("c-1", "test/ask", {"question": "q"}))
        downstream_id = (await agent.receive())["id"]
        await client.send(cancel("c-1"))
        assert await client.receive() == error("c-1", *CANCELLED)
        await agent.receive_nothing_until_barrier()
        await agent.send(result(downstream_id, {"text": "discarded"}))
        await client.receive_nothing_until_barrier()


async def test_serve_answers_the_clients_requests_after_its_eof_then_returns() -> None:
    """``Proxy.serve``: a client that half-closes after its last request still gets the
    answer; then the proxy closes both sides (the agent sees EOF)."""
    up_ours, up_theirs = memory_pair()
    down_ours, down_theirs = memory_pair()
    client, agent = WirePeer(up_theirs), WirePeer(down_theirs)
    async with anyio.create_task_group() as tg:
        tg.start_soon(Proxy().serve, up_ours, down_ours)
        await client.send(request("c-1", "x"))
        client.close()
        forwarded = await agent.receive()
        await agent.send(result(forwarded["id"], "late answer"))
        assert await client.receive() == result("c-1", "late answer")
        with anyio.fail_after(5), pytest.raises(anyio.EndOfStream):
            await down_theirs.receive()  # serve returned and closed the agent's side


async def test_serve_stops_waiting_for_answers_after_the_drain_timeout() -> None:
    """``Proxy.serve``: an agent that never answers does not keep the proxy alive forever
    after the client's EOF (which already ended its side of the conversation)."""
    up_ours, up_theirs = memory_pair()
    down_ours, down_theirs = memory_pair()
    client, agent = WirePeer(up_theirs), WirePeer(down_theirs)
    with anyio.fail_after(5):
        async with anyio.create_task_group() as tg:
            tg.start_soon(partial(Proxy().serve, up_ours, down_ours, drain_timeout=0.05))
            await client.send(request("c-1", "x"))
            await agent.receive()
            client.close()
    with pytest.raises(anyio.EndOfStream):
        await client.receive()
