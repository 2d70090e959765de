"""The HTTP server's bounds: queued output (backpressure, then the stall timeout), session
streams with no reader, the idle timeout; the auth hook; shutdown; HTTP and WebSocket on
one path (acp_app)."""

from __future__ import annotations

import json
import logging
from collections.abc import Awaitable, Callable, Mapping

import anyio
import httpx
import pytest
from httpx_ws import aconnect_ws

from acp_runtime import Transport
from acp_runtime.remote import Refusal, acp_app, http_app

from .http_agent import LoadingEchoAgent
from .http_raw import INITIALIZE, new_session, peer, prompt
from .hypercorn_server import serving

pytestmark = pytest.mark.anyio


async def until_gone(post: Callable[[], Awaitable[httpx.Response]], wait: float = 5) -> float:
    """Seconds until a POST on the connection answers 404 (it was closed)."""
    started = anyio.current_time()
    with anyio.fail_after(wait):
        while True:
            if (await post()).status_code == 404:
                return anyio.current_time() - started
            await anyio.sleep(0.02)


async def test_no_reader_holds_at_most_the_bound_then_the_stall_closes_the_connection() -> None:
    app = http_app(LoadingEchoAgent, max_buffered_bytes=10_000, stall_timeout=0.5)
    async with peer(app) as p:
        cid = await p.initialize()
        h = {"acp-connection-id": cid}
        await p.post(new_session(), h)
        assert (await p.post(prompt(3, "sess-1", "chunks 100000 size 100"), h)).status_code == 202
        await anyio.sleep(0.25)
        connection = app.connection(cid)
        assert connection is not None
        # the agent waits at the bound: one message past it at most, not 10 MB
        assert 10_000 <= connection.buffered_bytes < 10_000 + 300
        waited = await until_gone(lambda: p.post(new_session(4), h))
    assert waited < 2
    assert app.connection(cid) is None


async def test_a_slow_reader_gets_everything_through_the_bound() -> None:
    app = http_app(LoadingEchoAgent, max_buffered_bytes=5_000, stall_timeout=5)
    async with peer(app) as p:
        cid = await p.initialize()
        h = {"acp-connection-id": cid}
        await p.post(new_session(), h)
        async with p.stream(cid, "sess-1") as session:
            await p.post(prompt(3, "sess-1", "chunks 300 size 100"), h)
            chunks = 0
            peak = 0
            while "result" not in (message := await session.message()):
                chunks += 1
                connection = app.connection(cid)
                assert connection is not None
                peak = max(peak, connection.buffered_bytes)
                if chunks % 50 == 0:
                    await anyio.sleep(0.05)
    assert chunks == 300
    assert message["result"] == {"stopReason": "end_turn"}
    assert peak < 5_000 + 300


async def test_too_many_session_streams_without_a_reader_close_the_connection() -> None:
    app = http_app(LoadingEchoAgent, max_unread_session_streams=2)
    async with peer(app) as p:
        cid = await p.initialize()
        h = {"acp-connection-id": cid}
        for n in (1, 2):
            await p.post(new_session(n + 1), h)
            assert (await p.post(prompt(10 + n, f"sess-{n}", "hi"), h)).status_code == 202
        await anyio.sleep(0.1)
        assert app.connection(cid) is not None
        await p.post(new_session(4), h)
        await p.post(prompt(13, "sess-3", "hi"), h)
        await until_gone(lambda: p.post(new_session(5), h))


async def test_a_connection_nobody_uses_is_closed_after_the_idle_timeout() -> None:
    app = http_app(LoadingEchoAgent, idle_timeout=0.3)
    async with peer(app) as p:
        kept = await p.initialize()
        dropped = await p.initialize()
        async with p.stream(kept):
            await anyio.sleep(0.6)
            assert (await p.post(new_session(), {"acp-connection-id": kept})).status_code == 202
            refused = await p.post(new_session(), {"acp-connection-id": dropped})
    assert refused.status_code == 404


async def test_the_hook_sees_the_headers_and_refuses_with_403_or_its_own_status(
    caplog: pytest.LogCaptureFixture,
) -> None:
    seen: list[Mapping[str, str]] = []

    def check(headers: Mapping[str, str]) -> bool | Refusal:
        seen.append(headers)
        token = headers.get("authorization")
        if token is None:
            return Refusal(401, challenge="Bearer")
        if token == "Bearer boom":
            raise RuntimeError(f"bad {token}")
        return token == "Bearer good"

    caplog.set_level(logging.DEBUG)
    async with peer(http_app(LoadingEchoAgent, authenticate=check)) as p:
        missing = await p.post(INITIALIZE)
        wrong = await p.post(INITIALIZE, {"authorization": "Bearer leaked-secret"})
        raising = await p.post(INITIALIZE, {"authorization": "Bearer boom"})
        good = await p.post(INITIALIZE, {"authorization": "Bearer good"})
        cid = good.headers["acp-connection-id"]
        get = await p.client.get(p.url, headers={"acp-connection-id": cid})
    assert (missing.status_code, missing.headers["www-authenticate"]) == (401, "Bearer")
    assert (wrong.status_code, wrong.text) == (403, "Forbidden\n")
    assert raising.status_code == 403
    assert good.status_code == 200
    assert get.status_code == 401  # every request is checked
    assert seen[1]["authorization"] == "Bearer leaked-secret"
    assert "leaked-secret" not in caplog.text and "boom" not in caplog.text
    assert all("leaked" not in r.text for r in (missing, wrong, raising))


async def test_aclose_ends_every_stream_and_connection() -> None:
    app = http_app(LoadingEchoAgent)
    async with peer(app) as p:
        cid = await p.initialize()
        async with p.stream(cid) as connection, p.stream(cid, "sess-1") as session:
            await app.aclose()
            assert await connection.rest() == b""
            assert await session.rest() == b""
        assert (await p.post(new_session(), {"acp-connection-id": cid})).status_code == 404


async def test_acp_app_serves_http_and_websocket_on_one_path() -> None:
    app = acp_app(LoadingEchoAgent)
    async with serving(app) as port, httpx.AsyncClient() as client:
        url = f"http://127.0.0.1:{port}/acp"
        answer = await client.post(url, json=INITIALIZE)
        async with aconnect_ws(url, client, keepalive_ping_interval_seconds=None) as ws:
            await ws.send_text(json.dumps(INITIALIZE))
            with anyio.fail_after(5):
                over_ws = json.loads(await ws.receive_text())
        other = await client.get(f"http://127.0.0.1:{port}/elsewhere")
    assert answer.status_code == 200
    assert over_ws == answer.json()
    assert other.status_code == 404


class _AnswersInitializeThenEnds:
    """A servable that answers ``initialize`` and one more message, then stops serving."""

    async def serve(self, transport: Transport) -> None:
        first = json.loads(await transport.receive())
        await transport.send(
            json.dumps({"jsonrpc": "2.0", "id": first["id"], "result": {}}).encode()
        )
        second = json.loads(await transport.receive())
        await transport.send(
            json.dumps({"jsonrpc": "2.0", "id": second["id"], "result": "bye"}).encode()
        )


async def test_when_the_agent_stops_readers_drain_then_the_connection_is_gone() -> None:
    app = http_app(_AnswersInitializeThenEnds)
    async with peer(app) as p:
        cid = await p.initialize()
        h = {"acp-connection-id": cid}
        async with p.stream(cid) as connection:
            assert (await p.post(new_session(), h)).status_code == 202
            assert (await connection.message())["result"] == "bye"
            assert await connection.rest() == b""
        await until_gone(lambda: p.post(new_session(3), h))
    assert app.connection(cid) is None
