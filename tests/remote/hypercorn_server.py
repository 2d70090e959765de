"""Serve an ASGI app with hypercorn on 127.0.0.1 (a free port) for one test, on the test's
own anyio backend (hypercorn has an asyncio and a trio worker)."""

from __future__ import annotations

import os
import socket
from collections.abc import AsyncGenerator
from contextlib import asynccontextmanager
from typing import Any

import anyio
import sniffio
from hypercorn.config import Config


@asynccontextmanager
async def serving(
    app: Any, *, max_frame_bytes: int = 128 * 1024 * 1024, tls: tuple[str, str] | None = None
) -> AsyncGenerator[int, None]:
    """Yield the port ``app`` listens on; leaving the block stops the server. ``tls`` is a
    (certificate file, key file) pair to serve TLS with."""
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    listener.bind(("127.0.0.1", 0))
    listener.listen(64)
    port = listener.getsockname()[1]
    config = Config()
    config.bind = [f"fd://{os.dup(listener.fileno())}"]  # hypercorn closes its fd
    config.graceful_timeout = 0.5
    config.websocket_max_message_size = max_frame_bytes
    config.accesslog = None
    config.errorlog = None
    if tls is not None:
        config.certfile, config.keyfile = tls
    stop = anyio.Event()
    if sniffio.current_async_library() == "trio":
        from hypercorn.trio import serve
    else:
        from hypercorn.asyncio import serve  # type: ignore[assignment]
    try:
        async with anyio.create_task_group() as tg:
            tg.start_soon(lambda: serve(app, config, shutdown_trigger=stop.wait))
            try:
                yield port
            finally:
                stop.set()
    finally:
        listener.close()
