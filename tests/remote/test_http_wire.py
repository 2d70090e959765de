"""The Streamable HTTP server's wire with raw httpx: statuses and texts of the TS SDK 2.4.0
server (with the lenient changes of the notes), exact SSE bytes, one reader per stream,
routing of each agent message to its stream, buffering before a reader attaches, DELETE."""

from __future__ import annotations

import json
import re
import uuid
from collections.abc import AsyncIterator
from typing import Any

import anyio
import httpx
import pytest

from acp_runtime import ConnectionBuilder, RequestError, Responder
from acp_runtime.remote import http_app

from .http_agent import LoadingEchoAgent
from .http_raw import INITIALIZE, SSE, Peer, new_session, peer, prompt
from .hypercorn_server import serving

pytestmark = pytest.mark.anyio

UUID4 = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}")


async def test_initialize_answers_200_with_the_json_and_a_uuid4_connection_id() -> None:
    async with peer(http_app(LoadingEchoAgent)) as p:
        answer = await p.post(INITIALIZE)
    assert answer.status_code == 200
    assert UUID4.fullmatch(answer.headers["acp-connection-id"])
    assert answer.headers["content-type"] == "application/json"
    assert answer.content == (
        b'{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":1,"agentCapabilities":'
        b'{"loadSession":true},"agentInfo":{"name":"python-echo-agent","version":"1.0.0"}}}'
    )


async def test_sse_headers_and_event_bytes_are_the_ts_ones_including_multibyte_text() -> None:
    async with peer(http_app(LoadingEchoAgent)) as p:
        cid = await p.initialize()
        headers = {"acp-connection-id": cid}
        async with p.stream(cid) as connection:
            assert connection.response.status_code == 200
            assert connection.response.headers["content-type"] == "text/event-stream"
            assert connection.response.headers["cache-control"] == "no-cache"
            assert connection.response.headers["connection"] == "keep-alive"
            accepted = await p.post(new_session(), headers)
            assert (accepted.status_code, accepted.content) == (202, b"")
            assert await connection.next() == (
                b'data: {"jsonrpc":"2.0","id":2,"result":{"sessionId":"sess-1"}}\n\n'
            )
            async with p.stream(cid, "sess-1") as session:
                scoped = {**headers, "acp-session-id": "sess-1"}
                assert (await p.post(prompt(3, "sess-1", "é"), scoped)).status_code == 202
                assert await session.next() == (
                    b'data: {"jsonrpc":"2.0","method":"session/update","params":{"sessionId":'
                    b'"sess-1","update":{"content":{"text":"\xc3\xa9","type":"text"},'
                    b'"sessionUpdate":"agent_message_chunk"}}}\n\n'
                )
                assert await session.next() == (
                    b'data: {"jsonrpc":"2.0","id":3,"result":{"stopReason":"end_turn"}}\n\n'
                )


async def test_a_waiting_reader_gets_keep_alive_comments() -> None:
    async with peer(http_app(LoadingEchoAgent, keep_alive=0.05)) as p:
        cid = await p.initialize()
        async with p.stream(cid) as connection:
            assert await connection.next() == b":\n\n"
            assert await connection.next() == b":\n\n"


async def test_one_reader_per_stream_and_a_gone_reader_frees_it() -> None:
    async with peer(http_app(LoadingEchoAgent)) as p:
        cid = await p.initialize()
        for session_id in (None, "sess-9"):
            async with p.stream(cid, session_id) as first:
                assert first.response.status_code == 200
                async with p.stream(cid, session_id) as second:
                    assert second.response.status_code == 409
                    await second.response.aread()
                    assert second.response.text == "Outbound stream already has an active receiver"
            with anyio.fail_after(5):
                while True:  # the server sees the disconnect a moment later
                    async with p.stream(cid, session_id) as again:
                        if again.response.status_code == 200:
                            break
                    await anyio.sleep(0.02)


async def test_output_before_any_reader_is_buffered_and_delivered_in_order() -> None:
    async with peer(http_app(LoadingEchoAgent)) as p:
        cid = await p.initialize()
        headers = {"acp-connection-id": cid}
        assert (await p.post(new_session(), headers)).status_code == 202
        assert (await p.post(prompt(3, "sess-1", "abc"), headers)).status_code == 202
        await anyio.sleep(0.2)
        async with p.stream(cid, "sess-1") as session:
            texts = [(await session.message())["params"]["update"]["content"]["text"]]
            texts += [(await session.message())["params"]["update"]["content"]["text"]]
            texts += [(await session.message())["params"]["update"]["content"]["text"]]
            assert texts == ["a", "b", "c"]
            assert (await session.message())["result"] == {"stopReason": "end_turn"}
        async with p.stream(cid) as connection:
            assert (await connection.message())["result"] == {"sessionId": "sess-1"}


async def test_server_requests_and_their_answers_are_routed_by_session() -> None:
    """The permission request goes to the session stream; its answer is taken with the
    session header, without it, but not with another session's."""
    async with peer(http_app(LoadingEchoAgent)) as p:
        cid = await p.initialize()
        headers = {"acp-connection-id": cid}
        await p.post(new_session(), headers)
        async with p.stream(cid, "sess-1") as session:
            for answer_headers, expected in (
                ({**headers, "acp-session-id": "sess-1"}, 202),
                (headers, 202),
                ({**headers, "acp-session-id": "sess-2"}, 400),
            ):
                assert (await p.post(prompt(3, "sess-1", "permission"), headers)).status_code == 202
                request = await session.message()
                assert request["method"] == "session/request_permission"
                answer = {
                    "jsonrpc": "2.0",
                    "id": request["id"],
                    "result": {"outcome": {"outcome": "selected", "optionId": "allow"}},
                }
                posted = await p.post(answer, answer_headers)
                assert posted.status_code == expected
                if expected == 400:
                    assert posted.text == "Mismatched Acp-Session-Id"
                    # refused, not consumed: the right header is still taken after it
                    right = {**headers, "acp-session-id": "sess-1"}
                    assert (await p.post(answer, right)).status_code == 202
                    assert (await session.message())["method"] == "session/update"
                    assert (await session.message())["result"] == {"stopReason": "end_turn"}
                    continue
                update = await session.message()
                assert update["params"]["update"]["content"]["text"] == "permission:selected:allow"
                assert (await session.message())["result"] == {"stopReason": "end_turn"}


async def test_session_load_answers_on_the_connection_stream_and_replays_on_the_session() -> None:
    async with peer(http_app(LoadingEchoAgent)) as p:
        cid = await p.initialize()
        headers = {"acp-connection-id": cid, "acp-session-id": "sess-7"}
        load = {
            "jsonrpc": "2.0",
            "id": 5,
            "method": "session/load",
            "params": {"sessionId": "sess-7", "cwd": "/tmp", "mcpServers": []},
        }
        async with p.stream(cid) as connection, p.stream(cid, "sess-7") as session:
            assert (await p.post(load, headers)).status_code == 202
            replay = await session.message()
            assert replay["params"]["update"]["content"]["text"] == "replay sess-7"
            assert await connection.message() == {"jsonrpc": "2.0", "id": 5, "result": {}}


async def test_params_session_id_is_enough_but_a_different_header_is_refused() -> None:
    async with peer(http_app(LoadingEchoAgent)) as p:
        cid = await p.initialize()
        headers = {"acp-connection-id": cid}
        await p.post(new_session(), headers)
        other = {**headers, "acp-session-id": "sess-2"}
        refused = await p.post(prompt(3, "sess-1", "x"), other)
        assert (refused.status_code, refused.text) == (400, "Mismatched Acp-Session-Id")
        missing = {"jsonrpc": "2.0", "id": 4, "method": "session/prompt", "params": {}}
        refused = await p.post(missing, headers)
        assert (refused.status_code, refused.text) == (400, "Missing Acp-Session-Id")
        async with p.stream(cid, "sess-1") as session:
            assert (await p.post(prompt(3, "sess-1", "x"), headers)).status_code == 202
            assert (await session.message())["method"] == "session/update"


async def test_delete_ends_every_stream_cleanly_and_a_second_delete_is_404() -> None:
    async with peer(http_app(LoadingEchoAgent)) as p:
        cid = await p.initialize()
        headers = {"acp-connection-id": cid}
        async with p.stream(cid) as connection, p.stream(cid, "sess-1") as session:
            deleted = await p.client.delete(p.url, headers=headers)
            assert (deleted.status_code, deleted.content) == (202, b"")
            assert await connection.rest() == b""
            assert await session.rest() == b""
        again = await p.client.delete(p.url, headers=headers)
        assert (again.status_code, again.text) == (404, "Unknown Acp-Connection-Id")
        after = await p.post(new_session(), headers)
        assert after.status_code == 404
        async with p.stream(cid) as gone:
            assert gone.response.status_code == 404


def _initialize_fails() -> ConnectionBuilder:
    builder = ConnectionBuilder(role="untyped")

    async def handle(method: str, params: Any, responder: Responder[Any]) -> Any:
        if method == "initialize":
            raise RequestError(-32022, "Unsupported protocol version")
        return {"method": method}

    builder.on_raw_request(handle)
    return builder


async def test_an_initialize_error_is_200_with_the_header_and_the_connection_is_kept() -> None:
    async with peer(http_app(_initialize_fails)) as p:
        answer = await p.post(INITIALIZE)
        assert answer.status_code == 200
        assert answer.json()["error"]["code"] == -32022
        cid = answer.headers["acp-connection-id"]
        async with p.stream(cid) as connection:
            ping = {"jsonrpc": "2.0", "id": 2, "method": "x/ping"}
            assert (await p.post(ping, {"acp-connection-id": cid})).status_code == 202
            assert await connection.message() == {
                "jsonrpc": "2.0",
                "id": 2,
                "result": {"method": "x/ping"},
            }


async def test_every_refusal_has_the_ts_status_and_text() -> None:
    long_id = "x" * 1025
    async with peer(http_app(LoadingEchoAgent, max_message_bytes=4000)) as p:
        cid = await p.initialize()
        h = {"acp-connection-id": cid}
        json_type = {"content-type": "application/json"}
        cases: list[tuple[Any, tuple[int, str]]] = [
            (p.client.put(p.url, content=b"{}"), (405, "Method Not Allowed")),
            (p.client.patch(p.url, content=b"{}"), (405, "Method Not Allowed")),
            (
                p.client.post(p.url, content=b"{}", headers={"content-type": "text/plain"}),
                (415, "Unsupported Media Type"),
            ),
            (p.client.post(p.url, content=b"{}"), (415, "Unsupported Media Type")),
            (p.post(b"{nope"), (400, "Invalid JSON")),
            (p.post(b"NaN"), (400, "Invalid JSON")),
            (p.post(b"\xff"), (400, "Invalid JSON")),
            (p.post(b"42"), (400, "Invalid JSON-RPC message")),
            (p.post(b"null"), (400, "Invalid JSON-RPC message")),
            (p.post(b"x" * 4001), (413, "Request body exceeds 4000 bytes")),
            (p.post(new_session()), (400, "Missing Acp-Connection-Id")),
            (
                p.post(new_session(), {"acp-connection-id": "nope"}),
                (404, "Unknown Acp-Connection-Id"),
            ),
            (p.post(INITIALIZE, h), (400, "Initialize not allowed on existing connection")),
            (p.post({**INITIALIZE, "id": None}), (400, "Initialize request must include an ID")),
            (
                p.post({**new_session(), "id": long_id}, h),
                (400, "Request ID exceeds maxIdLength (1024)"),
            ),
            (
                p.post(prompt(3, long_id, "x"), h),
                (400, "Session ID exceeds maxIdLength (1024)"),
            ),
            (p.client.get(p.url, headers=h), (406, "Not Acceptable")),
            (
                p.client.get(p.url, headers={**h, "accept": "application/json"}),
                (406, "Not Acceptable"),
            ),
            (p.client.get(p.url, headers=SSE), (400, "Missing Acp-Connection-Id")),
            (
                p.client.get(p.url, headers={**SSE, "acp-connection-id": "nope"}),
                (404, "Unknown Acp-Connection-Id"),
            ),
            (
                p.client.get(p.url, headers={**SSE, **h, "acp-session-id": long_id}),
                (400, "Session ID exceeds maxIdLength (1024)"),
            ),
            (
                p.client.get(p.url, headers={**SSE, **h, "upgrade": "websocket"}),
                (426, "WebSocket upgrade is not implemented"),
            ),
            (p.client.delete(p.url), (400, "Missing Acp-Connection-Id")),
            (
                p.client.delete(p.url, headers={"acp-connection-id": "nope"}),
                (404, "Unknown Acp-Connection-Id"),
            ),
            (
                p.client.post(p.url.replace("/acp", "/other"), content=b"{}", headers=json_type),
                (404, "Not found\n"),
            ),
        ]
        seen = []
        for request, _ in cases:
            answer = await request
            seen.append((answer.status_code, answer.text))
        batch = await p.post(b"[1,2]", h)
        typed = await p.post(b"x", {"content-type": "Application/JSON; charset=utf-8"})
    assert seen == [expected for _, expected in cases]
    assert batch.status_code == 400
    assert batch.content == (
        b'{"jsonrpc":"2.0","id":null,"error":{"code":-32600,'
        b'"message":"Invalid request: JSON-RPC batches are not supported"}}'
    )
    assert (typed.status_code, typed.text) == (400, "Invalid JSON")  # the media type passed


async def test_ids_are_uuid4_and_distinct() -> None:
    async with peer(http_app(LoadingEchoAgent)) as p:
        ids = {await p.initialize() for _ in range(5)}
    assert len(ids) == 5
    assert all(uuid.UUID(i).version == 4 for i in ids)


async def test_a_malformed_message_on_a_connection_is_answered_by_the_runtime() -> None:
    async with peer(http_app(LoadingEchoAgent)) as p:
        cid = await p.initialize()
        async with p.stream(cid) as connection:
            posted = await p.post(
                {"jsonrpc": "2.0", "id": 9, "method": 7}, {"acp-connection-id": cid}
            )
            assert posted.status_code == 202
            answer = await connection.message()
    assert answer["id"] in (9, None)
    assert answer["error"]["code"] == -32600
    assert json.dumps(answer)


async def test_a_chunked_body_over_the_limit_is_413_too() -> None:
    async def body() -> AsyncIterator[bytes]:
        for _ in range(10):
            yield b"x" * 500  # no Content-Length: the server counts as it reads

    async with peer(http_app(LoadingEchoAgent, max_message_bytes=4000)) as p:
        headers = {"content-type": "application/json"}
        answer = await p.client.post(p.url, content=body(), headers=headers)
    assert (answer.status_code, answer.text) == (413, "Request body exceeds 4000 bytes")


async def test_over_http2_the_sse_answer_has_no_connection_header() -> None:
    """``Connection`` is illegal in HTTP/2; the stream works without it."""
    async with serving(http_app(LoadingEchoAgent)) as port:
        async with httpx.AsyncClient(http1=False, http2=True, timeout=10) as client:
            p = Peer(client, f"http://127.0.0.1:{port}/acp")
            cid = await p.initialize()
            async with p.stream(cid) as connection:
                assert connection.response.http_version == "HTTP/2"
                assert "connection" not in connection.response.headers
                await p.post(new_session(), {"acp-connection-id": cid})
                assert (await connection.message())["result"] == {"sessionId": "sess-1"}


def _broken_factory() -> ConnectionBuilder:
    raise RuntimeError("no agent today")


async def test_a_failing_factory_answers_initialize_500_and_keeps_no_connection(
    caplog: pytest.LogCaptureFixture,
) -> None:
    app = http_app(_broken_factory)
    async with peer(app) as p:
        answer = await p.post(INITIALIZE)
        again = await p.post(INITIALIZE)
    assert answer.status_code == 500
    assert answer.json() == {
        "jsonrpc": "2.0",
        "id": 1,
        "error": {"code": -32603, "message": "Initialize failed"},
    }
    assert "acp-connection-id" not in answer.headers
    assert again.status_code == 500  # the server goes on
    assert "no agent today" in caplog.text  # logged, not sent
