"""The floor: the benchmark agent's command language with no SDK at all.

Plain asyncio pipe transports, the readiness callback parsing each line with
:mod:`json` and answering at once: no models, no validation, no tasks, no
cancellation bookkeeping beyond the one ``wait-cancel`` turn. What a round trip costs
here is what the pipes, the event loop and the JSON codec cost on this machine, so
no Python SDK can beat it by much; the suite reports it beside the real
implementations to say where the bound is. Same commands as ``this_agent.py``.

With ``BENCH_TRANSPORT=websocket`` it serves one WebSocket connection on 127.0.0.1
instead (port printed on stdout, until stdin closes): the handshake read by hand and
RFC 6455 framing in a few lines (``bench/peers/floor_websocket.py``), each text frame
one message, as the SDKs' servers do it, with nothing else (no limits, no close
handshake, no ping).
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import resource
import sys
import time
from typing import Any

from floor_websocket import handshake_answer, server_frame, unmasked_frames

_CHUNKS = re.compile(r"chunks (\d+) size (\d+)")


class FloorAgent(asyncio.Protocol):
    def __init__(self, out: asyncio.WriteTransport, done: asyncio.Future[None]) -> None:
        self._out = out
        self._done = done
        self._buffer = b""
        self._waiting_cancel: Any = None

    def data_received(self, data: bytes) -> None:
        *lines, self._buffer = (self._buffer + data).split(b"\n")
        for line in lines:
            if line:
                self._handle(json.loads(line))

    def connection_lost(self, exc: Exception | None) -> None:
        if not self._done.done():
            self._done.set_result(None)

    def _send(self, message: dict[str, Any]) -> None:
        self._write(json.dumps(message, separators=(",", ":")).encode())

    def _write(self, payload: bytes) -> None:
        self._out.write(payload + b"\n")

    def _answer(self, request_id: Any, result: Any) -> None:
        self._send({"jsonrpc": "2.0", "id": request_id, "result": result})

    def _chunk(self, session_id: str, text: str) -> None:
        update = {
            "sessionUpdate": "agent_message_chunk",
            "content": {"type": "text", "text": text},
        }
        self._send(
            {
                "jsonrpc": "2.0",
                "method": "session/update",
                "params": {"sessionId": session_id, "update": update},
            }
        )

    def _handle(self, message: dict[str, Any]) -> None:
        method, params = message.get("method"), message.get("params") or {}
        if "id" not in message:
            if method == "$/cancel_request" and params.get("requestId") == self._waiting_cancel:
                observed = time.perf_counter_ns()
                data = {"observedNs": observed}
                error = {"code": -32800, "message": "Request cancelled", "data": data}
                self._send({"jsonrpc": "2.0", "id": self._waiting_cancel, "error": error})
                self._waiting_cancel = None
            return
        request_id = message["id"]
        if method == "initialize":
            self._answer(request_id, {"protocolVersion": 1, "agentCapabilities": {}})
        elif method == "session/new":
            self._answer(request_id, {"sessionId": "bench-1"})
        elif method == "session/prompt":
            text = "".join(b.get("text", "") for b in params["prompt"]).strip()
            if text == "wait-cancel":
                self._chunk(params["sessionId"], "ready")
                self._waiting_cancel = request_id
                return
            if m := _CHUNKS.fullmatch(text):
                piece = "x" * int(m[2])
                for _ in range(int(m[1])):
                    self._chunk(params["sessionId"], piece)
            self._answer(request_id, {"stopReason": "end_turn"})
        elif method == "_echo/ping":
            self._answer(request_id, {"pong": params})
        elif method == "_bench/stats":
            rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
            self._answer(request_id, {"maxRssKb": rss, "cpuNs": time.process_time_ns()})
        else:
            error = {"code": -32601, "message": "Method not found"}
            self._send({"jsonrpc": "2.0", "id": request_id, "error": error})


class WebSocketFloorAgent(FloorAgent, asyncio.Protocol):
    """The same agent on a socket: the upgrade answered, then one message per text frame."""

    def __init__(self, done: asyncio.Future[None]) -> None:
        super().__init__(None, done)  # type: ignore[arg-type]  # set in connection_made
        self._open = False

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self._out = transport  # type: ignore[assignment]

    def data_received(self, data: bytes) -> None:
        self._buffer += data
        if not self._open:
            head, found, rest = self._buffer.partition(b"\r\n\r\n")
            if not found:
                return
            self._out.write(handshake_answer(head))
            self._open, self._buffer = True, rest
        messages, self._buffer = unmasked_frames(self._buffer)
        for message in messages:
            self._handle(json.loads(message))

    def _write(self, payload: bytes) -> None:
        self._out.write(server_frame(payload))


async def serve_websocket() -> None:
    loop = asyncio.get_running_loop()
    done: asyncio.Future[None] = loop.create_future()
    server = await loop.create_server(lambda: WebSocketFloorAgent(done), "127.0.0.1", 0)
    print(server.sockets[0].getsockname()[1], flush=True)
    await loop.run_in_executor(None, sys.stdin.buffer.read)  # until the driver closes stdin
    server.close()


async def serve() -> None:
    loop = asyncio.get_running_loop()
    out, _ = await loop.connect_write_pipe(asyncio.Protocol, sys.stdout)
    done: asyncio.Future[None] = loop.create_future()
    await loop.connect_read_pipe(lambda: FloorAgent(out, done), sys.stdin)
    await done


if __name__ == "__main__":
    asyncio.run(serve_websocket() if os.environ.get("BENCH_TRANSPORT") == "websocket" else serve())
