"""Safe by default on the network (issue 32), on every server: the WebSocket app mounted
in hypercorn and uvicorn and on its own listener, and the Streamable HTTP side of
``acp_app`` under hypercorn and uvicorn.

- A foreign ``Origin`` is refused with 403 (browsers apply no CORS rule to WebSocket); on a
  loopback address a foreign ``Host`` too (DNS rebinding). No ``Origin`` (editors) and
  loopback origins pass; ``allowed_origins`` and ``allowed_hosts`` add to what passes.
- A request head over the header limits is refused by the app itself with 431, whatever
  the ASGI server would take.
- ``max_connections`` answers 503 past it; a slot frees when its connection ends.
- A WebSocket that sends no ``initialize``, or an HTTP POST opening a connection that
  never finishes its body, is dropped after ``initialize_timeout``.
- An HTTP turn whose client is gone (no SSE reader, no POST) is cancelled after
  ``client_gone_timeout``, not at the idle timeout.
"""

from __future__ import annotations

import json
from collections.abc import AsyncGenerator, Callable
from contextlib import asynccontextmanager
from typing import Any

import anyio
import httpx
import pytest

from acp_runtime.remote import acp_app, http_app, websocket_app

from .http_raw import Peer, prompt
from .network_peer import (
    INITIALIZE,
    head,
    initialize_post,
    opened,
    status_of,
    waiting_agent,
)
from .untyped_echo import echo_agent

pytestmark = pytest.mark.anyio

Serving = Callable[..., Any]

FOREIGN_ORIGIN = {"Origin": "http://evil.example"}


def frame(message: object) -> bytes:
    """A client's (masked, zero-key) text frame."""
    payload = json.dumps(message).encode()
    assert len(payload) < 126
    return bytes([0x81, 0x80 | len(payload)]) + b"\0\0\0\0" + payload


# -- Origin and Host -----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("headers", "host", "status"),
    [
        ({}, None, 101),  # an editor: no Origin
        ({"Origin": "http://localhost:3000"}, None, 101),
        ({"Origin": "https://127.0.0.1:5173"}, None, 101),
        ({"Origin": "http://[::1]"}, None, 101),
        (FOREIGN_ORIGIN, None, 403),
        ({"Origin": "null"}, None, 403),  # a sandboxed page or a file
        ({"Origin": "http://localhost.evil.example"}, None, 403),
        ({}, "evil.example:{port}", 403),  # a rebound name
        ({}, "localhost:{port}", 101),
        ({}, "[::1]:{port}", 101),
        ({}, "127.0.0.2", 101),
    ],
)
async def test_a_websocket_upgrade_from_a_web_page_is_refused_by_default(
    any_websocket_server: Serving, headers: dict[str, str], host: str | None, status: int
) -> None:
    async with any_websocket_server(websocket_app(echo_agent)) as port:
        name = None if host is None else host.format(port=port)
        assert await status_of(port, head("UPGRADE", port, headers, host=name)) == status


async def test_a_refused_upgrade_gets_no_acp_and_no_echo_of_what_it_sent(
    any_websocket_server: Serving,
) -> None:
    async with any_websocket_server(websocket_app(echo_agent)) as port:
        request = head("UPGRADE", port, FOREIGN_ORIGIN, host="evil.example")
        async with opened(port, request) as (status, answer, stream):
            assert status == 403
            assert b"evil" not in answer
            rest = b""
            with anyio.move_on_after(1):
                while True:
                    try:
                        rest += await stream.receive()
                    except (anyio.EndOfStream, anyio.BrokenResourceError):
                        break
            assert b"jsonrpc" not in rest and b"evil" not in rest


async def test_listed_origins_and_hosts_pass_and_star_lets_every_one(
    any_websocket_server: Serving,
) -> None:
    app = websocket_app(
        echo_agent, allowed_origins=["https://App.example/"], allowed_hosts=["agent.example"]
    )
    async with any_websocket_server(app) as port:
        listed = head("UPGRADE", port, {"Origin": "https://app.example"}, host="agent.example:443")
        assert await status_of(port, listed) == 101
        other = head("UPGRADE", port, {"Origin": "https://other.example"})
        assert await status_of(port, other) == 403
        assert await status_of(port, head("UPGRADE", port, host="other.example")) == 403
        loopback = head("UPGRADE", port, {"Origin": "http://localhost:8080"}, host="localhost")
        assert await status_of(port, loopback) == 101  # the lists add to the defaults
    anyone = websocket_app(echo_agent, allowed_origins=["*"], allowed_hosts=["*"])
    async with any_websocket_server(anyone) as port:
        request = head("UPGRADE", port, FOREIGN_ORIGIN, host="evil.example")
        assert await status_of(port, request) == 101


@pytest.mark.parametrize(
    ("headers", "host", "status"),
    [
        ({}, None, 200),
        ({"Origin": "http://localhost:1234"}, None, 200),
        (FOREIGN_ORIGIN, None, 403),
        ({}, "evil.example:{port}", 403),
        (FOREIGN_ORIGIN, "evil.example:{port}", 403),
    ],
)
async def test_an_http_initialize_from_a_web_page_is_refused_by_default(
    asgi_server: Serving, headers: dict[str, str], host: str | None, status: int
) -> None:
    async with asgi_server(acp_app(echo_agent)) as port:
        name = None if host is None else host.format(port=port)
        async with opened(port, initialize_post(port, headers, host=name)) as (got, answer, _):
            assert got == status
            assert (b"acp-connection-id" in answer.lower()) == (status == 200)


async def test_every_http_request_is_checked_not_only_initialize(asgi_server: Serving) -> None:
    async with asgi_server(http_app(echo_agent)) as port:
        async with opened(port, initialize_post(port)) as (status, answer, _):
            assert status == 200
        connection_id = next(
            line.split(b":", 1)[1].strip().decode()
            for line in answer.split(b"\r\n")
            if line.lower().startswith(b"acp-connection-id:")
        )
        get = head(
            "GET",
            port,
            {"Accept": "text/event-stream", "Acp-Connection-Id": connection_id},
            host="evil.example",
        )
        assert await status_of(port, get) == 403
        delete = head("DELETE", port, {"Acp-Connection-Id": connection_id, **FOREIGN_ORIGIN})
        assert await status_of(port, delete) == 403


# -- header limits -------------------------------------------------------------------------

MANY_HEADERS = {f"X-H{n}": "1" for n in range(200)}


async def test_a_websocket_upgrade_with_too_many_headers_gets_431(
    any_websocket_server: Serving,
) -> None:
    async with any_websocket_server(websocket_app(echo_agent)) as port:
        assert await status_of(port, head("UPGRADE", port, MANY_HEADERS)) == 431
        few = {f"X-H{n}": "1" for n in range(10)}
        assert await status_of(port, head("UPGRADE", port, few)) == 101
    fewer = websocket_app(echo_agent, max_headers=8)
    async with any_websocket_server(fewer) as port:
        assert await status_of(port, head("UPGRADE", port, few)) == 431


async def test_an_http_request_with_too_many_headers_gets_431(asgi_server: Serving) -> None:
    async with asgi_server(acp_app(echo_agent)) as port:
        assert await status_of(port, initialize_post(port, MANY_HEADERS)) == 431
        assert await status_of(port, initialize_post(port)) == 200


async def test_the_header_bytes_are_bounded_by_the_app_not_the_asgi_server(
    asgi_server: Serving,
) -> None:
    """uvicorn's httptools takes a 1 MiB header; hypercorn's h11 stops at 16 KiB: the app
    refuses what is over its own limit under either."""
    app = acp_app(echo_agent, max_header_bytes=4096)
    async with asgi_server(app) as port:
        big = {"X-Big": "a" * 8000}
        assert await status_of(port, initialize_post(port, big)) == 431
        assert await status_of(port, head("UPGRADE", port, big)) == 431
        assert await status_of(port, initialize_post(port, {"X-Small": "a" * 1000})) == 200


async def test_uvicorn_passes_a_1_mib_header_and_the_app_refuses_it(anyio_backend: str) -> None:
    if anyio_backend != "asyncio":
        pytest.skip("uvicorn has no trio worker")
    from .uvicorn_server import serving

    async with serving(acp_app(echo_agent)) as port:
        huge = {"X-Big": "a" * (1024 * 1024)}
        assert await status_of(port, initialize_post(port, huge)) == 431


# -- the connection cap --------------------------------------------------------------------


async def test_past_max_connections_a_websocket_upgrade_gets_503_until_one_ends(
    any_websocket_server: Serving,
) -> None:
    async with any_websocket_server(websocket_app(echo_agent, max_connections=2)) as port:
        async with opened(port, head("UPGRADE", port)) as (first, _, _):
            async with opened(port, head("UPGRADE", port)) as (second, _, _):
                assert (first, second) == (101, 101)
                async with opened(port, head("UPGRADE", port)) as (third, answer, _):
                    assert third == 503
                    assert b"retry-after: 5" in answer.lower()
        with anyio.fail_after(5):
            while (status := await status_of(port, head("UPGRADE", port))) != 101:
                assert status == 503  # until the server has seen the sockets go
                await anyio.sleep(0.05)


async def test_past_max_connections_an_http_initialize_gets_503_until_one_ends(
    asgi_server: Serving,
) -> None:
    async with asgi_server(http_app(echo_agent, max_connections=1)) as port:
        async with peer_at(port) as p:
            kept = await p.initialize()
            refused = await p.post(INITIALIZE)
            assert refused.status_code == 503
            assert refused.headers["retry-after"] == "5"
            assert "acp-connection-id" not in refused.headers
            assert (await p.client.delete(p.url, headers={"acp-connection-id": kept})).is_success
            await p.initialize()


async def test_acp_app_counts_both_transports_against_one_cap(asgi_server: Serving) -> None:
    async with asgi_server(acp_app(echo_agent, max_connections=1)) as port:
        async with opened(port, head("UPGRADE", port)) as (upgraded, _, _):
            assert upgraded == 101
            assert await status_of(port, initialize_post(port)) == 503
        with anyio.fail_after(5):
            while (status := await status_of(port, initialize_post(port))) != 200:
                assert status == 503
                await anyio.sleep(0.05)


async def test_the_cap_has_a_default() -> None:
    for app in (websocket_app(echo_agent), http_app(echo_agent)):
        assert app.admission.max_connections == 256
    with pytest.raises(ValueError, match="max_connections"):
        websocket_app(echo_agent, max_connections=0)


# -- the initialize deadline ---------------------------------------------------------------


async def test_a_websocket_that_never_sends_initialize_is_closed_at_the_deadline(
    any_websocket_server: Serving,
) -> None:
    app = websocket_app(echo_agent, initialize_timeout=0.3)
    async with any_websocket_server(app) as port:
        async with opened(port, head("UPGRADE", port)) as (status, _, stream):
            assert status == 101
            started = anyio.current_time()
            data = b""
            with anyio.fail_after(5):
                while len(data) < 4:
                    data += await stream.receive()
            assert data[0] == 0x88  # a close frame
            assert int.from_bytes(data[2:4], "big") == 1008
            assert anyio.current_time() - started < 3
        # one that does send it in time is served
        async with opened(port, head("UPGRADE", port)) as (status, _, s):
            assert status == 101
            await s.send(frame(INITIALIZE))
            with anyio.fail_after(5):
                data = b""
                while b'"result"' not in data:
                    data += await s.receive()


async def test_the_initialize_deadline_is_on_by_default() -> None:
    assert websocket_app(echo_agent).admission.initialize_timeout == 30.0
    assert http_app(echo_agent).admission.initialize_timeout == 30.0


async def test_an_http_post_that_never_finishes_its_initialize_gets_408(
    asgi_server: Serving,
) -> None:
    app = http_app(echo_agent, initialize_timeout=0.3)
    async with asgi_server(app) as port:
        fields = {"Content-Type": "application/json", "Content-Length": "100"}
        request = head("POST", port, fields) + b'{"jsonrpc":'
        started = anyio.current_time()
        async with opened(port, request) as (status, _, _):
            assert status == 408
        assert anyio.current_time() - started < 3
        assert await status_of(port, initialize_post(port)) == 200


# -- a turn whose HTTP client is gone ------------------------------------------------------


async def test_an_http_turn_whose_client_is_gone_is_cancelled_within_the_timeout(
    asgi_server: Serving,
) -> None:
    entered, cancelled = anyio.Event(), anyio.Event()
    app = http_app(waiting_agent(entered, cancelled), client_gone_timeout=0.3)
    async with asgi_server(app) as port:
        async with peer_at(port) as p:
            cid = await p.initialize()
            h = {"acp-connection-id": cid}
            await p.post({"jsonrpc": "2.0", "id": 2, "method": "session/new", "params": {}}, h)
            async with p.stream(cid, "s1"):
                await p.post(prompt(3, "s1", "wait"), h)
                with anyio.fail_after(5):
                    await entered.wait()
                await anyio.sleep(0.6)  # a reader: not gone, however long the turn
                assert not cancelled.is_set()
            started = anyio.current_time()  # the GET ended: the client is gone
            with anyio.fail_after(5):
                await cancelled.wait()
            assert anyio.current_time() - started < 3
            assert app.connection(cid) is None


async def test_a_client_that_reconnects_its_stream_in_time_is_not_gone(
    asgi_server: Serving,
) -> None:
    entered, cancelled = anyio.Event(), anyio.Event()
    app = http_app(waiting_agent(entered, cancelled), client_gone_timeout=1.0)
    async with asgi_server(app) as port:
        async with peer_at(port) as p:
            cid = await p.initialize()
            h = {"acp-connection-id": cid}
            await p.post({"jsonrpc": "2.0", "id": 2, "method": "session/new", "params": {}}, h)
            await p.post(prompt(3, "s1", "wait"), h)
            with anyio.fail_after(5):
                await entered.wait()
            for _ in range(3):  # dropped and reopened, each within the timeout
                await anyio.sleep(0.3)
                async with p.stream(cid, "s1"):
                    await anyio.sleep(0.3)
            assert not cancelled.is_set()
            assert app.connection(cid) is not None


async def test_the_client_gone_timeout_is_seconds_not_the_idle_timeout() -> None:
    limits = http_app(echo_agent).limits
    assert limits.client_gone_timeout <= 15 < limits.idle_timeout


# -- an ASGI scope that does not say where it came in --------------------------------------


async def test_a_scope_with_no_server_is_held_to_the_loopback_rules() -> None:
    app = http_app(echo_agent)
    sent: list[dict[str, Any]] = []

    async def send(message: Any) -> None:
        sent.append(message)

    async def receive() -> Any:
        return {"type": "http.request", "body": b"{}", "more_body": False}

    scope = {
        "type": "http",
        "method": "POST",
        "path": "/acp",
        "headers": [(b"host", b"agent.example"), (b"content-type", b"application/json")],
    }
    await app(scope, receive, send)
    assert sent[0]["status"] == 403
    sent.clear()
    await app({**scope, "server": ("10.1.2.3", 80)}, receive, send)
    assert sent[0]["status"] == 400  # past the checks: {} is no JSON-RPC message


@asynccontextmanager
async def peer_at(port: int) -> AsyncGenerator[Peer, None]:
    """:func:`.http_raw.peer`'s client, on a server already running."""
    async with httpx.AsyncClient(timeout=10) as client:
        yield Peer(client, f"http://127.0.0.1:{port}/acp")
