"""The Streamable HTTP client transport against a scripted in-process server: what it
sends (first message, headers, cookies, lanes), and how each HTTP failure reaches the
connection (one request, one session, or the whole transport)."""

from __future__ import annotations

import json
from collections.abc import AsyncGenerator
from contextlib import asynccontextmanager
from typing import Any

import anyio
import httpx
import pytest

from acp_runtime import ConnectionBuilder, RequestError
from acp_runtime.remote import CookieStore, HttpTransport, connect_http
from acp_runtime.transports import MessageTooLarge

from .fake_http_server import CONNECTION_ID, FakeServer, Seen

pytestmark = pytest.mark.anyio

URL = "http://agent.test/acp"
TOKEN = "Bearer s3cr3t-token-0123456789"


def message(**fields: Any) -> bytes:
    return json.dumps({"jsonrpc": "2.0", **fields}).encode()


INITIALIZE = message(id=0, method="initialize", params={"protocolVersion": 1})


def prompt(request_id: object, session: str) -> bytes:
    return message(id=request_id, method="session/prompt", params={"sessionId": session})


async def next_message(transport: HttpTransport) -> Any:
    with anyio.fail_after(5):
        return json.loads(await transport.receive())


@asynccontextmanager
async def connected(server: FakeServer, **options: Any) -> AsyncGenerator[HttpTransport, None]:
    """A transport to ``server`` after ``initialize`` was answered."""
    async with server.client() as http, connect_http(URL, http_client=http, **options) as t:
        await t.send(INITIALIZE)
        assert (await next_message(t))["id"] == 0
        yield t


async def wait_for(condition: Any) -> None:
    """Poll: the fake server records requests as they come, with no event to wait on."""
    with anyio.fail_after(5):
        while not condition():  # noqa: ASYNC110
            await anyio.sleep(0.01)


# -- initialize ---------------------------------------------------------------------------


async def test_initialize_is_posted_alone_then_the_connection_stream_opens() -> None:
    server = FakeServer()
    async with connected(server) as transport:
        await server.opened(None)
        assert transport.connection_id == CONNECTION_ID
    post, get, delete = server.seen
    assert post.method == "POST" and post.body["method"] == "initialize"
    assert post.headers["content-type"] == "application/json"
    assert "acp-connection-id" not in post.headers and "acp-session-id" not in post.headers
    assert get.method == "GET" and get.headers["accept"] == "text/event-stream"
    assert get.headers["acp-connection-id"] == CONNECTION_ID and get.session is None
    assert get.timeout["read"] is None  # an SSE stream may be quiet for as long as it likes
    assert delete.method == "DELETE" and delete.headers["acp-connection-id"] == CONNECTION_ID


async def test_a_first_message_other_than_initialize_is_refused_locally() -> None:
    server = FakeServer()
    async with server.client() as http, connect_http(URL, http_client=http) as transport:
        await transport.send(message(method="session/cancel", params={"sessionId": "s"}))
        await transport.send(message(id=5, method="session/new", params={}))
        answer = await next_message(transport)
        assert answer["id"] == 5
        assert answer["error"]["message"] == "ACP HTTP stream first message must be initialize"
        await transport.send(INITIALIZE)
        assert (await next_message(transport))["result"] == {"protocolVersion": 1}
    assert server.seen[0].method == "POST"
    assert server.methods()[0] == "initialize"


async def test_a_failed_initialize_is_its_answer_then_the_transport_fails() -> None:
    server = FakeServer()
    server.initialize_response = httpx.Response(500, text="agent crashed")
    async with server.client() as http, connect_http(URL, http_client=http) as transport:
        await transport.send(INITIALIZE)
        answer = await next_message(transport)
        with anyio.fail_after(5), pytest.raises(anyio.BrokenResourceError):
            await transport.receive()
    assert answer["error"]["code"] == -32603
    assert answer["error"]["message"] == (
        "ACP initialize failed: 500 Internal Server Error: agent crashed"
    )
    assert answer["error"]["data"] == {"status": 500, "body": "agent crashed"}
    assert [seen.method for seen in server.seen] == ["POST"]  # no GET, no DELETE


async def test_an_initialize_answer_without_a_connection_id_fails() -> None:
    server = FakeServer()
    server.initialize_response = httpx.Response(200, json={"jsonrpc": "2.0", "id": 0, "result": {}})
    async with server.client() as http, connect_http(URL, http_client=http) as transport:
        await transport.send(INITIALIZE)
        answer = await next_message(transport)
        with anyio.fail_after(5), pytest.raises(anyio.BrokenResourceError):
            await transport.receive()
    assert answer["error"]["message"] == "ACP initialize response missing Acp-Connection-Id"


async def test_an_initialize_refused_with_a_jsonrpc_error_is_passed_up() -> None:
    """A server that keeps no connection for a refused initialize (no header): the error
    is the answer, and another initialize may follow."""
    server = FakeServer()
    refusal = {"jsonrpc": "2.0", "id": 0, "error": {"code": -32022, "message": "Unsupported"}}
    server.initialize_response = httpx.Response(200, json=refusal)
    async with server.client() as http, connect_http(URL, http_client=http) as transport:
        await transport.send(INITIALIZE)
        assert await next_message(transport) == refusal
        server.initialize_response = None
        await transport.send(INITIALIZE)
        assert (await next_message(transport))["result"] == {"protocolVersion": 1}
        assert transport.connection_id == CONNECTION_ID


async def test_a_request_that_cannot_be_made_fails_the_transport_not_the_app() -> None:
    async with connect_http("http://[::1/acp") as transport:  # no closing bracket
        await transport.send(INITIALIZE)
        with anyio.fail_after(5), pytest.raises(anyio.BrokenResourceError) as caught:
            await transport.receive()
    assert "ACP HTTP failed: InvalidURL" in str(caught.value)


# -- Acp-Session-Id, session streams, lanes -------------------------------------------------


async def test_a_session_stream_is_open_before_its_first_message_is_posted() -> None:
    server = FakeServer()
    async with connected(server) as transport:
        await transport.send(prompt(1, "s1"))
        await wait_for(lambda: len(server.posts()) == 2)
    get_s1 = next(i for i, s in enumerate(server.seen) if s.method == "GET" and s.session == "s1")
    post_s1 = next(i for i, s in enumerate(server.seen) if s.method == "POST" and s.session == "s1")
    assert get_s1 < post_s1
    assert server.seen[get_s1].headers["acp-connection-id"] == CONNECTION_ID


async def test_the_session_header_rule() -> None:
    server = FakeServer()
    async with connected(server) as transport:
        await transport.send(prompt(1, "s1"))
        await transport.send(message(method="session/cancel", params={"sessionId": "s1"}))
        await transport.send(message(method="$/cancel_request", params={"requestId": 1}))
        await transport.send(message(id=2, method="session/new", params={"cwd": "/"}))
        await transport.send(message(method="_x/note", params={"sessionId": 7}))  # not a string
        # server requests: one names a session (id "1"), one does not (id 1: another key)
        ask: dict[str, Any] = {"sessionId": "s1", "options": []}
        await server.push("s1", {"jsonrpc": "2.0", "id": "1", "method": "x/ask", "params": ask})
        await server.push(None, {"jsonrpc": "2.0", "id": 1, "method": "x/other", "params": {}})
        for _ in range(2):
            asked = await next_message(transport)
            await transport.send(message(id=asked["id"], result={}))
        await wait_for(lambda: len(server.posts()) == 8)
    posted = [(what, p.session) for what, p in zip(server.methods(), server.posts(), strict=True)]
    calls = [(what, session) for what, session in posted if not isinstance(what, tuple)]
    answers = [(what, session) for what, session in posted if isinstance(what, tuple)]
    assert calls == [  # in the order sent
        ("initialize", None),
        ("session/prompt", "s1"),
        ("session/cancel", "s1"),
        ("$/cancel_request", None),
        ("session/new", None),
        ("_x/note", None),
    ]
    assert sorted(answers, key=repr) == [  # their own lane; the two streams race
        (("answer", "1"), "s1"),  # answers the request that named s1 (string id "1")
        (("answer", 1), None),  # the same id as a number is another request
    ]
    assert all(p.headers["acp-connection-id"] == CONNECTION_ID for p in server.posts()[1:])


async def test_a_new_session_result_opens_its_stream_without_waiting_for_a_message() -> None:
    server = FakeServer()
    async with connected(server) as transport:
        await server.push(None, {"jsonrpc": "2.0", "id": 3, "result": {"sessionId": "fresh"}})
        assert (await next_message(transport))["id"] == 3
        with anyio.fail_after(5):
            await server.opened("fresh")


async def test_an_answer_is_not_held_behind_a_request_the_server_holds() -> None:
    server = FakeServer()
    release = anyio.Event()

    async def hold_prompts(server: FakeServer, seen: Seen) -> httpx.Response | None:
        if seen.body.get("method") == "session/prompt":
            await release.wait()
        return None

    server.on_post = hold_prompts
    async with connected(server) as transport:
        await transport.send(prompt(1, "s1"))
        await wait_for(lambda: "session/prompt" in server.methods())  # and held there
        await server.push(None, {"jsonrpc": "2.0", "id": 9, "method": "x/ask", "params": {}})
        assert (await next_message(transport))["id"] == 9
        await transport.send(message(id=9, result={}))
        await wait_for(lambda: ("answer", 9) in server.methods())
        assert not release.is_set()  # posted while the prompt's POST is still held
        release.set()


# -- HTTP failures ----------------------------------------------------------------------


async def test_a_500_on_a_request_post_fails_only_that_request() -> None:
    server = FakeServer()

    async def fail_prompts(server: FakeServer, seen: Seen) -> httpx.Response | None:
        if seen.body.get("method") == "session/prompt":
            return httpx.Response(502, json={"detail": "gateway"})
        return None

    server.on_post = fail_prompts
    async with connected(server) as transport:
        await transport.send(prompt(1, "s1"))
        answer = await next_message(transport)
        await transport.send(message(id=2, method="session/new", params={}))
        await wait_for(lambda: len(server.posts()) == 3)  # the transport still works
    assert answer == {
        "jsonrpc": "2.0",
        "id": 1,
        "error": {
            "code": -32603,
            "message": 'ACP POST failed: 502 Bad Gateway: {"detail":"gateway"}',
            "data": {"status": 502, "body": {"detail": "gateway"}},
        },
    }


async def test_an_error_body_is_cut_to_8_kib() -> None:
    server = FakeServer()

    async def fail(server: FakeServer, seen: Seen) -> httpx.Response | None:
        return httpx.Response(500, text="x" * 20_000)

    server.on_post = fail
    async with connected(server) as transport:
        await transport.send(message(id=1, method="session/new", params={}))
        answer = await next_message(transport)
    assert answer["error"]["data"] == {"status": 500, "body": "x" * 8192}


@pytest.mark.parametrize("status", [401, 403, 404, 410])
async def test_a_connection_failure_status_fails_the_transport(status: int) -> None:
    server = FakeServer()

    async def refuse(server: FakeServer, seen: Seen) -> httpx.Response | None:
        return httpx.Response(status, text=f"echo: {seen.headers['authorization']}")

    server.on_post = refuse
    async with connected(server, headers={"Authorization": TOKEN}) as transport:
        await transport.send(message(id=1, method="session/new", params={}))
        with anyio.fail_after(5), pytest.raises(anyio.BrokenResourceError) as caught:
            await transport.receive()
        with pytest.raises(anyio.BrokenResourceError):
            await transport.send(message(id=2, method="session/new", params={}))
    assert f"ACP POST failed: {status}" in str(caught.value)
    assert "s3cr3t" not in str(caught.value) and "[redacted]" in str(caught.value)
    assert server.seen[-1].method == "DELETE"  # closing still ends the connection


async def test_a_failed_notification_post_fails_the_transport() -> None:
    server = FakeServer()

    async def fail(server: FakeServer, seen: Seen) -> httpx.Response | None:
        return httpx.Response(500)

    server.on_post = fail
    async with connected(server) as transport:
        await transport.send(message(method="session/cancel", params={"sessionId": "s1"}))
        with anyio.fail_after(5), pytest.raises(anyio.BrokenResourceError):
            await transport.receive()


async def test_no_error_message_repeats_a_configured_header_value() -> None:
    server = FakeServer()

    async def echo(server: FakeServer, seen: Seen) -> httpx.Response | None:
        return httpx.Response(500, text=f"bad token {seen.headers['x-api-key']}")

    server.on_post = echo
    async with connected(server, headers={"X-Api-Key": "key-abcdef-123"}) as transport:
        await transport.send(message(id=1, method="session/new", params={}))
        answer = await next_message(transport)
    assert "key-abcdef-123" not in json.dumps(answer)
    assert answer["error"]["message"].endswith("bad token [redacted]")


async def test_a_409_fails_the_session_until_it_is_loaded_again() -> None:
    server = FakeServer()
    conflicted = True

    async def conflict(server: FakeServer, seen: Seen) -> httpx.Response | None:
        if seen.session == "s1" and conflicted and seen.body.get("method") == "session/prompt":
            return httpx.Response(409, text="conflict")
        return None

    server.on_post = conflict
    async with connected(server) as transport:
        await transport.send(prompt(1, "s1"))
        first = await next_message(transport)
        await transport.send(prompt(2, "s1"))  # refused without a POST
        second = await next_message(transport)
        await transport.send(message(method="session/cancel", params={"sessionId": "s1"}))
        await transport.send(prompt(3, "s2"))  # another session is unaffected
        conflicted = False
        load = message(id=4, method="session/load", params={"sessionId": "s1"})
        await transport.send(load)
        await wait_for(lambda: server.methods()[-1] == "session/load")
        await transport.send(prompt(5, "s1"))
        await wait_for(lambda: server.methods()[-1] == "session/prompt")
    assert first["error"]["message"] == "ACP POST failed: 409 Conflict: conflict"
    assert first["error"]["data"] == {"status": 409, "body": "conflict"}
    assert second["id"] == 2 and second["error"] == first["error"]
    posted = [(p.body.get("id"), p.session) for p in server.posts()]
    assert posted == [(0, None), (1, "s1"), (3, "s2"), (4, "s1"), (5, "s1")]


async def test_a_409_fails_the_session_requests_already_in_flight() -> None:
    server = FakeServer()

    async def conflict_second(server: FakeServer, seen: Seen) -> httpx.Response | None:
        return httpx.Response(409) if seen.body.get("id") == 2 else None

    server.on_post = conflict_second
    async with connected(server) as transport:
        await transport.send(prompt(1, "s1"))
        await transport.send(prompt(3, "s2"))
        await transport.send(prompt(2, "s1"))
        failed = [await next_message(transport), await next_message(transport)]
        await server.push("s2", {"jsonrpc": "2.0", "id": 3, "result": {}})
        assert (await next_message(transport))["id"] == 3
    assert sorted(answer["id"] for answer in failed) == [1, 2]
    assert {answer["error"]["message"] for answer in failed} == {"ACP POST failed: 409 Conflict"}


async def test_a_409_on_the_session_stream_fails_the_session() -> None:
    server = FakeServer()
    server.get_status["s1"] = 409
    async with connected(server) as transport:
        await transport.send(prompt(1, "s1"))
        answer = await next_message(transport)
        await transport.send(prompt(2, "s2"))
        await wait_for(lambda: len(server.posts()) == 2)
    assert answer["error"]["message"] == (
        "ACP SSE connection failed: 409 Conflict: stream refused (409)"
    )
    assert [p.session for p in server.posts()] == [None, "s2"]


async def test_a_failed_connection_stream_fails_the_transport() -> None:
    server = FakeServer()
    server.get_status[None] = 503
    async with server.client() as http, connect_http(URL, http_client=http) as transport:
        await transport.send(INITIALIZE)
        assert (await next_message(transport))["id"] == 0
        with anyio.fail_after(5), pytest.raises(anyio.BrokenResourceError) as caught:
            await transport.receive()
    assert "ACP SSE connection failed: 503" in str(caught.value)


# -- stream ends ------------------------------------------------------------------------


async def test_a_session_stream_ending_fails_only_its_requests_and_reopens() -> None:
    server = FakeServer()
    async with connected(server) as transport:
        await transport.send(prompt(1, "s1"))
        await transport.send(prompt(2, "s2"))
        await transport.send(message(id=3, method="session/new", params={}))
        await wait_for(lambda: len(server.posts()) == 4)
        server.end("s1")
        failed = await next_message(transport)
        await server.push("s2", {"jsonrpc": "2.0", "id": 2, "result": {"stopReason": "end_turn"}})
        assert (await next_message(transport))["id"] == 2
        await transport.send(prompt(4, "s1"))
        with anyio.fail_after(5):
            await server.opened("s1")
        await server.push(None, {"jsonrpc": "2.0", "id": 3, "result": {"sessionId": "s3"}})
        assert (await next_message(transport))["id"] == 3
    assert failed == {
        "jsonrpc": "2.0",
        "id": 1,
        "error": {"code": -32603, "message": "ACP session SSE stream closed"},
    }
    gets = [s.session for s in server.seen if s.method == "GET"]
    assert gets.count("s1") == 2


async def test_a_session_stream_ending_fails_its_pending_request_in_the_runtime() -> None:
    server = FakeServer()
    async with server.client() as http, connect_http(URL, http_client=http) as transport:
        async with ConnectionBuilder(role="client").connect(transport) as cx:
            await cx.send_raw_request("initialize", {"protocolVersion": 1})
            lost = cx.send_raw_request("session/prompt", {"sessionId": "s1", "prompt": []})
            kept = cx.send_raw_request("session/prompt", {"sessionId": "s2", "prompt": []})
            await wait_for(lambda: len(server.posts()) == 3)
            server.end("s1")
            with anyio.fail_after(5), pytest.raises(RequestError) as caught:
                await lost
            kept_id = next(p.body["id"] for p in server.posts() if p.session == "s2")
            answer = {"jsonrpc": "2.0", "id": kept_id, "result": {"stopReason": "end_turn"}}
            await server.push("s2", answer)
            with anyio.fail_after(5):
                assert await kept == {"stopReason": "end_turn"}
    assert (caught.value.code, caught.value.message) == (-32603, "ACP session SSE stream closed")


async def test_the_connection_stream_ending_ends_the_transport() -> None:
    server = FakeServer()
    async with connected(server) as transport:
        await server.opened(None)
        server.end(None)
        with anyio.fail_after(5), pytest.raises(anyio.EndOfStream):
            await transport.receive()


async def test_the_connection_stream_ending_settles_every_pending_request() -> None:
    server = FakeServer()
    async with server.client() as http, connect_http(URL, http_client=http) as transport:
        async with ConnectionBuilder(role="client").connect(transport) as cx:
            await cx.send_raw_request("initialize", {"protocolVersion": 1})
            sent = [
                cx.send_raw_request("session/prompt", {"sessionId": "s1", "prompt": []}),
                cx.send_raw_request("session/new", {"cwd": "/", "mcpServers": []}),
            ]
            await wait_for(lambda: len(server.posts()) == 3)
            server.end(None)
            for request in sent:
                with anyio.fail_after(5), pytest.raises(RequestError) as caught:
                    await request
                assert caught.value.code == -32603 or "closed" in caught.value.message


async def test_leaving_the_block_settles_pending_requests_and_deletes() -> None:
    server = FakeServer()
    async with server.client() as http:
        async with connect_http(URL, http_client=http) as transport:
            async with ConnectionBuilder(role="client").connect(transport) as cx:
                await cx.send_raw_request("initialize", {"protocolVersion": 1})
                pending = cx.send_raw_request("session/new", {"cwd": "/", "mcpServers": []})
                await wait_for(lambda: len(server.posts()) == 2)
                cx.send_raw_notification("session/cancel", {"sessionId": "s1"})
        with anyio.fail_after(5), pytest.raises(RequestError):
            await pending
    assert [s.method for s in server.seen][-1] == "DELETE"
    assert "session/cancel" in server.methods()  # queued messages go out before DELETE


async def test_an_oversized_event_is_skipped_as_message_too_large() -> None:
    server = FakeServer()
    async with connected(server, max_message_bytes=1000) as transport:
        big = {"jsonrpc": "2.0", "id": 1, "result": {"blob": "y" * 2000}}
        await server.push(None, big)
        await server.push(None, {"jsonrpc": "2.0", "method": "after"})
        with anyio.fail_after(5), pytest.raises(MessageTooLarge) as caught:
            await transport.receive()
        assert (await next_message(transport))["method"] == "after"
    assert caught.value.limit == 1000
    assert caught.value.prefix.startswith(b'{"jsonrpc":"2.0","id":1')


async def test_non_object_and_invalid_events_are_skipped() -> None:
    server = FakeServer()
    async with connected(server) as transport:
        await server.push_raw(None, b"data: [1,2]\n\ndata: {oops\n\ndata: 42\n\n:\n\n")
        await server.push(None, {"jsonrpc": "2.0", "method": "ok"})
        assert (await next_message(transport))["method"] == "ok"


# -- cookies ------------------------------------------------------------------------------


async def test_cookies_are_kept_by_name_and_sent_on_every_request() -> None:
    server = FakeServer()
    server.set_cookies = ["lb=node-2; Path=/other; HttpOnly", "gone=1; Max-Age=0"]
    async with connected(server, headers={"Cookie": "lb=mine; own=1"}) as transport:
        await transport.send(prompt(1, "s1"))
        await wait_for(lambda: len(server.posts()) == 2)
    first, *later = server.seen
    assert "cookie" not in first.headers or first.headers["cookie"] == "lb=mine; own=1"
    for seen in later:  # GETs, POSTs and the DELETE
        assert seen.headers["cookie"] == "lb=mine; gone=1; own=1", seen.method


async def test_cookies_can_be_omitted() -> None:
    server = FakeServer()
    server.set_cookies = ["lb=node-2"]
    async with connected(server, cookies="omit") as transport:
        await transport.send(prompt(1, "s1"))
        await wait_for(lambda: len(server.posts()) == 2)
    assert all("cookie" not in seen.headers for seen in server.seen)


async def test_a_store_the_caller_owns_survives_a_reconnect() -> None:
    store = CookieStore()
    server = FakeServer()
    server.set_cookies = ["affinity=a1"]
    async with connected(server, cookies=store):
        pass
    server.set_cookies = []
    async with connected(server, cookies=store):
        pass
    reconnect = [s for s in server.seen if s.method == "POST"][1]
    assert reconnect.headers["cookie"] == "affinity=a1"
    assert store.cookie_header() == "affinity=a1"


async def test_a_store_the_transport_made_is_dropped_with_the_connection() -> None:
    server = FakeServer()
    server.set_cookies = ["affinity=a1"]
    async with connected(server):
        pass
    server.set_cookies = []
    async with connected(server):
        pass
    reconnect = [s for s in server.seen if s.method == "POST"][1]
    assert "cookie" not in reconnect.headers


def test_the_cookie_store_reads_folded_headers_and_ignores_attributes() -> None:
    store = CookieStore()
    store.store(["a=1; Expires=Wed, 21 Oct 2015 07:28:00 GMT, b=2; Path=/", "=bad", "c"])
    store.store(["a=3"])
    assert store.cookie_header() == "a=3; b=2"
    assert store.cookie_header("b=mine; x") == "a=3; b=mine"
    store.clear()
    assert store.cookie_header() is None
