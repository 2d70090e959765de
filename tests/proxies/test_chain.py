"""A chain of five proxies in one process (PROXY-1, PROXY-4): the client's cancel reaches
the agent, one fresh ``$/cancel_request`` per hop, each naming that hop's id; plus the
benchmark's quick mode, which must print well-formed JSON (no timing asserts)."""

from __future__ import annotations

import json
import subprocess
import sys
from contextlib import AsyncExitStack
from pathlib import Path

import anyio
import pytest

from acp_runtime import (
    ConnectionBuilder,
    ErrorCode,
    JsonValue,
    RequestError,
    Responder,
    memory_pair,
)
from acp_runtime.proxies import Proxy
from acp_runtime.tracing import TraceEvent, TracingTransport

from .wire_trace import Hop

REPO = Path(__file__).resolve().parents[2]
PROXIES = 5


@pytest.mark.anyio
async def test_proxy1_cancel_crosses_five_proxies_hop_by_hop() -> None:
    """PROXY-1/PROXY-4: six hops, six cancels, each for the id of the request on its hop."""
    hops: list[list[TraceEvent]] = [
        [] for _ in range(PROXIES + 1)
    ]  # seen from the client end of each hop
    parked = anyio.Event()
    marker_set = anyio.Event()

    async def park(method: str, params: JsonValue, responder: Responder[JsonValue]) -> JsonValue:
        if method == "warmup":
            return "ok"

        async def until_cancelled() -> None:
            await responder.cancellation.cancelled()
            marker_set.set()
            responder.respond_with_error(RequestError.request_cancelled())

        responder.connection.spawn(until_cancelled)
        parked.set()
        return None

    proxies: list[Proxy] = []
    async with AsyncExitStack() as stack:
        client_end, towards_client = memory_pair()
        client_transport = TracingTransport(client_end, hops[0].append)
        for index in range(PROXIES):
            towards_agent, next_up = memory_pair()
            traced = TracingTransport(towards_agent, hops[index + 1].append)
            proxies.append(await stack.enter_async_context(Proxy().connect(towards_client, traced)))
            towards_client = next_up
        await stack.enter_async_context(
            ConnectionBuilder().on_raw_request(park).connect(towards_client)
        )
        client = await stack.enter_async_context(ConnectionBuilder().connect(client_transport))
        with anyio.fail_after(5):
            # Each proxy uses one id of its own first, so the request's id differs on every
            # hop (1 on the client's, 2 on the next, ...): a tunnelled id would be foreign.
            for proxy in proxies:
                assert await proxy.downstream.send_raw_request("warmup") == "ok"
        sent = client.send_raw_request("slow/work", {"n": 1})
        with anyio.fail_after(5):
            await parked.wait()
            sent.cancel()
            await marker_set.wait()
            with pytest.raises(RequestError) as caught:
                await sent
        assert caught.value.code == ErrorCode.REQUEST_CANCELLED

    ids: list[JsonValue] = []
    for events in hops:
        hop = Hop.from_events(events)
        (request,) = hop.requests("out", "slow/work")
        assert hop.cancels("out") == [request["id"]]
        assert hop.responses("in", request["id"])[0]["error"]["code"] == -32800
        assert hop.foreign_cancels() == []
        ids.append(request["id"])
    assert ids == list(range(1, PROXIES + 2))


def test_bench_quick_mode_prints_one_json_record() -> None:
    """``bench/proxy_chain_bench.py --quick`` runs and its JSON parses (no timing asserts)."""
    done = subprocess.run(
        [sys.executable, str(REPO / "bench" / "proxy_chain_bench.py"), "--quick"],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=REPO,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    (line,) = done.stdout.splitlines()
    record = json.loads(line)
    assert record["benchmark"] == "proxy_chain_cancel" and record["proxies"] == PROXIES
    assert record["iterations"] == 20
    for key in ("cancel_to_agent_marker_us", "cancel_to_client_error_us"):
        assert set(record[key]) == {"min", "median", "p95", "max", "mean"}
        assert 0 < record[key]["min"] <= record[key]["median"] <= record[key]["max"]
