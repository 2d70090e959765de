"""Instructions per message on the runtime's hot paths, for comparing two checkouts.

Each scenario runs one path ``n`` times in this process on asyncio, after a warm-up, with
no other process and no timer in the loop. ``valgrind --tool=callgrind`` counts only
between two marks (``os.getppid()`` after the warm-up, ``os.getpgrp()`` after the last
message), so start-up, imports and warm-up are left out.

* ``send``: an agent builds a ``session/update`` (a text ``agent_message_chunk``: three
  models built in code) and sends it (encode, queue, a transport's non-blocking write,
  here one that discards the line);
* ``receive``: a client reads one ``session/update`` line, decodes and dispatches it to its
  ``session_update`` handler (params validated into models);
* ``ping``: a sequential ``_echo/ping`` round trip, client and agent over two pipes (both
  sides and the event loop counted);
* ``prompt``: the same with ``session/prompt`` answered ``end_turn`` (models both ways).

    python -m bench.message_paths ping --n 1000          # run one scenario (what valgrind runs)
    python -m bench.message_paths --callgrind [--baseline-src OTHER/src ...]   # the table

``--callgrind`` runs every scenario under valgrind for this checkout (and each
``--baseline-src``, with ``PYTHONPATH`` at it), with ``PYTHONHASHSEED=0`` and ``setarch -R``,
``--repeat`` times, each time with the environment padded differently: where objects land
in memory decides which lookups collide in CPython's type attribute cache, which moves a
count by up to 3 % between otherwise identical runs (and not at all between runs with the
same layout). It prints one JSON record per checkout (the median and each run) plus a
Markdown table on stderr (median, range). Uses only
what the runtime had before issue #15, so an older checkout's ``src`` runs the same
scenarios.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import anyio

SCENARIOS = ("send", "receive", "ping", "prompt")
WARMUP = 200
REPO = Path(__file__).resolve().parents[1]


def measuring() -> None:
    """Called when the warm-up is over: callgrind zeroes its counters here."""
    os.getppid()


def measured() -> None:
    """Called when the last message is through: callgrind dumps its counters here."""
    os.getpgrp()


# -- the scenarios (run in the measured process) ---------------------------------------------


def _chunk_builder() -> Callable[[str, str], Any]:
    from acp_generated.v1 import (
        AgentMessageChunkSessionUpdate,
        SessionNotification,
        TextContentBlock,
    )

    def chunk(session_id: str, text: str) -> Any:  # as bench/peers/this_agent.py builds one
        return SessionNotification(
            session_id=session_id,
            update=AgentMessageChunkSessionUpdate(
                session_update="agent_message_chunk",
                content=TextContentBlock(type="text", text=text),
            ),
        )

    return chunk


class _DiscardingSendStream:
    """A byte send stream whose non-blocking write always succeeds and writes nothing."""

    def try_send_nowait(self, item: bytes) -> bool:
        return True

    async def send(self, item: bytes) -> None:
        pass

    async def aclose(self) -> None:
        pass


class _LinesReceiveStream:
    """A byte receive stream that hands out the given chunks, then EOF."""

    def __init__(self, chunks: list[bytes]) -> None:
        self._chunks = iter(chunks)

    async def receive(self, max_bytes: int = 65536) -> bytes:
        try:
            return next(self._chunks)
        except StopIteration:
            raise anyio.EndOfStream from None

    async def aclose(self) -> None:
        pass


async def _send(n: int) -> None:
    from acp_runtime import ConnectionBuilder
    from acp_runtime.transports import LineTransport

    transport = LineTransport(_LinesReceiveStream([]), _DiscardingSendStream())  # type: ignore[arg-type]
    transport._reader.receive = anyio.sleep_forever  # type: ignore[method-assign]  # no EOF
    chunk, text = _chunk_builder(), "x" * 32
    async with ConnectionBuilder(role="agent").connect(transport) as cx:
        for _ in range(WARMUP):
            cx.send_notification(chunk("s-1", text))
        measuring()
        for _ in range(n):
            cx.send_notification(chunk("s-1", text))
        measured()


async def _receive(n: int) -> None:
    from acp_generated.v1 import ClientHandler
    from acp_runtime import ConnectionBuilder
    from acp_runtime.transports import LineTransport

    line = json.dumps(
        {
            "jsonrpc": "2.0",
            "method": "session/update",
            "params": {
                "sessionId": "s-1",
                "update": {
                    "sessionUpdate": "agent_message_chunk",
                    "content": {"type": "text", "text": "x" * 32},
                },
            },
        },
        separators=(",", ":"),
    ).encode()
    seen = 0

    class Client(ClientHandler):
        async def session_update(self, params: Any, cx: Any) -> None:
            nonlocal seen
            seen += 1
            if seen == WARMUP:
                measuring()
            elif seen == WARMUP + n:
                measured()

    builder = ConnectionBuilder(role="client")
    Client().attach(builder)
    chunks = [line + b"\n"] * (WARMUP + n)
    transport = LineTransport(_LinesReceiveStream(chunks), _DiscardingSendStream())  # type: ignore[arg-type]
    async with builder.connect(transport) as cx:
        await cx.wait_incoming_closed()
    assert seen == WARMUP + n, seen


async def _round_trips(n: int, call: Callable[[Any], Awaitable[Any]]) -> None:
    from acp_generated.v1 import ClientHandler
    from acp_runtime import ConnectionBuilder
    from acp_runtime._stdio import FdReceiveStream, FdSendStream
    from acp_runtime.transports import LineTransport
    from bench.peers.this_agent import BenchAgent

    to_agent_r, to_agent_w = os.pipe()
    to_client_r, to_client_w = os.pipe()
    agent_transport = LineTransport(FdReceiveStream(to_agent_r), FdSendStream(to_client_w))
    client_transport = LineTransport(FdReceiveStream(to_client_r), FdSendStream(to_agent_w))
    agent = ConnectionBuilder(role="agent")
    BenchAgent().attach(agent)
    client = ConnectionBuilder(role="client")
    ClientHandler().attach(client)
    async with agent.connect(agent_transport), client.connect(client_transport) as cx:
        for _ in range(WARMUP):
            await call(cx)
        measuring()
        for _ in range(n):
            await call(cx)
        measured()


async def _ping(n: int) -> None:
    await _round_trips(n, lambda cx: cx.send_raw_request("_echo/ping", {"n": 1}))


async def _prompt(n: int) -> None:
    from acp_generated.v1 import PromptRequest, TextContentBlock

    def call(cx: Any) -> Any:
        prompt = [TextContentBlock(type="text", text="noop")]
        return cx.send_request(PromptRequest(session_id="bench-1", prompt=prompt))

    await _round_trips(n, call)


RUN: dict[str, Callable[[int], Awaitable[None]]] = {
    "send": _send,
    "receive": _receive,
    "ping": _ping,
    "prompt": _prompt,
}


# -- the driver (valgrind) ----------------------------------------------------------------


def _instructions(scenario: str, n: int, src: Path | None, layout: int) -> int:
    """Instructions between :func:`measuring` and :func:`measured` in one run; ``layout``
    pads the environment, which moves where the interpreter's objects land in memory."""
    from bench.callgrind import marked_stretches  # the driver's, not the measured child's

    env = {**os.environ, "BENCH_LAYOUT": "x" * (97 * layout)}
    env.pop("PYTHONPATH", None)
    if src is not None:
        env["PYTHONPATH"] = str(src)
    args = ["-m", "bench.message_paths", scenario, "--n", str(n)]
    totals, _ = marked_stretches(args, env=env, cwd=REPO)
    if len(totals) != 1:
        raise RuntimeError(f"{scenario}: {len(totals)} marked stretches, not one")
    return totals[0]


def per_message(scenario: str, n: int, repeat: int, src: Path | None) -> list[int]:
    """Instructions per message in ``repeat`` runs, each with another memory layout."""
    return [round(_instructions(scenario, n, src, layout) / n) for layout in range(repeat)]


def _callgrind(args: argparse.Namespace) -> None:
    scenarios = args.scenario or list(SCENARIOS)
    checkouts: list[tuple[str, Path | None]] = [
        (str(Path(src)), Path(src).resolve()) for src in args.baseline_src
    ]
    checkouts.append(("this", None))
    rows: list[dict[str, Any]] = []
    for label, src in checkouts:
        runs = {scenario: per_message(scenario, args.n, args.repeat, src) for scenario in scenarios}
        record = {
            "kind": "message_paths",
            "src": label,
            "n": args.n,
            "instructions_per_message": {s: statistics.median(r) for s, r in runs.items()},
            "runs": runs,
        }
        rows.append(record)
        print(json.dumps(record), flush=True)
    header = "| scenario | " + " | ".join(r["src"] for r in rows) + " |"
    print(header, file=sys.stderr)
    print("|---" * (len(rows) + 1) + "|", file=sys.stderr)
    for scenario in scenarios:
        cells = [
            f"{statistics.median(r['runs'][scenario]):,.0f} "
            f"({min(r['runs'][scenario]):,}-{max(r['runs'][scenario]):,})"
            for r in rows
        ]
        print(f"| {scenario} | " + " | ".join(cells) + " |", file=sys.stderr)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.message_paths", description=__doc__)
    parser.add_argument("scenario", nargs="*", help=f"one of {', '.join(SCENARIOS)}")
    parser.add_argument("--n", type=int, default=1000, help="messages (one scenario)")
    parser.add_argument("--callgrind", action="store_true", help="instructions per message")
    parser.add_argument("--baseline-src", action="append", default=[], metavar="PATH")
    parser.add_argument("--repeat", type=int, default=5, help="runs (layouts) per figure")
    args = parser.parse_args(argv)
    if args.callgrind:
        _callgrind(args)
        return
    if any(s not in SCENARIOS for s in args.scenario):
        parser.error(f"scenarios are {', '.join(SCENARIOS)}")
    if len(args.scenario) != 1:
        parser.error("name one scenario (or use --callgrind)")
    anyio.run(RUN[args.scenario[0]], args.n, backend="asyncio")


if __name__ == "__main__":
    main()
