"""One agent for v1 and v2 over WebSocket: the factory returns a fresh ``VersionRouter``
(examples/router_agent.py's) per socket, and ``initialize.params.protocolVersion`` picks."""

from __future__ import annotations

import json
from collections.abc import Callable
from contextlib import AbstractAsyncContextManager
from typing import Any

import anyio
import httpx
import pytest
from httpx_ws import aconnect_ws

from acp_runtime.proxies import VersionRouter
from acp_runtime.remote import websocket_app

pytestmark = pytest.mark.anyio

Serving = Callable[..., AbstractAsyncContextManager[int]]
"""``serving(app)`` of the WebSocket server under test (the ``websocket_server`` fixture)."""


def router() -> VersionRouter:
    from router_agent import make_router  # examples/, put on sys.path by conftest

    return make_router({1, 2}, 0.0)[0]


async def initialize(port: int, version: object) -> Any:
    request = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {"protocolVersion": version, "info": {"name": "t", "version": "1"}},
    }
    async with httpx.AsyncClient() as http:
        url = f"http://127.0.0.1:{port}/acp"
        async with aconnect_ws(url, http, keepalive_ping_interval_seconds=None) as ws:
            await ws.send_text(json.dumps(request))
            with anyio.fail_after(5):
                return json.loads(await ws.receive_text())


async def test_the_requested_version_picks_the_handler_set_per_socket(
    websocket_server: Serving,
) -> None:
    async with websocket_server(websocket_app(router)) as port:
        answers = [await initialize(port, v) for v in (1, 2, 3)]
        chosen = [answer["result"]["protocolVersion"] for answer in answers]
        unsupported = await initialize(port, 0)
    assert chosen == [1, 2, 2]
    assert unsupported["error"]["code"] == -32022
    assert unsupported["error"]["data"]["supported"] == [1, 2]
