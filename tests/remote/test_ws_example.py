"""examples/ws_agent.py: one command serves the tutorial agent over WebSocket (on its own
listener, or under hypercorn), refuses a wrong token, and closes open sockets with 1001 on
SIGINT, exiting 0."""

from __future__ import annotations

import signal
import socket
import sys
from pathlib import Path

import anyio
import httpx
import pytest

from acp_generated import v1
from acp_runtime import ConnectionBuilder
from acp_runtime.remote import WebSocketUpgradeError, connect_websocket

pytestmark = pytest.mark.anyio

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "ws_agent.py"


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


async def listening(url: str) -> None:
    for _ in range(100):  # until the server listens
        try:
            async with httpx.AsyncClient() as client:
                await client.get(url.replace("ws://", "http://"))
            return
        except httpx.ConnectError:
            await anyio.sleep(0.1)
    raise AssertionError("the example never listened")


@pytest.mark.parametrize("server", ["own", "hypercorn"])
async def test_the_websocket_example_serves_refuses_and_stops_on_sigint(
    anyio_backend: str, server: str
) -> None:
    backend = anyio_backend  # the example serves on the backend the test runs on
    port = free_port()
    url = f"ws://127.0.0.1:{port}/acp"
    command = [
        sys.executable,
        str(EXAMPLE),
        "--port",
        str(port),
        "--token",
        "t0k",
        "--backend",
        backend,
        "--server",
        server,
    ]
    async with await anyio.open_process(command) as process:
        with anyio.fail_after(30):
            await listening(url)
            with pytest.raises(WebSocketUpgradeError) as refused:
                async with connect_websocket(url, headers={"Authorization": "Bearer nope"}):
                    pass
            assert refused.value.status_code == 403
            headers = {"Authorization": "Bearer t0k"}
            async with connect_websocket(url, headers=headers) as transport:
                async with ConnectionBuilder(role="client").connect(transport) as cx:
                    agent = v1.RemoteAgent(cx)
                    await agent.initialize(protocol_version=1)
                    session = await agent.new_session(cwd=str(EXAMPLE.parent), mcp_servers=[])
                    assert session.session_id == "session-1"
                    process.send_signal(signal.SIGINT)
                    await cx.wait_incoming_closed()
            assert transport.close_code == 1001
            await process.wait()
    assert process.returncode == 0
