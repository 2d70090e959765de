"""The server's stall and idle timeouts, against hypercorn on both backends.

A peer that stops reading: the server's writes fill the socket buffers and the next frame
waits; past ``stall_timeout`` the socket is closed with 1008 and the connection settles
(the agent's pending request to that client fails as closed). A raw client (wsproto on a
plain TCP stream) is needed to stop reading: a full client reads whatever arrives.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from contextlib import AbstractAsyncContextManager
from typing import Any

import anyio
import pytest
import wsproto
import wsproto.events as ws_events
from anyio.abc import SocketStream

from acp_runtime import ConnectionBuilder, RequestError, Responder
from acp_runtime.remote import websocket_app
from acp_runtime.remote._websocket_server import _Socket

from .untyped_echo import echo_agent

pytestmark = pytest.mark.anyio

Serving = Callable[..., AbstractAsyncContextManager[int]]
"""``serving(app)`` of the WebSocket server under test (the ``websocket_server`` fixture)."""

INITIALIZE = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": 1}}
CHUNK = "x" * (256 * 1024)


class RawClient:
    """A WebSocket client that reads only when told to."""

    def __init__(self, stream: SocketStream) -> None:
        self.stream = stream
        self.ws = wsproto.WSConnection(wsproto.ConnectionType.CLIENT)
        self.events: list[ws_events.Event] = []

    @classmethod
    async def connect(cls, port: int) -> RawClient:
        client = cls(await anyio.connect_tcp("127.0.0.1", port))
        await client.stream.send(client.ws.send(ws_events.Request(host="127.0.0.1", target="/acp")))
        while not any(isinstance(e, ws_events.AcceptConnection) for e in client.events):
            await client.read_some()
        return client

    async def send(self, message: Any) -> None:
        await self.stream.send(self.ws.send(ws_events.TextMessage(json.dumps(message))))

    async def read_some(self) -> None:
        try:
            data = await self.stream.receive(1 << 20)
        except (anyio.EndOfStream, anyio.BrokenResourceError):
            data = None
        self.ws.receive_data(data)
        self.events.extend(self.ws.events())

    async def next_text(self) -> Any:
        while True:
            for i, event in enumerate(self.events):
                if isinstance(event, ws_events.TextMessage):
                    del self.events[: i + 1]
                    return json.loads(event.data)
            await self.read_some()

    async def close_code(self) -> int | None:
        """Read to the end; the code of the close frame (None: the stream ended without)."""
        while self.ws.state not in (wsproto.connection.ConnectionState.CLOSED,):
            for event in self.events:
                if isinstance(event, ws_events.CloseConnection):
                    return event.code
            self.events.clear()
            if self.ws.state is wsproto.connection.ConnectionState.CLOSED:
                break
            await self.read_some()
        return next((e.code for e in self.events if isinstance(e, ws_events.CloseConnection)), None)


def flooding_agent(questions: list[Any], flooding: anyio.Event) -> ConnectionBuilder:
    """``flood``: asks the client something it will never answer (the request goes to
    ``questions``), then writes 256 KiB notifications until the socket is gone."""
    builder = ConnectionBuilder(role="untyped")

    async def handle(method: str, params: Any, responder: Responder[Any]) -> Any:
        if method == "initialize":
            return {"protocolVersion": 1}
        connection = responder.connection
        questions.append(connection.send_raw_request("client/question", {}))
        flooding.set()
        while True:
            await connection.send_raw_notification("agent/chunk", {"text": CHUNK})

    builder.on_raw_request(handle)
    return builder


async def test_a_client_that_stops_reading_is_closed_with_1008_and_its_requests_settle(
    websocket_server: Serving,
) -> None:
    questions: list[Any] = []
    flooding = anyio.Event()
    app = websocket_app(lambda: flooding_agent(questions, flooding), stall_timeout=0.5)
    async with websocket_server(app) as port:
        client = await RawClient.connect(port)
        await client.send(INITIALIZE)
        assert (await client.next_text())["id"] == 1
        await client.send({"jsonrpc": "2.0", "id": 2, "method": "flood"})
        with anyio.fail_after(10):
            await flooding.wait()
            with pytest.raises(RequestError) as failure:  # the client reads nothing meanwhile
                await questions[0]
        assert failure.value.is_connection_closed
        with anyio.fail_after(10):
            assert await client.close_code() == 1008
        await client.stream.aclose()


async def test_an_idle_socket_is_closed_with_1001_and_traffic_keeps_it_open(
    websocket_server: Serving,
) -> None:
    app = websocket_app(echo_agent, idle_timeout=0.6)
    async with websocket_server(app) as port:
        client = await RawClient.connect(port)
        await client.send(INITIALIZE)
        assert (await client.next_text())["id"] == 1
        for n in range(4):  # 1.2 s of traffic, a frame every 0.3 s: never idle
            await anyio.sleep(0.3)
            await client.send({"jsonrpc": "2.0", "id": 10 + n, "method": "ping"})
            assert (await client.next_text())["id"] == 10 + n
        started = anyio.current_time()
        with anyio.fail_after(5):
            assert await client.close_code() == 1001
        assert anyio.current_time() - started >= 0.5
        await client.stream.aclose()


async def test_an_idle_timeout_is_off_by_default(websocket_server: Serving) -> None:
    app = websocket_app(echo_agent)
    async with websocket_server(app) as port:
        client = await RawClient.connect(port)
        await client.send(INITIALIZE)
        assert (await client.next_text())["id"] == 1
        await anyio.sleep(1.0)
        await client.send({"jsonrpc": "2.0", "id": 2, "method": "ping"})
        assert (await client.next_text())["id"] == 2
        await client.stream.aclose()


class SlowPeer:
    """An ASGI ``send`` whose every frame takes ``delay`` seconds to go out (a peer
    reading slowly, but reading), and a ``receive`` that never returns."""

    def __init__(self, delay: float) -> None:
        self.delay = delay
        self.sent: list[Any] = []

    async def send(self, message: Any) -> None:
        await anyio.sleep(self.delay)
        self.sent.append(message)

    async def receive(self) -> Any:
        await anyio.sleep_forever()


async def test_a_slow_but_reading_peer_is_judged_frame_by_frame_not_by_the_burst() -> None:
    """Three frames of 0.25 s each in one burst: 0.75 s of sending, each frame well inside
    the 0.4 s stall timeout, so nothing stalled."""
    peer = SlowPeer(0.25)
    socket = _Socket(peer.receive, peer.send, 1024, stall_timeout=0.4)
    async with anyio.create_task_group() as tg:
        tg.start_soon(socket.watch)
        with anyio.fail_after(5):
            await socket.send_texts(["1", "2", "3"])
        tg.cancel_scope.cancel()
    assert [m["text"] for m in peer.sent] == ["1", "2", "3"]
    assert not socket.serve_scope.cancel_called


async def test_the_close_after_a_quiet_while_starts_its_own_stall_clock() -> None:
    """A send the watcher saw under way, then a quiet spell past the stall timeout, then a
    close whose frame takes a while: the close is not judged by the old send's clock."""
    peer = SlowPeer(0.1)  # longer than the watcher's poll (0.4 s / 20)
    socket = _Socket(peer.receive, peer.send, 1024, stall_timeout=0.4)
    async with anyio.create_task_group() as tg:
        tg.start_soon(socket.watch)
        with anyio.fail_after(5):
            await socket.send_text("1")
            await anyio.sleep(0.5)
            await socket.close(1000, "bye")
        tg.cancel_scope.cancel()
    assert [m.get("code") for m in peer.sent] == [None, 1000]
    assert not socket.serve_scope.cancel_called
