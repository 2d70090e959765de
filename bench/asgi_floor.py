"""What the ASGI server itself costs per WebSocket frame: the floor under ``websocket_app``.

Usage: ``python -m bench.asgi_floor [--runs N] [--echoes N] [--frames N] [--asgi-server
uvicorn]``. A child process serves the least ASGI app there is (accept; echo each text
frame; on ``burst N`` send N frames the size of a benchmark notification; on ``cpu`` answer
its CPU time) under hypercorn or uvicorn (asyncio, as ``bench/peers/this_agent.py``
serves ``websocket_app`` for ``python -m bench --transport websocket``); this process drives it with
``connect_websocket`` and prints the server's CPU time per echoed frame and per frame
sent. No ACP runtime runs on the server side, so whatever ``websocket_app`` costs beyond
these figures is ours.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from typing import Any

import anyio

NOTIFICATION = (
    '{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"bench-1","update":'
    '{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"' + "x" * 32 + '"}}}}'
)
PING = b'{"jsonrpc":"2.0","id":1,"method":"_echo/ping","params":{"n":1}}'


async def app(scope: Any, receive: Any, send: Any) -> None:
    if scope["type"] == "lifespan":
        while (await receive())["type"] == "lifespan.startup":
            await send({"type": "lifespan.startup.complete"})
        await send({"type": "lifespan.shutdown.complete"})
        return
    await receive()
    await send({"type": "websocket.accept"})
    while (message := await receive())["type"] == "websocket.receive":
        text = message["text"]
        if text.startswith("burst "):
            for _ in range(int(text.split()[1])):
                await send({"type": "websocket.send", "text": NOTIFICATION})
        elif text == "cpu":
            await send({"type": "websocket.send", "text": str(time.process_time_ns())})
        else:
            await send({"type": "websocket.send", "text": text})


async def serve() -> None:
    from bench.peers.this_agent import serve_on_loopback

    await serve_on_loopback(app)


async def measure(echoes: int, frames: int) -> tuple[float, float]:
    """Server CPU µs per echo and per frame sent."""
    from acp_runtime.remote import connect_websocket

    command = [sys.executable, "-m", "bench.asgi_floor", "--serve"]
    async with await anyio.open_process(command, stderr=None) as child:
        assert child.stdout is not None and child.stdin is not None
        port = int((await child.stdout.receive()).decode().split()[0])
        try:
            async with connect_websocket(f"ws://127.0.0.1:{port}/acp") as ws:

                async def cpu_ns() -> int:
                    await ws.send(b"cpu")
                    return int(await ws.receive())

                for _ in range(300):  # warm-up
                    await ws.send(PING)
                    await ws.receive()
                start = await cpu_ns()
                for _ in range(echoes):
                    await ws.send(PING)
                    await ws.receive()
                echoed = await cpu_ns()
                await ws.send(f"burst {frames}".encode())
                for _ in range(frames):
                    await ws.receive()
                sent = await cpu_ns()
        finally:
            await child.stdin.aclose()
            await child.wait()
    return (echoed - start) / echoes / 1000, (sent - echoed) / frames / 1000


def main() -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.asgi_floor")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--echoes", type=int, default=5000, help="sequential round trips")
    parser.add_argument("--frames", type=int, default=30000, help="frames in the burst")
    parser.add_argument("--asgi-server", choices=["hypercorn", "uvicorn"], default="hypercorn")
    parser.add_argument("--serve", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    os.environ["BENCH_ASGI_SERVER"] = args.asgi_server  # read by the child's serve_on_loopback
    if args.serve:
        anyio.run(serve)
        return 0
    for run in range(args.runs):
        per_echo, per_frame = anyio.run(measure, args.echoes, args.frames)
        print(
            f"run {run}: {args.asgi_server} + the least ASGI app: server CPU {per_echo:.1f} us "
            f"per echoed frame, {per_frame:.1f} us per frame sent"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
