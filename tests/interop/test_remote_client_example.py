"""examples/remote_client.py talks to the TypeScript echo agent at a URL, over Streamable
HTTP and over WebSocket (peers/http_server.mjs serves both on one port), on both backends."""

from __future__ import annotations

import sys

import anyio
import pytest

from .node_peers import REPO_ROOT
from .test_http_client_interop import ts_http_server

pytestmark = pytest.mark.anyio

EXAMPLE = REPO_ROOT / "examples" / "remote_client.py"


@pytest.mark.parametrize("scheme", ["http", "ws"])
async def test_the_remote_client_example(node: str, anyio_backend: str, scheme: str) -> None:
    async with ts_http_server(node) as url:
        command = [sys.executable, str(EXAMPLE), url.replace("http", scheme, 1)]
        command += ["--prompt", "hi there", "--prompt", "permission", "--backend", anyio_backend]
        with anyio.fail_after(60):
            done = await anyio.run_process(command, check=False)
    out = done.stdout.decode()
    assert done.returncode == 0, done.stderr.decode()
    assert "-> initialize: ts-echo-agent 1.0.0, protocol 1" in out
    assert "-> session/new: sess-1" in out
    assert "agent: hi there" in out
    assert "[permission] 'Echo permission': answering 'Allow'" in out
    assert "permission:selected:allow" in out
    assert out.count("<- stopReason end_turn") == 2
