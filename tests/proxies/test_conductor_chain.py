"""ConductedProxy components in a conductor's chain (PROXY-1, PROXY-4, OUT-2 over
``_proxy/successor``): client <-> conductor <-> [proxy, proxy, agent]."""

from __future__ import annotations

from contextlib import AsyncExitStack

import anyio
import pytest

from acp_runtime import (
    Connection,
    ConnectionBuilder,
    ErrorCode,
    JsonValue,
    RequestError,
    Responder,
    memory_pair,
)
from acp_runtime.proxies import ConductedProxy
from acp_runtime.tracing import TraceEvent, TracingTransport

from .conductor import Conductor
from .wire_trace import Hop

pytestmark = pytest.mark.anyio

SUCC = "_proxy/successor"


class Agent:
    def __init__(self) -> None:
        self.parked = anyio.Event()
        self.cancelled = anyio.Event()
        self.permission: Responder[JsonValue] | None = None
        self.methods: list[str] = []

    async def on_request(
        self, method: str, params: JsonValue, responder: Responder[JsonValue]
    ) -> JsonValue:
        self.methods.append(method)
        if method == "initialize":
            return {"protocolVersion": 1}

        async def until_cancelled() -> None:
            await responder.cancellation.cancelled()
            self.cancelled.set()
            responder.respond_with_error(RequestError.request_cancelled())

        responder.connection.spawn(until_cancelled)
        self.parked.set()
        return None


async def test_cancel_crosses_a_conductor_chain_wrapped_on_proxy_hops_plain_on_others() -> None:
    """Every hop carries its own cancel for its own id; a proxy's cancel to its successor is
    wrapped in the request's envelope (OUT-2); the conductor never tunnels one (PROXY-4)."""
    proxies = [ConductedProxy(), ConductedProxy()]
    agent = Agent()
    conductor = Conductor(len(proxies) + 1)
    traces: list[list[TraceEvent]] = [
        [] for _ in range(len(proxies) + 1)
    ]  # conductor's side of each hop

    async with AsyncExitStack() as stack:
        conductor_ends: list[TracingTransport] = []
        for index, proxy in enumerate(proxies):
            ours, theirs = memory_pair()
            conductor_ends.append(TracingTransport(ours, traces[index].append))
            await stack.enter_async_context(proxy.builder.connect(theirs))
        ours, theirs = memory_pair()
        conductor_ends.append(TracingTransport(ours, traces[-1].append))
        await stack.enter_async_context(
            ConnectionBuilder().on_raw_request(agent.on_request).connect(theirs)
        )
        client_end, conductor_up = memory_pair()
        await stack.enter_async_context(conductor.connect(conductor_up, conductor_ends))
        client: Connection = await stack.enter_async_context(
            ConnectionBuilder().connect(client_end)
        )

        with anyio.fail_after(5):
            assert await client.send_raw_request("initialize", {"protocolVersion": 1}) == {
                "protocolVersion": 1
            }
            sent = client.send_raw_request("slow/work", {"n": 1})
            await agent.parked.wait()
            sent.cancel()
            await agent.cancelled.wait()
            with pytest.raises(RequestError) as caught:
                await sent
    assert caught.value.code == ErrorCode.REQUEST_CANCELLED
    assert all(p.initialized_as_proxy for p in proxies)
    assert agent.methods == ["initialize", "slow/work"]

    for index, events in enumerate(traces):
        hop = Hop.from_events(events)
        # conductor -> component: the plain request and its plain cancel, same id
        (request,) = hop.requests("out", "slow/work")
        assert hop.cancels("out") == [request["id"]]
        assert hop.foreign_cancels() == []
        if index == len(proxies):
            assert hop.requests("out", "initialize") and not hop.requests(
                "out", "_proxy/initialize"
            )
            continue
        assert hop.requests("out", "_proxy/initialize")
        # component -> conductor: the proxy's wrapped request and its wrapped cancel, same outer id
        wrapped = [m for m in hop.requests("in", SUCC) if m["params"]["method"] == "slow/work"]
        assert len(wrapped) == 1
        wrapped_cancels = [
            m["params"]["params"]["requestId"]
            for d, m in hop.messages
            if d == "in" and m.get("method") == SUCC and m["params"]["method"] == "$/cancel_request"
        ]
        assert wrapped_cancels == [wrapped[0]["id"]]
        assert hop.cancels("in") == []  # no plain cancel from a proxy to its successor
