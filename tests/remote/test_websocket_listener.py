"""``WebSocketApp.serve`` and ``serve_websocket``: what only the app's own listener does.

The rules it shares with the mounted app run against both in ``test_websocket_wire``,
``test_websocket_timeouts`` and the interop tests; here are the listener's own: the
upgrade request read with h11 (statuses for every malformed or refused one, byte-exact
101), frames behind the request in the same packet, RFC 6455 from the client's side
(unmasked frames, an empty close, pings), shutdown by cancellation, one bad socket not
ending the others, and fuzzed request heads."""

from __future__ import annotations

import errno
import json
from collections.abc import AsyncGenerator, Iterator
from contextlib import asynccontextmanager
from typing import Any

import anyio
import anyio.abc
import anyio.from_thread
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from wsproto import ConnectionType, WSConnection
from wsproto.connection import Connection
from wsproto.events import (
    AcceptConnection,
    CloseConnection,
    Pong,
    Request,
    TextMessage,
)
from wsproto.events import Ping as WsPing

from acp_runtime.remote import _websocket_listener as listener
from acp_runtime.remote import serve_websocket, websocket_app

from .direct_server import serving
from .untyped_echo import echo_agent

pytestmark = pytest.mark.anyio

INITIALIZE = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": 1}}
KEY = "dGhlIHNhbXBsZSBub25jZQ=="
"""RFC 6455 section 1.3's sample key; its accept token is given there too."""


def upgrade(path: str = "/acp", **headers: str) -> bytes:
    fields = {
        "Host": "127.0.0.1",
        "Upgrade": "websocket",
        "Connection": "Upgrade",
        "Sec-WebSocket-Key": KEY,
        "Sec-WebSocket-Version": "13",
        **{name.replace("_", "-"): value for name, value in headers.items()},
    }
    lines = [f"GET {path} HTTP/1.1", *(f"{k}: {v}" for k, v in fields.items() if v)]
    return ("\r\n".join(lines) + "\r\n\r\n").encode()


async def answer_to(port: int, request: bytes) -> bytes:
    """Everything the server sends for ``request`` until it closes the socket."""
    async with await anyio.connect_tcp("127.0.0.1", port) as stream:
        await stream.send(request)
        received = b""
        with anyio.fail_after(5):
            while True:
                try:
                    received += await stream.receive()
                except (anyio.EndOfStream, anyio.BrokenResourceError):
                    return received


def status_of(answer: bytes) -> int:
    return int(answer.split(b" ", 2)[1])


@asynccontextmanager
async def socket_to(port: int, first: bytes = b"") -> AsyncGenerator[Peer, None]:
    """An upgraded raw socket, wsproto's client framing; ``first`` goes in the same write
    as the upgrade request."""
    ws = WSConnection(ConnectionType.CLIENT)
    async with await anyio.connect_tcp("127.0.0.1", port) as stream:
        await stream.send(ws.send(Request(host="127.0.0.1", target="/acp")) + first)
        peer = Peer(stream, ws)
        accepted = await peer.next_event()
        assert isinstance(accepted, AcceptConnection)
        yield peer


class Peer:
    def __init__(self, stream: anyio.abc.SocketStream, ws: WSConnection) -> None:
        self.stream = stream
        self.ws = ws
        self.events: list[object] = []

    async def next_event(self) -> object:
        with anyio.fail_after(5):
            while not self.events:
                try:
                    data = await self.stream.receive()
                except (anyio.EndOfStream, anyio.BrokenResourceError):
                    self.ws.receive_data(None)
                    data = b""
                if data:
                    self.ws.receive_data(data)
                self.events += list(self.ws.events())
                if not data and not self.events:
                    raise anyio.EndOfStream
        return self.events.pop(0)

    async def send_json(self, value: object) -> None:
        await self.stream.send(self.ws.send(TextMessage(data=json.dumps(value))))

    async def next_json(self) -> Any:
        event = await self.next_event()
        assert isinstance(event, TextMessage), event
        return json.loads(event.data)


# -- the upgrade request -----------------------------------------------------------------


async def test_the_101_is_exact_and_carries_a_fresh_connection_id() -> None:
    async with serving(websocket_app(echo_agent)) as port:
        async with await anyio.connect_tcp("127.0.0.1", port) as stream:
            await stream.send(upgrade())
            with anyio.fail_after(5):
                head = await stream.receive()
    lines = head.decode().split("\r\n")
    assert lines[:4] == [
        "HTTP/1.1 101 Switching Protocols",
        "Upgrade: websocket",
        "Connection: Upgrade",
        "Sec-WebSocket-Accept: s3pPLMBiTxaQ9kYGzzhZRbK+xOo=",
    ]
    assert lines[4].startswith("Acp-Connection-Id: ") and len(lines[4]) == 19 + 36
    assert lines[5:] == ["", ""]


@pytest.mark.parametrize(
    ("request_bytes", "status", "header"),
    [
        (upgrade(Upgrade=""), 426, None),  # plain HTTP on the path
        (upgrade(Connection="keep-alive"), 426, None),
        (b"POST /acp HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\n\r\n{}", 426, None),
        (upgrade(Sec_WebSocket_Version="8"), 426, b"sec-websocket-version: 13"),
        (upgrade(Sec_WebSocket_Key=""), 400, None),
        (upgrade(Sec_WebSocket_Key="c2hvcnQ="), 400, None),  # 5 bytes, not 16
        (upgrade(Sec_WebSocket_Key="not base64!"), 400, None),
        (upgrade("/other"), 404, None),
        (upgrade("/acp/x"), 404, None),
        (b"GARBAGE\r\n\r\n", 400, None),
        (b"GET /acp HTTP/1.1\r\nHost: x\r\nBad Header\r\n\r\n", 400, None),
        (upgrade(X_Long="a" * 70_000), 431, None),
    ],
)
async def test_a_request_that_is_no_valid_upgrade_gets_its_status_and_the_socket_closes(
    request_bytes: bytes, status: int, header: bytes | None
) -> None:
    async with serving(websocket_app(echo_agent)) as port:
        answer = await answer_to(port, request_bytes)
    assert status_of(answer) == status
    assert b"\r\nconnection: close\r\n" in answer.lower()
    if header is not None:
        assert header in answer.lower()


async def test_a_key_that_is_not_ascii_gets_400_and_the_listener_lives_on() -> None:
    """base64 raises a bare ValueError (not binascii.Error) for non-ASCII text: once, that
    ended the whole listener."""
    request = upgrade(Sec_WebSocket_Key="x").replace(b"Key: x", b"Key: \xe9")
    async with serving(websocket_app(echo_agent)) as port:
        assert status_of(await answer_to(port, request)) == 400
        assert status_of(await answer_to(port, upgrade() + b"\x88\x80abcd")) == 101


async def test_the_query_string_is_not_part_of_the_path() -> None:
    async with serving(websocket_app(echo_agent)) as port:
        answer = await answer_to(port, upgrade("/acp?token=1") + b"\x88\x80abcd")
    assert status_of(answer) == 101


async def test_path_none_serves_every_path() -> None:
    async with serving(websocket_app(echo_agent, path=None)) as port:
        answer = await answer_to(port, upgrade("/anything") + b"\x88\x80abcd")
    assert status_of(answer) == 101


async def test_a_socket_that_sends_no_whole_request_in_time_is_dropped(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(listener, "HANDSHAKE_TIMEOUT", 0.3)
    async with serving(websocket_app(echo_agent)) as port:
        with anyio.fail_after(3):
            answer = await answer_to(port, b"GET /acp HTTP/1.1\r\nHost: x\r\n")
    assert answer == b""


# -- frames ------------------------------------------------------------------------------


async def test_frames_sent_behind_the_request_in_the_same_write_are_served() -> None:
    frame = Connection(ConnectionType.CLIENT).send(TextMessage(data=json.dumps(INITIALIZE)))
    async with serving(websocket_app(echo_agent)) as port, socket_to(port, frame) as peer:
        assert (await peer.next_json())["result"] == {"protocolVersion": 1}


async def test_pings_are_answered_and_an_empty_close_is_echoed_empty() -> None:
    async with serving(websocket_app(echo_agent)) as port, socket_to(port) as peer:
        await peer.stream.send(peer.ws.send(WsPing(payload=b"hi")))
        pong = await peer.next_event()
        assert isinstance(pong, Pong) and pong.payload == b"hi"
        await peer.stream.send(b"\x88\x80abcd")  # masked, no payload
        close = await peer.next_event()
    assert isinstance(close, CloseConnection) and close.code == 1005  # echoed with no code


async def test_an_unmasked_frame_from_the_client_closes_1002() -> None:
    async with serving(websocket_app(echo_agent)) as port, socket_to(port) as peer:
        await peer.stream.send(bytes((0x81, 2)) + b"{}")
        close = await peer.next_event()
    assert isinstance(close, CloseConnection)
    assert (close.code, close.reason) == (1002, "unmasked frame from the client")


# -- the listener ------------------------------------------------------------------------


async def test_cancelling_serve_websocket_closes_every_socket_1001() -> None:
    server = anyio.CancelScope()

    async def run(task_status: anyio.abc.TaskStatus[int]) -> None:
        with server:
            await serve_websocket(echo_agent, port=0, task_status=task_status)

    async with anyio.create_task_group() as tg:
        port = await tg.start(run)
        async with socket_to(port) as one, socket_to(port) as two:
            for peer in (one, two):
                await peer.send_json(INITIALIZE)
                await peer.next_json()
            server.cancel()
            closes = [await one.next_event(), await two.next_event()]
    assert all(isinstance(c, CloseConnection) for c in closes)
    assert {(c.code, c.reason) for c in closes if isinstance(c, CloseConnection)} == {
        (1001, "Server shutting down")
    }


async def test_a_failing_socket_leaves_the_others_and_the_listener_serving() -> None:
    class FailsOnSecondMessage:
        async def serve(self, transport: Any) -> None:
            await transport.receive()
            await transport.receive()
            raise RuntimeError("the agent broke")

    made = iter([FailsOnSecondMessage(), echo_agent(), echo_agent()])
    async with serving(websocket_app(lambda: next(made))) as port:
        async with socket_to(port) as failing, socket_to(port) as fine:
            await failing.send_json(INITIALIZE)
            await fine.send_json(INITIALIZE)
            assert (await fine.next_json())["id"] == 1
            await failing.send_json({"jsonrpc": "2.0", "method": "x"})
            close = await failing.next_event()
            assert isinstance(close, CloseConnection) and close.code == 1011
            await fine.send_json({"jsonrpc": "2.0", "id": 2, "method": "x", "params": {"n": 5}})
            assert (await fine.next_json())["result"] == {"echo": {"n": 5}}
        async with socket_to(port) as later:
            await later.send_json(INITIALIZE)
            assert (await later.next_json())["id"] == 1


async def test_an_accept_out_of_file_descriptors_pauses_and_the_listener_serves_on(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """On the stream path (trio's) an accept failing with EMFILE, anyio's
    BrokenResourceError from OSError 24, ended serve for good: later clients were refused."""
    streams = listener._listen_on_streams  # pyright: ignore[reportPrivateUsage]
    monkeypatch.setattr(listener, "_listen_on_loop", streams)  # the stream path on asyncio too
    create_tcp_listener = anyio.create_tcp_listener
    accepts = 0

    async def out_of_fds_after_the_first(**kwargs: Any) -> Any:
        made = await create_tcp_listener(**kwargs)
        (one,) = made.listeners  # 127.0.0.1: one address
        assert isinstance(one, anyio.abc.SocketListener)
        accept = one.accept

        async def accept_or_fail() -> anyio.abc.SocketStream:
            nonlocal accepts
            accepts += 1
            if accepts in (2, 3):  # the first socket served, then twice out of fds
                raise anyio.BrokenResourceError from OSError(errno.EMFILE, "Too many")
            return await accept()

        monkeypatch.setattr(one, "accept", accept_or_fail)
        return made

    monkeypatch.setattr(anyio, "create_tcp_listener", out_of_fds_after_the_first)
    async with serving(websocket_app(echo_agent)) as port:
        assert status_of(await answer_to(port, upgrade() + b"\x88\x80abcd")) == 101
        with anyio.fail_after(3):
            assert status_of(await answer_to(port, upgrade() + b"\x88\x80abcd")) == 101
    assert accepts >= 4
    assert "accepting a socket failed ([Errno 24] Too many); retrying" in caplog.text


async def test_the_port_started_with_is_the_one_bound() -> None:
    async with anyio.create_task_group() as tg:
        port = await tg.start(websocket_app(echo_agent).serve, "127.0.0.1", 0)
        assert isinstance(port, int) and port > 0
        async with socket_to(port) as peer:
            await peer.send_json(INITIALIZE)
            assert (await peer.next_json())["id"] == 1
        tg.cancel_scope.cancel()


# -- fuzzed request heads ----------------------------------------------------------------

ANSWERED = {101, 400, 401, 403, 404, 426, 431}


@pytest.fixture
def fuzz_port(anyio_backend: str) -> Iterator[tuple[anyio.from_thread.BlockingPortal, int]]:
    app = websocket_app(echo_agent, authenticate=lambda h: h.get("authorization") != "no")
    with anyio.from_thread.start_blocking_portal(anyio_backend) as portal:
        with portal.wrap_async_context_manager(serving(app)) as port:
            yield portal, port


header_names = st.sampled_from(
    ["Upgrade", "Connection", "Sec-WebSocket-Key", "Sec-WebSocket-Version", "Authorization"]
) | st.text(st.characters(min_codepoint=33, max_codepoint=126), min_size=1, max_size=12)
header_values = st.sampled_from(["websocket", "Upgrade", KEY, "13", "no", ""]) | st.text(
    st.characters(min_codepoint=1, max_codepoint=255), max_size=30
)


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    method=st.sampled_from(["GET", "POST", "DELETE", "get", "PUT"])
    | st.text(st.characters(min_codepoint=33, max_codepoint=126), min_size=1, max_size=8),
    path=st.sampled_from(["/acp", "/acp?x=1", "/", "*", "/acp/../acp"]),
    headers=st.lists(st.tuples(header_names, header_values), max_size=6),
    junk=st.binary(max_size=40),
)
def test_any_request_head_gets_a_documented_status_or_a_close_and_the_server_lives(
    fuzz_port: tuple[anyio.from_thread.BlockingPortal, int],
    method: str,
    path: str,
    headers: list[tuple[str, str]],
    junk: bytes,
) -> None:
    portal, port = fuzz_port
    head = f"{method} {path} HTTP/1.1\r\nHost: x\r\n"
    head += "".join(f"{name}: {value}\r\n" for name, value in headers)
    request = head.encode("latin-1", "replace") + b"\r\n" + junk
    answer = portal.call(answer_to, port, request + b"\x88\x80abcd")
    if answer:
        assert status_of(answer) in ANSWERED
    after = portal.call(answer_to, port, upgrade() + b"\x88\x80abcd")
    assert status_of(after) == 101  # the listener still serves


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    name=st.sampled_from(
        ["Upgrade", "Connection", "Sec-WebSocket-Key", "Sec-WebSocket-Version", "Host"]
    ),
    value=st.text(st.characters(min_codepoint=1, max_codepoint=255), max_size=40),
)
def test_a_valid_upgrade_with_one_header_fuzzed_gets_a_status_and_the_server_lives(
    fuzz_port: tuple[anyio.from_thread.BlockingPortal, int], name: str, value: str
) -> None:
    """Random heads rarely get past the first checks; this one is valid but for one value,
    so each later check (version, key, the hook) meets bad input too."""
    portal, port = fuzz_port
    valid = upgrade().decode("latin-1").split("\r\n")
    fuzzed = [f"{name}: {value}" if line.startswith(f"{name}:") else line for line in valid]
    request = "\r\n".join(fuzzed).encode("latin-1")
    answer = portal.call(answer_to, port, request + b"\x88\x80abcd")
    if answer:
        assert status_of(answer) in ANSWERED
    after = portal.call(answer_to, port, upgrade() + b"\x88\x80abcd")
    assert status_of(after) == 101


async def test_a_failure_reading_one_upgrade_drops_that_socket_alone(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    read_upgrade = listener._read_upgrade
    failures = iter([RuntimeError("a bug")])

    async def failing_once(*args: Any) -> Any:
        for failure in failures:
            raise failure
        return await read_upgrade(*args)

    monkeypatch.setattr(listener, "_read_upgrade", failing_once)
    async with serving(websocket_app(echo_agent)) as port:
        assert await answer_to(port, upgrade()) == b""  # dropped
        assert status_of(await answer_to(port, upgrade() + b"\x88\x80abcd")) == 101
    assert "reading a WebSocket upgrade request failed" in caplog.text
