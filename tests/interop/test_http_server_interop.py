"""ACP over Streamable HTTP: the TypeScript SDK 2.4.0 client (``createHttpStream``,
peers/http_client.mjs) against our ASGI server under hypercorn, on both backends: the
whole flow (permission round trip, file read, both cancellations, ``session/load`` on a
fresh connection), and our server with a VersionRouter behind it."""

from __future__ import annotations

import json
from typing import Any

import anyio
import httpx
import pytest
from remote.http_agent import LoadingEchoAgent  # tests/ is on sys.path (rootdir)
from remote.hypercorn_server import serving

from acp_runtime import VersionRouter
from acp_runtime.remote import acp_app, http_app

from .node_peers import PEERS_DIR, REPO_ROOT

pytestmark = pytest.mark.anyio

FILE_TEXT = "line one\nline two\n"


async def run_http_client(node: str, port: int) -> dict[str, Any]:
    with anyio.fail_after(60):
        done = await anyio.run_process(
            [node, str(PEERS_DIR / "http_client.mjs"), f"http://127.0.0.1:{port}/acp", "/x"],
            check=False,
        )
    assert done.returncode == 0, done.stderr.decode()
    report: dict[str, Any] = json.loads(done.stdout.decode().strip().splitlines()[-1])
    return report


@pytest.mark.parametrize("make_app", [http_app, acp_app])
async def test_the_ts_http_client_against_our_server(node: str, make_app: Any) -> None:
    app = make_app(LoadingEchoAgent)
    async with serving(app) as port:
        report = await run_http_client(node, port)
        http = app.http if hasattr(app, "http") else app
        still_open = [cid for cid in report["connectionIds"] if http.connection(cid) is not None]
    assert report["ok"] is True
    assert report["stopReasons"] == ["end_turn", "end_turn", "cancelled"]
    assert "permission:selected:allow" in report["seen"]
    assert FILE_TEXT in report["seen"]
    assert report["cancelCode"] == -32800
    assert report["loaded"] == {}
    assert report["replayed"] is True
    assert len(report["connectionIds"]) == 2
    assert still_open == []  # both connections were DELETEd


def router() -> VersionRouter:
    import sys

    sys.path.insert(0, str(REPO_ROOT / "examples"))
    try:
        from router_agent import make_router
    finally:
        sys.path.remove(str(REPO_ROOT / "examples"))
    return make_router({1, 2}, 0.0)[0]


async def test_the_ts_http_client_runs_its_v1_flow_through_the_router(node: str) -> None:
    """The router's v1 echo agent has no session/load: the fresh connection only
    initializes; the rest of the flow is the same."""
    async with serving(http_app(router)) as port:
        report = await run_http_client(node, port)
    assert report["stopReasons"] == ["end_turn", "end_turn", "cancelled"]
    assert "permission:selected:allow" in report["seen"]
    assert FILE_TEXT in report["seen"]
    assert report["cancelCode"] == -32800
    assert report["loaded"] == "unsupported"


async def test_protocol_versions_through_the_router_over_http() -> None:
    answers: list[tuple[int, Any]] = []
    async with serving(http_app(router)) as port, httpx.AsyncClient() as http:
        for version in (1, 2, 3, "1", 0):
            request = {
                "jsonrpc": "2.0",
                "id": 1,
                "method": "initialize",
                "params": {"protocolVersion": version, "info": {"name": "t", "version": "1"}},
            }
            answer = await http.post(f"http://127.0.0.1:{port}/acp", json=request)
            assert "acp-connection-id" in answer.headers
            answers.append((answer.status_code, answer.json()))
    assert [status for status, _ in answers] == [200] * 5
    assert [a["result"]["protocolVersion"] for _, a in answers[:3]] == [1, 2, 2]
    assert (answers[3][1]["error"]["code"], answers[3][1]["error"]["data"]) == (
        -32602,
        "initialize.protocolVersion must be a valid ACP protocol version",
    )
    assert answers[4][1]["error"] == {
        "code": -32022,
        "message": answers[4][1]["error"]["message"],
        "data": {"requested": 0, "supported": [1, 2]},
    }
