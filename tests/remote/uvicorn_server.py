"""Serve an ASGI app with uvicorn on 127.0.0.1 (a free port) for one test: the second ASGI
server our apps are checked under (asyncio only: uvicorn has no trio worker). Its
WebSocket protocol is the ``websockets`` package and its HTTP parser ``httptools``, not
hypercorn's wsproto and h11, so a test passing under both does not lean on one server's
reading of the ASGI spec."""

from __future__ import annotations

import socket
from collections.abc import AsyncGenerator
from contextlib import asynccontextmanager
from typing import Any

import uvicorn


@asynccontextmanager
async def serving(
    app: Any, *, max_frame_bytes: int = 128 * 1024 * 1024
) -> AsyncGenerator[int, None]:
    """Yield the port ``app`` listens on; leaving the block stops the server."""
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    listener.bind(("127.0.0.1", 0))
    listener.listen(64)
    config = uvicorn.Config(
        app,
        ws="websockets-sansio",
        http="httptools",
        ws_max_size=max_frame_bytes,
        lifespan="off",
        log_level="warning",
        access_log=False,
        timeout_graceful_shutdown=1,
    )
    config.load()
    server = uvicorn.Server(config)
    server.lifespan = config.lifespan_class(config)
    try:
        await server.startup(sockets=[listener])  # listening once this returns
        try:
            yield listener.getsockname()[1]
        finally:
            server.should_exit = True
            await server.shutdown(sockets=[listener])
    finally:
        listener.close()
