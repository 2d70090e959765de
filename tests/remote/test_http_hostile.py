"""The Streamable HTTP server against a client that misbehaves on purpose, and an agent
that relays texts as they come: an ``initialize`` that gets no 200 leaves no connection
behind, requests the runtime answers with ``id: null`` leave no route, the queued-bytes
bound counts what readers take, and limits are checked however a server is built.

Each case was found by a review that drove the server with raw HTTP requests."""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from typing import Any

import anyio
import httpx
import pytest

from acp_runtime import ConnectionBuilder, Transport
from acp_runtime.remote import HttpLimits, acp_app, http_app

from .http_agent import LoadingEchoAgent
from .http_raw import INITIALIZE, peer

pytestmark = pytest.mark.anyio


def live_connections(app: Any) -> int:
    return len(app._connections)


async def eventually(condition: Callable[[], bool], wait: float = 5) -> None:
    with anyio.fail_after(wait):
        while True:
            if condition():
                return
            await anyio.sleep(0.02)


@pytest.mark.parametrize(
    "initialize",
    [
        {**INITIALIZE, "params": 5},
        {**INITIALIZE, "result": {}},
        {**INITIALIZE, "jsonrpc": "1.0"},
    ],
    ids=["params-not-structured", "result-key", "not-2.0"],
)
async def test_an_initialize_the_runtime_would_answer_with_id_null_gets_400_and_no_connection(
    initialize: dict[str, Any],
) -> None:
    """The runtime answers such a request with ``id: null``; the POST waited for an answer
    with its own id, for ever, and its connection outlived the client (300 of them in
    the review, with a 1 s idle timeout)."""
    app = http_app(LoadingEchoAgent)
    async with peer(app) as p:
        with anyio.fail_after(5):
            answer = await p.post(initialize)
    assert answer.status_code == 400
    assert live_connections(app) == 0


def _broken_factory() -> ConnectionBuilder:
    raise RuntimeError("no agent today")


async def test_a_failing_factory_leaves_no_connection_behind() -> None:
    """The 500 went out, then the task group waited for the idle watch for ever."""
    app = http_app(_broken_factory)
    async with peer(app) as p:
        assert (await p.post(INITIALIZE)).status_code == 500
        await anyio.sleep(0.2)
        assert live_connections(app) == 0


class _NeverAnswers:
    """An agent that reads ``initialize`` and never answers it."""

    async def serve(self, transport: Transport) -> None:
        await transport.receive()
        await anyio.sleep_forever()


async def test_a_client_that_gives_up_on_initialize_leaves_no_connection_behind() -> None:
    app = http_app(_NeverAnswers)
    async with peer(app) as p:
        with pytest.raises(httpx.ReadTimeout):
            await p.post(INITIALIZE, timeout=0.3)
        await eventually(lambda: live_connections(app) == 0)


async def test_requests_the_runtime_answers_with_id_null_leave_no_route() -> None:
    """Each such POST left a route waiting for an answer that never comes: 12,000 of them
    on one connection kept open by its reader."""
    app = http_app(LoadingEchoAgent)
    async with peer(app) as p:
        cid = await p.initialize()
        headers = {"acp-connection-id": cid}
        for n in range(50):
            bad = {"jsonrpc": "1.0", "id": f"r{n}", "method": "session/new", "params": {}}
            assert (await p.post(bad, headers)).status_code == 202
            odd = {"jsonrpc": "2.0", "id": n, "method": "_x", "params": 5}
            assert (await p.post(odd, headers)).status_code == 202
        connection = app.connection(cid)
        assert connection is not None
        assert connection._request_routes == {}  # pyright: ignore[reportPrivateUsage]


class _PrettyRelay:
    """Relays agent texts as they come, pretty-printed (a proxy in front of an agent that
    indents its JSON): the SSE writer re-encodes them compact."""

    async def serve(self, transport: Transport) -> None:
        first = json.loads(await transport.receive())
        await transport.send(
            json.dumps({"jsonrpc": "2.0", "id": first["id"], "result": {}}).encode()
        )
        await transport.receive()  # "go"
        for i in range(200):
            note = {"jsonrpc": "2.0", "method": "note", "params": {"i": i, "t": "x" * 20}}
            await transport.send(json.dumps(note, indent=8).encode())
        await anyio.sleep_forever()


async def test_the_queued_bytes_are_counted_as_the_reader_takes_them() -> None:
    """A relayed text with line breaks was counted as sent and counted off as written
    (compact): the count crept up to the bound with a reader keeping up, and the stall
    timeout closed a healthy connection."""
    app = http_app(_PrettyRelay, max_buffered_bytes=20_000, stall_timeout=1.0)
    async with peer(app) as p:
        cid = await p.initialize()
        async with p.stream(cid) as stream:
            go = {"jsonrpc": "2.0", "method": "go", "params": {}}
            assert (await p.post(go, {"acp-connection-id": cid})).status_code == 202
            for i in range(200):
                assert (await stream.message())["params"]["i"] == i
            connection = app.connection(cid)
            assert connection is not None
            await eventually(lambda: connection.buffered_bytes == 0, wait=2)


@pytest.mark.parametrize(
    "limits",
    [{"keep_alive": 0}, {"stall_timeout": -1.0}, {"idle_timeout": math.nan}],
    ids=["keep-alive-0", "negative-stall", "nan-idle"],
)
def test_limits_are_checked_however_the_server_is_built(limits: dict[str, float]) -> None:
    """``http_app`` checked its timers; ``acp_app(limits=...)`` did not, and a keep-alive
    of 0 sent a waiting reader 10,000 comments a second."""
    with pytest.raises(ValueError, match="must be positive"):
        acp_app(LoadingEchoAgent, limits=HttpLimits(**limits))
    with pytest.raises(ValueError, match="must be positive"):
        http_app(LoadingEchoAgent, **limits)


async def test_a_request_with_null_params_is_answered_on_its_sessions_stream() -> None:
    """``"params": null`` is a request the runtime answers with its own id; the server's
    own copy of the request rules refused it, kept no route, and the answer went to the
    connection stream. The server now reads requests with the runtime's ``classify``."""
    app = http_app(LoadingEchoAgent)
    async with peer(app) as p:
        cid = await p.initialize()
        async with p.stream(cid, "s1") as session:
            call = {"jsonrpc": "2.0", "id": 7, "method": "_x/unknown", "params": None}
            headers = {"acp-connection-id": cid, "acp-session-id": "s1"}
            assert (await p.post(call, headers)).status_code == 202
            answer = await session.message()
    assert answer["id"] == 7 and answer["error"]["code"] == -32601
