"""Serve a :class:`~acp_runtime.remote.WebSocketApp` on a socket of its own
(:meth:`~acp_runtime.remote.WebSocketApp.serve`, no ASGI server) for one test: the same
``serving(app)`` shape as :mod:`.hypercorn_server`, so the wire tests run against both."""

from __future__ import annotations

from collections.abc import AsyncGenerator
from contextlib import asynccontextmanager
from typing import Any

import anyio

from acp_runtime.remote import WebSocketApp


@asynccontextmanager
async def serving(app: Any) -> AsyncGenerator[int, None]:
    """Yield the port ``app`` listens on (127.0.0.1); leaving the block stops it."""
    assert isinstance(app, WebSocketApp), "only the WebSocket app serves on its own"
    async with anyio.create_task_group() as tg:
        port: int = await tg.start(app.serve, "127.0.0.1", 0)
        try:
            yield port
        finally:
            tg.cancel_scope.cancel()
