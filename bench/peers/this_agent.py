"""Benchmark agent on this SDK (``acp_runtime`` + ``acp_generated.v1``), over stdio.

The three benchmark agents (this file, ``pypi_agent.py``, ``ts_agent.mjs``) answer the
same small command language, written the way each SDK's docs suggest:

* ``session/prompt`` text ``noop``: answer ``end_turn`` at once;
* ``chunks <n> size <s>``: n ``agent_message_chunk`` updates of s times ``x``, each
  awaited (as the tutorial's agent and the TS agent do), then ``end_turn``;
* ``wait-cancel``: one chunk ``ready``, then wait until the request is cancelled
  (``$/cancel_request``) and answer -32800 with ``data.observedNs``: the
  CLOCK_MONOTONIC time (ns) at which the handler saw the marker set;
* ``_echo/ping``: ``{"pong": params}``; ``_bench/stats``: ``{"maxRssKb": peak RSS,
  "cpuNs": CPU time used so far, "asyncLibrary": the backend it runs on}``.
"""

from __future__ import annotations

import os
import re
import resource
import sys
import time
from typing import TYPE_CHECKING

import anyio

from acp_generated.v1 import (
    AgentCapabilities,
    AgentHandler,
    AgentMessageChunkSessionUpdate,
    InitializeRequest,
    InitializeResponse,
    NewSessionRequest,
    NewSessionResponse,
    PromptRequest,
    PromptResponse,
    SessionNotification,
    TextContentBlock,
)
from acp_runtime import (
    ConnectionBuilder,
    ErrorCode,
    JsonValue,
    RequestError,
    Responder,
    stdio_transport,
)

_CHUNKS = re.compile(r"chunks (\d+) size (\d+)")

if TYPE_CHECKING:
    import socket
    from collections.abc import Awaitable, Callable


def max_rss_kb() -> int:
    """Peak resident set size of this process, in KiB (Linux ``ru_maxrss``)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss


def _chunk(session_id: str, text: str) -> SessionNotification:
    return SessionNotification(
        session_id=session_id,
        update=AgentMessageChunkSessionUpdate(
            session_update="agent_message_chunk", content=TextContentBlock(type="text", text=text)
        ),
    )


class BenchAgent(AgentHandler):
    async def initialize(
        self, params: InitializeRequest, responder: Responder[InitializeResponse]
    ) -> InitializeResponse:
        return InitializeResponse(protocol_version=1, agent_capabilities=AgentCapabilities())

    async def new_session(
        self, params: NewSessionRequest, responder: Responder[NewSessionResponse]
    ) -> NewSessionResponse:
        return NewSessionResponse(session_id="bench-1")

    async def prompt(
        self, params: PromptRequest, responder: Responder[PromptResponse]
    ) -> PromptResponse | None:
        text = "".join(b.text for b in params.prompt if isinstance(b, TextContentBlock)).strip()
        cx = responder.connection
        if text == "wait-cancel":
            cx.send_notification(_chunk(params.session_id, "ready"))
            cx.spawn(self._answer_when_cancelled, responder)  # IN-5: keep the loop reading
            return None
        if m := _CHUNKS.fullmatch(text):
            piece = "x" * int(m[2])
            for _ in range(int(m[1])):
                await cx.send_notification(_chunk(params.session_id, piece))
        return PromptResponse(stop_reason="end_turn")

    async def _answer_when_cancelled(self, responder: Responder[PromptResponse]) -> None:
        await responder.cancellation.cancelled()
        observed = time.perf_counter_ns()
        responder.respond_with_error(
            RequestError(ErrorCode.REQUEST_CANCELLED, "Request cancelled", {"observedNs": observed})
        )

    async def ext_method(
        self, method: str, params: JsonValue, responder: Responder[JsonValue]
    ) -> JsonValue:
        if method == "_echo/ping":
            return {"pong": params}
        if method == "_bench/stats":
            import sniffio  # here, not at the top: the cold start benchmark runs this file

            return {
                "maxRssKb": max_rss_kb(),
                "cpuNs": time.process_time_ns(),
                "asyncLibrary": sniffio.current_async_library(),
            }
        raise RequestError.method_not_found(method)


async def serve() -> None:
    builder = ConnectionBuilder(role="agent")
    BenchAgent().attach(builder)
    await builder.serve(stdio_transport())


async def serve_remote() -> None:
    """``BENCH_TRANSPORT=websocket`` (``http``): the same agent behind ``websocket_app``
    (``http_app``) under hypercorn on 127.0.0.1 (port printed on stdout) until stdin
    closes."""
    from acp_runtime.remote import http_app, websocket_app

    http = os.environ.get("BENCH_TRANSPORT") == "http"
    await serve_on_loopback(http_app(BenchAgent) if http else websocket_app(BenchAgent))


async def serve_on_loopback(app: object) -> None:
    """Serve the ASGI ``app`` on a free port of 127.0.0.1, printed on stdout, until stdin
    closes: under hypercorn (the running backend's worker), under uvicorn (asyncio)
    when ``BENCH_ASGI_SERVER=uvicorn``, or on the WebSocket app's own listener
    (``WebSocketApp.serve``) when ``BENCH_ASGI_SERVER=direct``."""
    import socket

    async def stdin_closed() -> None:
        await anyio.to_thread.run_sync(sys.stdin.buffer.read, abandon_on_cancel=True)

    if os.environ.get("BENCH_ASGI_SERVER") == "direct":
        await _direct(app, stdin_closed)
        return
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(16)
    print(listener.getsockname()[1], flush=True)
    if os.environ.get("BENCH_ASGI_SERVER") == "uvicorn":
        await _uvicorn(app, listener, stdin_closed)
    else:
        await _hypercorn(app, listener, stdin_closed)


async def _hypercorn(
    app: object, listener: socket.socket, until: Callable[[], Awaitable[None]]
) -> None:
    import sniffio
    from hypercorn.config import Config

    config = Config()
    config.bind = [f"fd://{listener.fileno()}"]
    config.accesslog = config.errorlog = None
    config.websocket_max_message_size = 64 * 1024 * 1024
    if sniffio.current_async_library() == "trio":
        from hypercorn.trio import serve as hypercorn_serve
    else:
        from hypercorn.asyncio import serve as hypercorn_serve  # type: ignore[assignment]
    await hypercorn_serve(app, config, shutdown_trigger=until)  # type: ignore[arg-type]


async def _direct(app: object, until: Callable[[], Awaitable[None]]) -> None:
    """``app.serve``: the WebSocket app on its own listener, no ASGI server."""
    from acp_runtime.remote import WebSocketApp

    assert isinstance(app, WebSocketApp), "only the WebSocket app serves on its own"
    async with anyio.create_task_group() as tg:
        print(await tg.start(app.serve, "127.0.0.1", 0), flush=True)
        await until()
        tg.cancel_scope.cancel()


async def _uvicorn(
    app: object, listener: socket.socket, until: Callable[[], Awaitable[None]]
) -> None:
    import uvicorn

    config = uvicorn.Config(
        app,  # type: ignore[arg-type]
        ws="websockets-sansio",
        http="httptools",
        ws_max_size=64 * 1024 * 1024,
        lifespan="off",
        log_level="warning",
        access_log=False,
        timeout_graceful_shutdown=2,  # open SSE streams would hold the shutdown for good
    )
    config.load()
    server = uvicorn.Server(config)
    server.lifespan = config.lifespan_class(config)
    await server.startup(sockets=[listener])
    try:
        await until()
    finally:
        server.should_exit = True
        await server.shutdown(sockets=[listener])


if __name__ == "__main__":
    remote = os.environ.get("BENCH_TRANSPORT") in ("websocket", "http")
    main = serve_remote if remote else serve
    backend = sys.argv[1] if len(sys.argv) > 1 else os.environ.get("BENCH_AGENT_BACKEND")
    anyio.run(main, backend=backend or "asyncio")
