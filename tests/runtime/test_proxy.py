"""Hop-by-hop cancellation through a proxy: client → proxy → agent (PROXY-1/2/3/5)."""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass, field

import anyio
import pytest

from acp_runtime import (
    CancellationMarker,
    Connection,
    ConnectionBuilder,
    ErrorCode,
    JsonValue,
    RequestError,
    Responder,
    memory_pair,
)

from .helpers import CANCEL, Parking

pytestmark = pytest.mark.anyio

Forward = Callable[[Connection, str, JsonValue, Responder[JsonValue]], Awaitable[None]]


@dataclass
class Chain:
    client: Connection
    proxy_up: Connection
    proxy_down: Connection
    agent: Parking
    upstream_markers: list[CancellationMarker] = field(default_factory=list[CancellationMarker])


@asynccontextmanager
async def chain(
    forward: Forward, proxy_up: ConnectionBuilder | None = None
) -> AsyncIterator[Chain]:
    """client ↔ proxy(up | down) ↔ agent, the proxy forwarding every request with ``forward``."""
    agent = Parking()
    holder: dict[str, Connection] = {}
    markers: list[CancellationMarker] = []

    async def on_request(method: str, params: JsonValue, responder: Responder[JsonValue]) -> None:
        markers.append(responder.cancellation)
        await forward(holder["down"], method, params, responder)

    up_builder = (proxy_up or ConnectionBuilder()).on_raw_request(on_request)
    client_end, proxy_up_end = memory_pair()
    proxy_down_end, agent_end = memory_pair()
    async with (
        ConnectionBuilder().connect(client_end) as client,
        up_builder.connect(proxy_up_end) as up,
        ConnectionBuilder().connect(proxy_down_end) as down,
        agent.builder().connect(agent_end),
    ):
        holder["down"] = down
        yield Chain(client, up, down, agent, markers)


async def forward_response(
    down: Connection, method: str, params: JsonValue, responder: Responder[JsonValue]
) -> None:
    down.send_raw_request(method, params).forward_response_to(responder)


async def settle(sent: Awaitable[JsonValue]) -> JsonValue | RequestError:
    with anyio.fail_after(5):
        try:
            return await sent
        except RequestError as error:
            return error


async def test_proxy1_forward_response_to_propagates_one_cancel_with_the_downstream_id() -> None:
    """PROXY-1: the upstream cancel becomes one fresh ``$/cancel_request`` downstream,
    carrying the downstream id; the agent's -32800 comes back upstream unchanged."""
    async with chain(forward_response) as c:
        sent = c.client.send_raw_request("work", {"n": 1})
        parked = await c.agent.parked("work")
        sent.cancel()
        with anyio.fail_after(5):
            await parked.cancellation.cancelled()
        assert c.agent.cancels_seen == [parked.id]
        parked.respond_with_error(RequestError.request_cancelled())
        assert await settle(sent) == RequestError.request_cancelled()
        assert c.agent.cancels_seen == [parked.id]  # no duplicate, nothing tunneled


async def test_proxy1_downstream_answers_are_forwarded_unchanged() -> None:
    """PROXY-1: data and errors (with their ``data``) pass through as the agent sent them."""
    async with chain(forward_response) as c:
        ok = c.client.send_raw_request("ok")
        (await c.agent.parked("ok")).respond({"nested": [1, None, "x"]})
        assert await settle(ok) == {"nested": [1, None, "x"]}
        bad = c.client.send_raw_request("bad")
        (await c.agent.parked("bad")).respond_with_error(
            RequestError(-32002, "Resource not found", {"uri": "u"})
        )
        assert await settle(bad) == RequestError(-32002, "Resource not found", {"uri": "u"})


async def test_proxy1_downstream_answered_before_upstream_cancel_sends_nothing_downstream() -> None:
    """PROXY-1 with OUT-7: once the downstream response is routed, a late upstream cancel
    does not travel downstream, and the client gets the data."""
    async with chain(forward_response) as c:
        sent = c.client.send_raw_request("work")
        parked = await c.agent.parked("work")
        parked.respond("data")
        assert await settle(sent) == "data"
        c.client.send_cancel_request(sent.id)  # raw, after the fact: unknown id at the proxy
        barrier = c.client.send_raw_request("barrier")
        (await c.agent.parked("barrier")).respond(None)
        await settle(barrier)
        assert c.agent.cancels_seen == []


async def test_proxy2_forward_cancellation_from_with_custom_result_handling() -> None:
    """PROXY-2: register the upstream marker explicitly, then post-process the result."""

    async def rewrite(
        down: Connection, method: str, params: JsonValue, responder: Responder[JsonValue]
    ) -> None:
        async def post_process(value: JsonValue | RequestError) -> None:
            if isinstance(value, RequestError):
                responder.respond_with_error(value)
            else:
                responder.respond({"wrapped": value})

        down.send_raw_request(f"inner/{method}", params).forward_cancellation_from(
            responder.cancellation
        ).on_receiving_result(post_process)

    async with chain(rewrite) as c:
        sent = c.client.send_raw_request("work")
        parked = await c.agent.parked("inner/work")
        sent.cancel()
        with anyio.fail_after(5):
            await parked.cancellation.cancelled()
        assert c.agent.cancels_seen == [parked.id]
        parked.respond("partial")
        assert await settle(sent) == {"wrapped": "partial"}


async def test_proxy3_consuming_without_registering_absorbs_the_cancellation() -> None:
    """PROXY-3: the upstream marker is set, nothing goes downstream, the request completes."""

    async def absorb(
        down: Connection, method: str, params: JsonValue, responder: Responder[JsonValue]
    ) -> None:
        async def relay(value: JsonValue | RequestError) -> None:
            responder.respond_with_result(value)

        down.send_raw_request(method, params).on_receiving_result(relay)

    async with chain(absorb) as c:
        sent = c.client.send_raw_request("work")
        parked = await c.agent.parked("work")
        sent.cancel()
        barrier = c.client.send_raw_request("barrier")  # the cancel was dispatched at the proxy
        (await c.agent.parked("barrier")).respond(None)
        await settle(barrier)
        assert c.upstream_markers[0].is_cancelled()
        assert c.agent.cancels_seen == []
        parked.respond("released")
        assert await settle(sent) == "released"


async def test_proxy5_custom_routing_with_send_cancel_request_to() -> None:
    """PROXY-5: a proxy that claims ``$/cancel_request`` translates it to the next hop's id
    with the low-level ``send_cancel_request_to``."""
    id_map: dict[JsonValue, int] = {}
    holder: dict[str, Connection] = {}

    async def translate(method: str, params: JsonValue, cx: Connection) -> None:
        if method == CANCEL and isinstance(params, dict) and params["requestId"] in id_map:
            down = holder["down"]
            down.send_cancel_request_to(down.counterpart, id_map[params["requestId"]])

    async def detached_forward(
        down: Connection, method: str, params: JsonValue, responder: Responder[JsonValue]
    ) -> None:
        holder["down"] = down
        sent = down.send_raw_request(method, params)
        id_map[responder.id] = sent.id

        async def relay(value: JsonValue | RequestError) -> None:
            responder.respond_with_result(value)

        sent.on_receiving_result(relay)  # absorbs; the custom handler routes cancels

    async with chain(detached_forward, ConnectionBuilder().on_raw_notification(translate)) as c:
        sent = c.client.send_raw_request("work")
        parked = await c.agent.parked("work")
        sent.cancel()
        with anyio.fail_after(5):
            await parked.cancellation.cancelled()
        assert c.agent.cancels_seen == [parked.id]
        parked.respond_with_error(RequestError.request_cancelled())
        result_ = await settle(sent)
        assert isinstance(result_, RequestError) and result_.code == ErrorCode.REQUEST_CANCELLED


async def test_forwarded_sources_edge_cases() -> None:
    """PROXY-2 edges: a source set before consumption cancels at consumption; several
    sources send one cancel; a source firing after settlement or after detach sends nothing."""
    downstream = Parking()
    upstream_parked: list[Responder[JsonValue]] = []
    all_parked = anyio.Event()

    async def park(method: str, params: JsonValue, responder: Responder[JsonValue]) -> None:
        upstream_parked.append(responder)
        if len(upstream_parked) == 5:
            all_parked.set()

    near_end, down_end = memory_pair()
    client_end, up_end = memory_pair()
    async with (
        ConnectionBuilder().connect(near_end) as near,
        downstream.builder().connect(down_end),
        ConnectionBuilder().on_raw_request(park).connect(up_end),
        ConnectionBuilder().connect(client_end) as client,
    ):
        upstream = [client.send_raw_request(f"u{n}") for n in range(5)]
        with anyio.fail_after(5):
            await all_parked.wait()
        m0, m1, m2, m3, m4 = (r.cancellation for r in upstream_parked)

        async def ignore(value: JsonValue | RequestError) -> None:
            pass

        # 1. a source already set before consumption: the cancel goes out at consumption
        upstream[0].cancel()
        with anyio.fail_after(5):
            await m0.cancelled()
        pre = near.prepare_raw_request("pre").forward_cancellation_from(m0)
        pre.on_receiving_result(ignore)
        pre_parked = await downstream.parked("pre")
        with anyio.fail_after(5):
            await pre_parked.cancellation.cancelled()

        # 2. several sources: one cancel
        multi = (
            near.send_raw_request("multi")
            .forward_cancellation_from(m1)
            .forward_cancellation_from(m2)
        )
        multi.on_receiving_result(ignore)
        multi_parked = await downstream.parked("multi")
        upstream[1].cancel()
        upstream[2].cancel()
        with anyio.fail_after(5):
            await multi_parked.cancellation.cancelled()

        # 3. a source that fires after the response was routed: nothing
        answered = near.send_raw_request("answered").forward_cancellation_from(m3)
        (await downstream.parked("answered")).respond("early")
        with anyio.fail_after(5):
            assert await answered == "early"
        upstream[3].cancel()

        # 4. detach after registering: the sources are ignored
        detached = near.send_raw_request("detached").forward_cancellation_from(m4)
        detached.detach()
        detached_parked = await downstream.parked("detached")
        upstream[4].cancel()
        with anyio.fail_after(5):
            await m3.cancelled()
            await m4.cancelled()

        for parked in (pre_parked, multi_parked, detached_parked):
            parked.respond("done")
        barrier = near.send_raw_request("barrier")
        (await downstream.parked("barrier")).respond(None)
        with anyio.fail_after(5):
            await barrier
        assert downstream.cancels_seen == [pre_parked.id, multi_parked.id]
        for request in upstream:
            request.detach()
