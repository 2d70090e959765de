"""A TCP server for one test: ``handle`` serves each accepted socket, on a free port of
127.0.0.1 (the hand-written WebSocket and proxy servers of the client tests)."""

from __future__ import annotations

from collections.abc import AsyncGenerator, Awaitable, Callable
from contextlib import asynccontextmanager

import anyio
import anyio.abc


@asynccontextmanager
async def tcp_serving(
    handle: Callable[[anyio.abc.SocketStream], Awaitable[None]],
) -> AsyncGenerator[int, None]:
    """Yield the port; leaving the block stops the server and every socket it serves."""
    listener = await anyio.create_tcp_listener(local_host="127.0.0.1")
    async with listener, anyio.create_task_group() as tg:
        tg.start_soon(listener.serve, handle)
        yield listener.extra(anyio.abc.SocketAttribute.local_port)
        tg.cancel_scope.cancel()
