"""Benchmark: how long a cancellation takes to cross a chain of proxies.

A client, ``--proxies`` :class:`acp_runtime._proxy.Proxy` hops and an agent, all built on
this SDK. The client sends a request the agent parks; once it is parked the client
calls ``cancel()``, and we time (``time.perf_counter``, one clock):

* ``cancel_to_agent_marker``: until the agent's cancellation marker wakes its waiter
  (each hop re-issued ``$/cancel_request`` with its own id);
* ``cancel_to_client_error``: until the client holds the -32800 answer that travelled back.

``--transport memory`` (default) runs everything in one process over in-memory
transports; ``--transport pipes`` runs each proxy as an ``examples/proxy.py`` process
in front of ``examples/echo_agent.py`` and reports only ``cancel_to_client_error``
(the agent's marker lives in another process).

Prints one JSON object. Timings on a shared VM vary; compare medians within one run.

    python bench/proxy_chain_bench.py                 # 500 cancels through 5 proxies, in memory
    python bench/proxy_chain_bench.py --quick         # 20 cancels, for CI: checks the JSON shape
    python bench/proxy_chain_bench.py --transport pipes --iterations 50
"""

from __future__ import annotations

import argparse
import json
import platform
import statistics
import sys
import time
from collections.abc import AsyncGenerator
from contextlib import AsyncExitStack, asynccontextmanager
from pathlib import Path
from typing import Any

import anyio

from acp_runtime import (
    Connection,
    ConnectionBuilder,
    ErrorCode,
    JsonValue,
    RequestError,
    Responder,
    memory_pair,
    spawn_agent,
)
from acp_runtime.proxies import Proxy

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"
STEP_TIMEOUT = 10.0


def spread_us(samples: list[float]) -> dict[str, float]:
    """min/median/p95/max/mean of durations in seconds, as microseconds."""
    ordered = sorted(samples)
    us = [s * 1e6 for s in ordered]
    return {
        "min": round(us[0], 1),
        "median": round(statistics.median(us), 1),
        "p95": round(us[min(len(us) - 1, int(0.95 * len(us)))], 1),
        "max": round(us[-1], 1),
        "mean": round(statistics.fmean(us), 1),
    }


class ParkingAgent:
    """Parks every request until it is cancelled, then answers -32800 and records when
    its marker woke it."""

    def __init__(self) -> None:
        self.parked = anyio.Event()
        self.marker_woke_at = 0.0

    async def handle(self, method: str, params: JsonValue, responder: Responder[JsonValue]) -> None:
        responder.connection.spawn(self._until_cancelled, responder)
        self.parked.set()

    async def _until_cancelled(self, responder: Responder[JsonValue]) -> None:
        await responder.cancellation.cancelled()
        self.marker_woke_at = time.perf_counter()
        responder.respond_with_error(RequestError.request_cancelled())

    def builder(self) -> ConnectionBuilder:
        return ConnectionBuilder().on_raw_request(self.handle)


@asynccontextmanager
async def memory_chain(proxies: int, agent: ParkingAgent) -> AsyncGenerator[Connection]:
    """client <-> n proxies <-> agent over memory pairs; yields the client's connection."""
    async with AsyncExitStack() as stack:
        client_end, towards_client = memory_pair()
        for _ in range(proxies):
            towards_agent, next_up = memory_pair()
            await stack.enter_async_context(Proxy().connect(towards_client, towards_agent))
            towards_client = next_up
        await stack.enter_async_context(agent.builder().connect(towards_client))
        yield await stack.enter_async_context(ConnectionBuilder().connect(client_end))


async def bench_memory(proxies: int, iterations: int) -> dict[str, Any]:
    to_marker: list[float] = []
    to_error: list[float] = []
    agent = ParkingAgent()
    async with memory_chain(proxies, agent) as client:
        for _ in range(iterations):
            agent.parked = anyio.Event()
            with anyio.fail_after(STEP_TIMEOUT):
                sent = client.send_raw_request("bench/park", {"n": 1})
                await agent.parked.wait()
                started = time.perf_counter()
                sent.cancel()
                try:
                    await sent
                except RequestError as error:
                    assert error.code == ErrorCode.REQUEST_CANCELLED, error
                else:
                    raise AssertionError("the agent answered instead of cancelling")
            to_error.append(time.perf_counter() - started)
            to_marker.append(agent.marker_woke_at - started)
    return {
        "cancel_to_agent_marker_us": spread_us(to_marker),
        "cancel_to_client_error_us": spread_us(to_error),
    }


async def bench_pipes(proxies: int, iterations: int) -> dict[str, Any]:
    """Round trips through real proxy processes in front of the echo agent."""
    command = [sys.executable, str(EXAMPLES / "echo_agent.py"), "--quiet"]
    for _ in range(proxies):
        command = [sys.executable, str(EXAMPLES / "proxy.py"), "--", *command]
    to_error: list[float] = []
    async with spawn_agent(command, stderr="discard") as process:
        async with ConnectionBuilder().connect(process) as client:
            with anyio.fail_after(60):
                await client.send_raw_request(
                    "initialize", {"protocolVersion": 1, "clientCapabilities": {}}
                )
                session = await client.send_raw_request(
                    "session/new", {"cwd": str(Path.cwd()), "mcpServers": []}
                )
            assert isinstance(session, dict)
            prompt: dict[str, Any] = {
                "sessionId": session["sessionId"],
                "prompt": [{"type": "text", "text": "sleep 60000"}],
            }
            for _ in range(iterations):
                with anyio.fail_after(STEP_TIMEOUT):
                    sent = client.send_raw_request("session/prompt", prompt)
                    started = time.perf_counter()
                    sent.cancel()
                    try:
                        await sent
                    except RequestError as error:
                        assert error.code == ErrorCode.REQUEST_CANCELLED, error
                to_error.append(time.perf_counter() - started)
    return {"cancel_to_client_error_us": spread_us(to_error)}


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description="cancellation latency through a proxy chain")
    parser.add_argument("--quick", action="store_true", help="20 iterations (for CI)")
    parser.add_argument(
        "--iterations", type=int, default=None, help="default 500 (memory), 50 (pipes)"
    )
    parser.add_argument("--proxies", type=int, default=5)
    parser.add_argument("--transport", choices=("memory", "pipes"), default="memory")
    parser.add_argument("--backend", choices=("asyncio", "trio"), default="asyncio")
    args = parser.parse_args(argv)
    iterations = args.iterations or (
        20 if args.quick else 500 if args.transport == "memory" else 50
    )
    bench = bench_memory if args.transport == "memory" else bench_pipes
    began = time.perf_counter()
    results = anyio.run(bench, args.proxies, iterations, backend=args.backend)
    record = {
        "benchmark": "proxy_chain_cancel",
        "transport": args.transport,
        "backend": args.backend,
        "proxies": args.proxies,
        "iterations": iterations,
        **results,
        "wall_s": round(time.perf_counter() - began, 3),
        "python": platform.python_version(),
    }
    print(json.dumps(record))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
