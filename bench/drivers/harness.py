"""The workload loops of the Python drivers, written once against :class:`BenchClient`.

Each driver adapts one SDK's client to :class:`BenchClient` and calls :func:`main`,
which runs every workload against a freshly spawned agent and prints one JSON object:
the figures of this run, plus the peak RSS of both processes.
"""

from __future__ import annotations

import json
import resource
import sys
import time
from collections.abc import Awaitable, Callable
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass
from typing import Any, Protocol

import anyio

from bench.profiling import profiled_client
from bench.stats import latency_figures
from bench.workload_spec import Spec

Figures = dict[str, Any]


@dataclass(frozen=True)
class AgentStats:
    max_rss_kb: int
    cpu_ns: int
    """CPU time (user + system) the agent process has used so far."""
    async_library: str | None = None
    """What the agent runs on (``asyncio``, ``trio``), where it says."""


class BenchClient(Protocol):
    """One SDK's client, connected (initialized, one session) to its benchmark agent."""

    cancel_mechanism: str

    async def ping(self, i: int) -> None:
        """`_echo/ping` with ``{"n": i}``; returns when the answer arrived."""

    async def prompt(self, text: str) -> None:
        """`session/prompt` with one text block; returns when answered (result validated)."""

    async def stream(self, n: int, size: int) -> int:
        """Prompt ``chunks n size s``; the number of message chunks received before the answer."""

    async def cancel_latency_ns(self) -> int:
        """Start a ``wait-cancel`` prompt, wait for its ``ready`` chunk, cancel it; the
        agent's observation time minus the time just before the cancel call."""

    async def agent_stats(self) -> AgentStats: ...


async def with_cpu(client: BenchClient, n: int, work: Awaitable[Figures]) -> Figures:
    """``work``'s figures plus the CPU time each side spent per operation, in µs: far less
    sensitive to other load on the machine than wall-clock figures."""
    agent_before = await client.agent_stats()
    client_before = time.process_time_ns()
    figures = await work
    client_cpu = time.process_time_ns() - client_before
    agent_cpu = (await client.agent_stats()).cpu_ns - agent_before.cpu_ns
    figures["client_cpu_us"] = round(client_cpu / n / 1000, 2)
    figures["agent_cpu_us"] = round(agent_cpu / n / 1000, 2)
    return figures


def _timed(n: int, elapsed_ns: int, samples: list[int]) -> Figures:
    return {"n": n, "per_s": round(n / (elapsed_ns / 1e9), 1), **latency_figures(samples)}


async def sequential(call: Callable[[int], Awaitable[None]], n: int) -> Figures:
    samples: list[int] = []
    now = time.perf_counter_ns
    start = now()
    for i in range(n):
        t = now()
        await call(i)
        samples.append(now() - t)
    return _timed(n, now() - start, samples)


async def in_flight(
    call: Callable[[int], Awaitable[None]], total: int, concurrency: int
) -> Figures:
    samples: list[int] = []
    now = time.perf_counter_ns
    issued = 0

    async def worker() -> None:
        nonlocal issued
        while issued < total:
            issued += 1
            t = now()
            await call(issued)
            samples.append(now() - t)

    start = now()
    async with anyio.create_task_group() as tg:
        for _ in range(concurrency):
            tg.start_soon(worker)
    return {**_timed(total, now() - start, samples), "concurrency": concurrency}


async def notifications(client: BenchClient, n: int, size: int) -> Figures:
    start = time.perf_counter_ns()
    received = await client.stream(n, size)
    elapsed = time.perf_counter_ns() - start
    if received != n:
        raise RuntimeError(f"expected {n} chunks, got {received}")
    return {"n": n, "bytes": size, "per_s": round(n / (elapsed / 1e9), 1)}


async def cancellations(client: BenchClient, n: int) -> Figures:
    """``n`` cancels timed after ``n`` untimed ones, as the TS driver does: the warm-up of
    ``run_workloads`` does not cancel, and the TS client's optimizing compiler was still
    compiling its cancel path during the first 800 or so timed cancels, at the same sample
    indices whichever agent ran (bench/README.md)."""
    for _ in range(n):
        await client.cancel_latency_ns()
    samples = [await client.cancel_latency_ns() for _ in range(n)]
    return {"n": n, "mechanism": client.cancel_mechanism, **latency_figures(samples)}


async def mixed(client: BenchClient, chunks: int, size: int, pings: int) -> Figures:
    """One prompt streaming ``chunks`` while ``pings`` sequential pings run beside it."""
    result: Figures = {}

    async def stream() -> None:
        result.update(await notifications(client, chunks, size))

    async def ping() -> None:
        result["ping"] = await sequential(client.ping, pings)

    start = time.perf_counter_ns()
    async with anyio.create_task_group() as tg:
        tg.start_soon(stream)
        tg.start_soon(ping)
    ping_figures = result.pop("ping")
    return {
        "chunks": chunks,
        "bytes": size,
        "chunks_per_s": result["per_s"],
        "total_ms": round((time.perf_counter_ns() - start) / 1e6, 1),
        "pings": pings,
        "ping_p50_us": ping_figures["p50_us"],
        "ping_p99_us": ping_figures["p99_us"],
    }


async def run_workloads(client: BenchClient, spec: Spec) -> Figures:
    """Every workload whose count is non-zero, in the order of the issue."""
    for i in range(spec["warmup"]):
        await client.ping(i)
        await client.prompt("noop")
    await client.stream(spec["warmup"], spec["notify_bytes"])
    figures: Figures = {}
    if n := spec["ping"]:
        figures["ping"] = await with_cpu(client, n, sequential(client.ping, n))
    if n := spec["prompt"]:
        work = sequential(lambda _: client.prompt("noop"), n)
        figures["prompt"] = await with_cpu(client, n, work)
    if n := spec["inflight_total"]:
        work = in_flight(client.ping, n, spec["inflight_concurrency"])
        figures["inflight"] = await with_cpu(client, n, work)
    if n := spec["notify"]:
        work = notifications(client, n, spec["notify_bytes"])
        figures["notify"] = await with_cpu(client, n, work)
    if n := spec["cancel"]:
        figures["cancel"] = await cancellations(client, n)
    if n := spec["mixed_chunks"]:
        figures["mixed"] = await mixed(client, n, spec["mixed_chunk_bytes"], spec["mixed_pings"])
    stats = await client.agent_stats()
    figures["rss"] = {
        "client_kb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss,
        "agent_kb": stats.max_rss_kb,
    }
    if stats.async_library is not None:
        figures["agent_async_library"] = stats.async_library
    return figures


def main(open_client: Callable[[], AbstractAsyncContextManager[BenchClient]]) -> None:
    """``driver '<spec json>'``: run the workloads, print one JSON object on stdout."""
    spec: Spec = json.loads(sys.argv[1])

    async def run() -> Figures:
        async with open_client() as client:
            return await run_workloads(client, spec)

    with profiled_client():
        figures = anyio.run(run)
    print(json.dumps(figures), flush=True)
