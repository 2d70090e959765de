"""The WebSocket server mounted or on its own listener: ``serve_websocket`` and
``WebSocketApp.serve`` take what ``websocket_app`` takes, and ``task_status`` reports the
port bound as an int."""

from __future__ import annotations

from collections.abc import Mapping
from functools import partial

import anyio
from typing_extensions import reveal_type

from acp_generated.v1 import AgentHandler
from acp_runtime import ConnectionBuilder
from acp_runtime.proxies import VersionRouter
from acp_runtime.remote import Refusal, WebSocketApp, serve_websocket, websocket_app


class Agent(AgentHandler):
    pass


def router() -> VersionRouter:
    return VersionRouter(v1=ConnectionBuilder(role="agent"))


async def refuse(headers: Mapping[str, str]) -> bool | Refusal:
    return Refusal(401, challenge="Bearer")


def takes_app(app: WebSocketApp) -> None: ...


async def use() -> None:
    app = websocket_app(router, authenticate=refuse, idle_timeout=30.0)
    reveal_type(app)  # expect: WebSocketApp
    reveal_type(app.max_message_bytes)  # expect: int
    async with anyio.create_task_group() as tg:
        await tg.start(app.serve, "127.0.0.1", 0)
        await tg.start(partial(serve_websocket, Agent, port=0, stall_timeout=None))
        tg.cancel_scope.cancel()
    takes_app(app)
    await serve_websocket(Agent, port="8000")  # expect-error
    await serve_websocket(Agent, idle_timeout="soon")  # expect-error
    await serve_websocket(42)  # expect-error
    await app.serve(port=None)  # expect-error
    await app.serve("127.0.0.1", 0, task_status=42)  # expect-error
