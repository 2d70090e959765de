"""examples/http_agent.py: one command serves the echo agent over Streamable HTTP and
WebSocket on one path, refuses a missing (401) or wrong (403) token, and on SIGINT ends
the open SSE streams and exits 0."""

from __future__ import annotations

import json
import signal
import sys
from pathlib import Path

import anyio
import httpx
import pytest
from anyio.abc import Process
from httpx_ws import aconnect_ws

from .http_raw import INITIALIZE, Peer, new_session
from .test_ws_example import free_port, listening

pytestmark = pytest.mark.anyio

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "http_agent.py"


async def test_the_http_example_serves_both_transports_and_stops_on_sigint(
    anyio_backend: str,
) -> None:
    port = free_port()
    url = f"http://127.0.0.1:{port}/acp"
    command = [sys.executable, str(EXAMPLE), "--port", str(port), "--token", "t0k"]
    async with await anyio.open_process([*command, "--backend", anyio_backend]) as process:
        try:
            await exercise(process, url)
        finally:
            if process.returncode is None:  # failed: never wait for it for ever
                process.kill()
    assert process.returncode == 0


async def exercise(process: Process, url: str) -> None:
    """Drive the running example, send SIGINT and wait for it to exit."""
    assert process.stdout is not None
    with anyio.fail_after(30):
        await process.stdout.receive()  # "serving ACP on ...", printed before it binds
        await listening(url)
        async with httpx.AsyncClient(timeout=10) as client:
            p = Peer(client, url)
            missing = await p.post(INITIALIZE)
            wrong = await p.post(INITIALIZE, {"authorization": "Bearer nope"})
            auth = {"authorization": "Bearer t0k"}
            cid = (await p.post(INITIALIZE, auth)).headers["acp-connection-id"]
            h = {**auth, "acp-connection-id": cid}
            async with aconnect_ws(
                url, client, headers=auth, keepalive_ping_interval_seconds=None
            ) as ws:
                await ws.send_text(json.dumps(INITIALIZE))
                over_ws = json.loads(await ws.receive_text())
            headers = {**h, "accept": "text/event-stream"}
            async with client.stream("GET", url, headers=headers) as sse:
                assert (await p.post(new_session(), h)).status_code == 202
                chunks = sse.aiter_raw()
                first = await chunks.__anext__()
                process.send_signal(signal.SIGINT)
                rest = b"".join([chunk async for chunk in chunks])
        await process.wait()
    assert (missing.status_code, missing.headers["www-authenticate"]) == (401, "Bearer")
    assert wrong.status_code == 403
    assert over_ws["result"]["agentInfo"]["name"] == "python-echo-agent"
    assert first == b'data: {"jsonrpc":"2.0","id":2,"result":{"sessionId":"sess-1"}}\n\n'
    assert rest == b""
