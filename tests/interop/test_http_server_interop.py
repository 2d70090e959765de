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

from acp_runtime.proxies import VersionRouter
from acp_runtime.remote import acp_app, http_app

from .node_peers import PEERS_DIR, REPO_ROOT
from .test_http_client_interop import ts_http_server

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


# -- the same raw requests to both servers ----------------------------------------------


async def observe(url: str) -> list[tuple[str, object]]:
    """Status, content type and body of what a server answers to good and bad requests
    (except ``initialize``'s body, which is the agent's), and the SSE headers and bytes."""
    seen: list[tuple[str, object]] = []
    json_type = {"content-type": "application/json"}
    long_id = "x" * 1025

    def note(label: str, answer: httpx.Response) -> None:
        seen.append((label, (answer.status_code, answer.headers.get("content-type"), answer.text)))

    async with httpx.AsyncClient(timeout=10) as http:

        async def post(body: object, **headers: str) -> httpx.Response:
            raw = body if isinstance(body, bytes) else json.dumps(body).encode()
            return await http.post(url, content=raw, headers={**json_type, **headers})

        init = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": 1}}
        first = await post(init)
        seen.append(("initialize", (first.status_code, first.headers.get("content-type"))))
        cid = first.headers["acp-connection-id"]
        h = {"acp-connection-id": cid}
        new = {
            "jsonrpc": "2.0",
            "id": 2,
            "method": "session/new",
            "params": {"cwd": "/tmp", "mcpServers": []},
        }

        def prompt(request_id: object, session_id: str | None) -> dict[str, object]:
            params: dict[str, object] = {"prompt": [{"type": "text", "text": "hi"}]}
            if session_id is not None:
                params["sessionId"] = session_id
            return {
                "jsonrpc": "2.0",
                "id": request_id,
                "method": "session/prompt",
                "params": params,
            }

        note("put", await http.put(url, content=b"{}", headers=h))
        note(
            "text body", await http.post(url, content=b"{}", headers={"content-type": "text/plain"})
        )
        note("invalid json", await post(b"{nope"))
        note("batch", await post(b"[1,2]", **h))
        note("scalar", await post(b"42", **h))
        note("no connection", await post(new))
        note("unknown connection", await post(new, **{"acp-connection-id": "nope"}))
        note("initialize again", await post(init, **h))
        note("initialize id null", await post({**init, "id": None}))
        note("long request id", await post({**new, "id": long_id}, **h))
        note("long session id", await post(prompt(3, long_id), **h, **{"acp-session-id": long_id}))
        note(
            "mismatched session",
            await post(prompt(3, "sess-1"), **h, **{"acp-session-id": "sess-2"}),
        )
        note("missing session", await post(prompt(3, None), **h))
        note("get without accept", await http.get(url, headers=h))
        sse = {"accept": "text/event-stream"}
        note("get no connection", await http.get(url, headers=sse))
        note("get unknown", await http.get(url, headers={**sse, "acp-connection-id": "nope"}))
        async with http.stream("GET", url, headers={**sse, **h}) as stream:
            seen.append(
                (
                    "sse headers",
                    sorted(
                        (k, v)
                        for k, v in stream.headers.items()
                        if k in ("content-type", "cache-control", "connection")
                    ),
                )
            )
            note("second reader", await http.get(url, headers={**sse, **h}))
            note("session/new", await post(new, **h))
            chunks = stream.aiter_raw()
            buffer = b""
            while not buffer.endswith(b"\n\n"):
                buffer += await chunks.__anext__()
            seen.append(("event", buffer))
            note("delete", await http.delete(url, headers=h))
        note("delete again", await http.delete(url, headers=h))
        note("delete no connection", await http.delete(url))
    return seen


async def test_our_server_answers_raw_requests_as_the_ts_server_does(node: str) -> None:
    async with ts_http_server(node) as url:
        theirs = await observe(url)
    async with serving(http_app(LoadingEchoAgent)) as port:
        ours = await observe(f"http://127.0.0.1:{port}/acp")
    assert dict(ours) == dict(theirs)
    assert (
        dict(theirs)["event"]
        == b'data: {"jsonrpc":"2.0","id":2,"result":{"sessionId":"sess-1"}}\n\n'
    )
