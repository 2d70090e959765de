"""Benchmark: from cancelling a prompt to its MCP tool call being cancelled in the editor.

An editor (client, with an MCP SDK ``MCPServer`` behind ``McpProvider``) and an agent
(``McpCaller`` with an MCP SDK ``ClientSession``), in one process over an in-memory
pair. The client sends a request the agent serves as spawned work; once the work is
parked the client calls ``cancel()`` (``$/cancel_request``), and we time
(``time.perf_counter``, one clock) until the parked code's ``finally`` runs:

* ``plain``: the agent's own work (one hop: the agent's cancellation marker);
* ``turn_request``: the work awaits an ordinary ACP request to the client (a permission
  request, say), parked in the client: two hops, the second ``$/cancel_request``
  sent because the awaiting task is cancelled;
* ``turn_mcp_call``: the work awaits ``session.call_tool`` of the editor's tool, parked in
  the MCP server: the same two ACP hops plus MCP's ``notifications/cancelled`` on each side.

Rounds of the three are interleaved, so machine noise hits them alike. Prints one JSON
object per backend. The MCP call's tail is mostly the garbage collector (the MCP SDK
allocates much more per call): compare with ``--gc-off``.

    python bench/mcp_cancel_bench.py              # 300 rounds on asyncio and trio
    python bench/mcp_cancel_bench.py --quick      # 10 rounds: checks that it runs
"""

from __future__ import annotations

import argparse
import gc
import json
import statistics
import sys
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import anyio

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from mcp.server.mcpserver import MCPServer

from acp_runtime import Connection, ConnectionBuilder, JsonValue, Responder, memory_pair
from acp_runtime.mcp import McpCaller, McpProvider

KINDS = ("plain", "turn_request", "turn_mcp_call")


class Park:
    """Parks until cancelled and stamps the moment its ``finally`` ran."""

    def __init__(self) -> None:
        self.parked = anyio.Event()
        self.done = anyio.Event()
        self.at = 0.0

    async def __call__(self) -> None:
        self.parked.set()
        try:
            await anyio.sleep_forever()
        finally:
            self.at = time.perf_counter()
            self.done.set()


async def run_backend(rounds: int) -> dict[str, Any]:
    park = Park()
    server: MCPServer[Any] = MCPServer("bench")

    @server.tool()
    async def slow() -> str:
        await park()
        return "never"  # pragma: no cover

    provider, caller = McpProvider(), McpCaller()
    client_builder = provider.attach(ConnectionBuilder(role="untyped"))

    async def client_park(method: str, params: JsonValue, responder: Responder[JsonValue]) -> None:
        responder.connection.spawn(
            responder.respond_with, responder.cancellation.run_until_cancelled(park())
        )

    client_builder.on_raw_request(client_park)
    agent_builder = caller.attach(ConnectionBuilder(role="untyped"))
    session_box: list[Any] = []
    works: dict[str, Callable[[Connection], Awaitable[Any]]] = {
        "plain": lambda cx: park(),
        "turn_request": lambda cx: cx.send_raw_request("_bench/park"),
        "turn_mcp_call": lambda cx: session_box[0].call_tool("slow", {}),
    }

    async def agent_work(method: str, params: JsonValue, responder: Responder[JsonValue]) -> None:
        work = works[method.removeprefix("_bench/")](responder.connection)
        responder.connection.spawn(
            responder.respond_with, responder.cancellation.run_until_cancelled(work)
        )

    agent_builder.on_raw_request(agent_work)
    samples: dict[str, list[float]] = {kind: [] for kind in KINDS}
    ours, theirs = memory_pair()
    async with client_builder.connect(ours) as client, agent_builder.connect(theirs) as agent:
        tools = provider.register(client, server, name="bench")
        async with caller.session(agent, tools.server_id) as session:
            session_box.append(session)
            await session.list_tools()  # warm the server's run and the session
            for _ in range(rounds):
                for kind in KINDS:
                    park.parked, park.done = anyio.Event(), anyio.Event()
                    with anyio.fail_after(10):
                        sent = client.send_raw_request(f"_bench/{kind}")
                        await park.parked.wait()
                        start = time.perf_counter()
                        sent.cancel()
                        await park.done.wait()
                        samples[kind].append((park.at - start) * 1e6)
                        try:
                            await sent
                        except Exception:
                            pass
    return {
        kind: {
            "median_us": round(statistics.median(values), 1),
            "p90_us": round(sorted(values)[int(0.9 * (len(values) - 1))], 1),
        }
        for kind, values in samples.items()
    }


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rounds", type=int, default=300)
    parser.add_argument("--quick", action="store_true", help="10 rounds")
    parser.add_argument("--backend", choices=["asyncio", "trio"], action="append")
    parser.add_argument(
        "--gc-off", action="store_true", help="disable the garbage collector (shows its share)"
    )
    args = parser.parse_args(argv)
    if args.gc_off:
        gc.disable()
    rounds = 10 if args.quick else args.rounds
    for backend in args.backend or ["asyncio", "trio"]:
        figures = anyio.run(run_backend, rounds, backend=backend)
        record = {
            "benchmark": "mcp_cancel",
            "backend": backend,
            "rounds": rounds,
            "gc": not args.gc_off,
            **figures,
        }
        print(json.dumps(record))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
