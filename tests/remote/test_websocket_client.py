"""The client transport on its own, against scripted servers (ASGI under hypercorn, or raw
wsproto): binary frames skipped, a message over the limit refused with 1009, the server's
close code kept, pings answered, the keep-alive, protocol errors, refusals with their
status, an httpx client or an environment proxy taking the upgrade, and wss."""

from __future__ import annotations

import contextlib
import shutil
import socket
import ssl
import subprocess
from collections.abc import AsyncGenerator, Awaitable, Callable
from contextlib import asynccontextmanager
from typing import Any

import anyio
import anyio.abc
import anyio.lowlevel
import httpx
import pytest
from wsproto import ConnectionType, WSConnection
from wsproto.events import AcceptConnection, CloseConnection, Ping, Pong, Request, TextMessage

from acp_runtime import ConnectionBuilder
from acp_runtime.remote import (
    Refusal,
    WebSocketApp,
    WebSocketUpgradeError,
    connect_websocket,
    websocket_app,
)
from acp_runtime.remote._asgi import serve_lifespan
from acp_runtime.remote._websocket_socket import BURST_GAP, COALESCE_BYTES, LoopWebSocket
from acp_runtime.transports import MessageTooLarge

from .hypercorn_server import serving
from .tcp_server import tcp_serving

pytestmark = pytest.mark.anyio


class Scripted:
    """An ASGI app: accepts, sends ``frames`` (str: text, bytes: binary), then closes with
    ``close_code`` or waits for the client to."""

    def __init__(self, frames: list[str | bytes], close_code: int | None = None) -> None:
        self.frames = frames
        self.close_code = close_code

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] == "lifespan":
            await serve_lifespan(receive, send, anyio.lowlevel.checkpoint)
            return
        await receive()  # websocket.connect
        await send({"type": "websocket.accept", "headers": [(b"acp-connection-id", b"c-1")]})
        for frame in self.frames:
            key = "text" if isinstance(frame, str) else "bytes"
            await send({"type": "websocket.send", key: frame})
        if self.close_code is not None:
            await send({"type": "websocket.close", "code": self.close_code, "reason": "bye"})
            return
        while (await receive())["type"] != "websocket.disconnect":
            pass


async def test_binary_frames_are_skipped_and_the_connection_id_is_read() -> None:
    app = Scripted([b"\x00binary", '{"jsonrpc":"2.0","method":"a"}'], close_code=1001)
    async with serving(app) as port:
        async with connect_websocket(f"ws://127.0.0.1:{port}/acp") as transport:
            assert transport.connection_id == "c-1"
            with anyio.fail_after(5):
                assert await transport.receive() == b'{"jsonrpc":"2.0","method":"a"}'
                with pytest.raises(anyio.EndOfStream):
                    await transport.receive()
    assert (transport.close_code, transport.close_reason) == (1001, "bye")


class ClientClose:
    def __init__(self) -> None:
        self.codes: list[int] = []
        self.texts: list[str] = []
        self.seen = anyio.Event()


@asynccontextmanager
async def wsproto_server(first: str, close: ClientClose) -> AsyncGenerator[int, None]:
    """A bare wsproto server on a loopback port: sends ``first``, records the client's close
    code (an ASGI app does not see it: hypercorn reports 1000 or 1006 whatever was sent)."""

    async def handle(stream: anyio.abc.SocketStream) -> None:
        ws = WSConnection(ConnectionType.SERVER)
        partial = ""  # wsproto hands out a message split across reads in parts
        async with stream:
            while True:
                try:
                    ws.receive_data(await stream.receive())
                except anyio.EndOfStream:
                    return
                for event in ws.events():
                    if isinstance(event, Request):
                        await stream.send(ws.send(AcceptConnection()))
                        await stream.send(ws.send(TextMessage(data=first)))
                    elif isinstance(event, TextMessage):
                        partial += event.data
                        if event.message_finished:
                            close.texts.append(partial)
                            partial = ""
                    elif isinstance(event, CloseConnection):
                        close.codes.append(event.code)
                        close.seen.set()
                        return

    async with tcp_serving(handle) as port:
        yield port


async def test_a_message_over_the_limit_closes_1009() -> None:
    close = ClientClose()
    async with wsproto_server('"' + "x" * 200 + '"', close) as port:
        async with connect_websocket(
            f"ws://127.0.0.1:{port}/acp", max_message_bytes=100
        ) as transport:
            with anyio.fail_after(5):
                with pytest.raises(MessageTooLarge) as caught:
                    await transport.receive()
                with pytest.raises(anyio.EndOfStream):
                    await transport.receive()
            with pytest.raises(anyio.ClosedResourceError):
                await transport.send(b"{}")
        with anyio.fail_after(5):
            await close.seen.wait()
    assert caught.value.limit == 100
    assert close.codes == [1009]


async def test_leaving_the_block_closes_1000() -> None:
    close = ClientClose()
    async with wsproto_server('"hi"', close) as port:
        async with connect_websocket(f"ws://127.0.0.1:{port}/acp") as transport:
            with anyio.fail_after(5):
                assert await transport.receive() == b'"hi"'
        with anyio.fail_after(5):
            await close.seen.wait()
    assert close.codes == [1000]


async def test_send_many_writes_each_message_as_its_own_frame_in_order() -> None:
    close = ClientClose()
    async with wsproto_server('"hi"', close) as port:
        async with connect_websocket(f"ws://127.0.0.1:{port}/acp") as transport:
            await transport.send_many([b'{"n":1}', b'{"n":2}', '{"é":3}'.encode()])
            await transport.send(b'{"n":4}')
        with anyio.fail_after(5):
            await close.seen.wait()
    assert close.texts == ['{"n":1}', '{"n":2}', '{"é":3}', '{"n":4}']


@pytest.mark.parametrize("anyio_backend", ["asyncio"])
async def test_every_send_waiting_for_the_socket_to_drain_is_woken(anyio_backend: str) -> None:
    """asyncio's flow control: while writing is paused several sends can wait (the
    connection's writer and the keep-alive's ping); resuming wakes every one, and one
    waiter cancelled meanwhile ends no other's wait."""
    close = ClientClose()
    sent: list[str] = []
    async with wsproto_server('"hi"', close) as port:
        async with connect_websocket(f"ws://127.0.0.1:{port}/acp") as transport:
            assert isinstance(transport, LoopWebSocket)  # the asyncio socket path
            transport.pause_writing()  # what asyncio calls at the buffer's high-water mark

            async def send(text: str) -> None:
                await transport.send(text.encode())
                sent.append(text)

            cancelled = anyio.CancelScope()

            async def send_cancelled() -> None:
                with cancelled:
                    await send('"b"')

            with anyio.fail_after(5):
                async with anyio.create_task_group() as tg:
                    tg.start_soon(send, '"a"')
                    await anyio.wait_all_tasks_blocked()
                    tg.start_soon(send_cancelled)
                    await anyio.wait_all_tasks_blocked()
                    tg.start_soon(send, '"c"')
                    await anyio.wait_all_tasks_blocked()
                    cancelled.cancel()
                    await anyio.wait_all_tasks_blocked()
                    transport.resume_writing()
        with anyio.fail_after(5):
            await close.seen.wait()
    assert sorted(sent) == ['"a"', '"c"']
    assert sorted(close.texts) == ['"a"', '"c"']


Script = Callable[[anyio.abc.SocketStream, WSConnection, "Seen"], Awaitable[None]]


class Seen:
    """What a scripted raw server received from the client."""

    def __init__(self) -> None:
        self.events: list[object] = []
        self.changed = anyio.Event()

    def add(self, events: list[object]) -> None:
        self.events += events
        self.changed.set()
        self.changed = anyio.Event()

    async def wait_for(self, kind: type[object]) -> Any:
        with anyio.fail_after(5):
            while not any(isinstance(e, kind) for e in self.events):
                await self.changed.wait()
        return next(e for e in self.events if isinstance(e, kind))


@asynccontextmanager
async def raw_server(
    script: Script, *, answer: bool = True
) -> AsyncGenerator[tuple[int, Seen], None]:
    """A wsproto server that accepts (unless ``answer`` is False: then it never answers),
    runs ``script``, and records all the client sends until it closes."""
    seen = Seen()

    async def handle(stream: anyio.abc.SocketStream) -> None:
        ws = WSConnection(ConnectionType.SERVER)
        async with stream:
            accepted = False
            while True:
                try:
                    data = await stream.receive()
                except (anyio.EndOfStream, anyio.BrokenResourceError):
                    return
                if not answer:
                    continue
                ws.receive_data(data)
                events = list(ws.events())
                if not accepted and any(isinstance(e, Request) for e in events):
                    accepted = True
                    await stream.send(ws.send(AcceptConnection()))
                    async with anyio.create_task_group() as tg:
                        tg.start_soon(script, stream, ws, seen)
                        await record(stream, ws, seen)
                        tg.cancel_scope.cancel()
                    return

    async def record(stream: anyio.abc.SocketStream, ws: WSConnection, seen: Seen) -> None:
        while True:
            try:
                data = await stream.receive()
            except (anyio.EndOfStream, anyio.BrokenResourceError, anyio.ClosedResourceError):
                return
            ws.receive_data(data)
            seen.add(list(ws.events()))

    async with tcp_serving(handle) as port:
        yield port, seen


async def test_a_ping_from_the_server_is_answered_with_its_payload() -> None:
    async def script(stream: anyio.abc.SocketStream, ws: WSConnection, seen: Seen) -> None:
        await stream.send(ws.send(Ping(payload=b"are you there")))
        await stream.send(ws.send(TextMessage(data='"after"')))
        await anyio.sleep_forever()

    async with raw_server(script) as (port, seen):
        async with connect_websocket(f"ws://127.0.0.1:{port}/acp") as transport:
            with anyio.fail_after(5):
                assert await transport.receive() == b'"after"'
            pong = await seen.wait_for(Pong)
    assert pong.payload == b"are you there"


async def test_the_end_of_the_stream_without_a_close_frame_is_a_broken_socket() -> None:
    async def script(stream: anyio.abc.SocketStream, ws: WSConnection, seen: Seen) -> None:
        await stream.send(ws.send(TextMessage(data='"last"')))
        await stream.aclose()

    async with raw_server(script) as (port, _):
        async with connect_websocket(f"ws://127.0.0.1:{port}/acp") as transport:
            with anyio.fail_after(5):
                assert await transport.receive() == b'"last"'
                with pytest.raises(anyio.BrokenResourceError):
                    await transport.receive()
            with pytest.raises(anyio.BrokenResourceError):
                await transport.send(b"{}")
    assert transport.close_code is None


async def test_a_masked_frame_from_the_server_is_refused_with_1002() -> None:
    async def script(stream: anyio.abc.SocketStream, ws: WSConnection, seen: Seen) -> None:
        await stream.send(bytes((0x81, 0x82)) + b"\x00\x00\x00\x00{}")
        await anyio.sleep_forever()

    async with raw_server(script) as (port, seen):
        async with connect_websocket(f"ws://127.0.0.1:{port}/acp") as transport:
            with anyio.fail_after(5), pytest.raises(anyio.BrokenResourceError):
                await transport.receive()
            close = await seen.wait_for(CloseConnection)
    assert close.code == 1002


async def test_a_silent_server_fails_the_keepalive_and_is_closed_with_1011() -> None:
    async def script(stream: anyio.abc.SocketStream, ws: WSConnection, seen: Seen) -> None:
        await anyio.sleep_forever()  # takes the pings, answers nothing

    async with raw_server(script) as (port, seen):
        async with connect_websocket(
            f"ws://127.0.0.1:{port}/acp", keepalive_ping_interval=0.1, keepalive_ping_timeout=0.2
        ) as transport:
            with anyio.fail_after(5), pytest.raises(anyio.BrokenResourceError):
                await transport.receive()
            close = await seen.wait_for(CloseConnection)
    assert (close.code, close.reason) == (1011, "Keepalive ping timeout")
    assert any(isinstance(e, Ping) for e in seen.events)


async def test_a_server_that_answers_pings_keeps_the_socket_open() -> None:
    """A receive waits meanwhile: silence would be the server's."""

    async def script(stream: anyio.abc.SocketStream, ws: WSConnection, seen: Seen) -> None:
        answered = 0
        while True:
            await seen.changed.wait()
            pings = [e for e in seen.events if isinstance(e, Ping)]
            for ping in pings[answered:]:
                await stream.send(ws.send(ping.response()))
            answered = len(pings)

    async with raw_server(script) as (port, seen):
        async with connect_websocket(
            f"ws://127.0.0.1:{port}/acp", keepalive_ping_interval=0.1, keepalive_ping_timeout=0.2
        ) as transport:
            with anyio.move_on_after(1.0):
                await transport.receive()
            await transport.send(b'"still here"')
            message = await seen.wait_for(TextMessage)
    assert message.data == '"still here"'
    assert len([e for e in seen.events if isinstance(e, Ping)]) >= 3
    assert [e.code for e in seen.events if isinstance(e, CloseConnection)] == [1000]


async def test_a_server_that_never_answers_the_upgrade_times_out() -> None:
    async def script(stream: anyio.abc.SocketStream, ws: WSConnection, seen: Seen) -> None:
        raise AssertionError("never accepted")

    async with raw_server(script, answer=False) as (port, _):
        with anyio.fail_after(5), pytest.raises(TimeoutError):
            async with connect_websocket(f"ws://127.0.0.1:{port}/acp", open_timeout=0.3):
                pass


def refusing_app() -> WebSocketApp:
    return websocket_app(
        lambda: ConnectionBuilder(role="agent"),
        authenticate=lambda headers: (
            headers.get("authorization") == "Bearer ok" or Refusal(401, challenge="Bearer")
        ),
    )


async def test_a_refused_upgrade_raises_with_the_status_headers_and_body() -> None:
    async with serving(refusing_app()) as port:
        with pytest.raises(WebSocketUpgradeError) as refused:
            async with connect_websocket(f"ws://127.0.0.1:{port}/acp"):
                pass
        assert refused.value.status_code == 401
        assert refused.value.headers["www-authenticate"] == "Bearer"
        assert refused.value.body == b"Unauthorized\n"
        with pytest.raises(WebSocketUpgradeError) as wrong_path:
            async with connect_websocket(f"ws://127.0.0.1:{port}/elsewhere"):
                pass
        assert wrong_path.value.status_code == 404
        headers = {"Authorization": "Bearer ok"}
        async with connect_websocket(f"ws://127.0.0.1:{port}/acp", headers=headers) as transport:
            assert transport.connection_id


async def test_an_answer_with_a_wrong_accept_token_is_not_a_websocket() -> None:
    async def handle(stream: anyio.abc.SocketStream) -> None:
        async with stream:
            await stream.receive()
            await stream.send(
                b"HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\n"
                b"Connection: Upgrade\r\nSec-WebSocket-Accept: bogus\r\n\r\n"
            )
            await anyio.sleep_forever()

    async with tcp_serving(handle) as port:
        with pytest.raises(WebSocketUpgradeError) as refused:
            async with connect_websocket(f"ws://127.0.0.1:{port}/acp"):
                pass
    assert refused.value.status_code is None


class Echo:
    """An ASGI app that echoes text frames and says which headers it saw."""

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] == "lifespan":
            await serve_lifespan(receive, send, anyio.lowlevel.checkpoint)
            return
        await receive()
        seen = dict(scope["headers"])
        await send({"type": "websocket.accept", "headers": [(b"acp-connection-id", b"c-2")]})
        await send({"type": "websocket.send", "text": seen.get(b"authorization", b"").decode()})
        while (message := await receive())["type"] == "websocket.receive":
            await send({"type": "websocket.send", "text": message["text"]})


async def test_an_httpx_client_lends_its_headers_and_the_frames_run_over_its_connection() -> None:
    async with serving(Echo()) as port:
        async with httpx.AsyncClient(headers={"Authorization": "Bearer lent"}) as http:
            url = f"ws://127.0.0.1:{port}/acp"
            async with connect_websocket(url, client=http) as transport:
                assert transport.connection_id == "c-2"
                with anyio.fail_after(5):
                    assert await transport.receive() == b"Bearer lent"
                    await transport.send_many([b'{"n":1}', "é".encode()])
                    assert [await transport.receive() for _ in range(2)] == [
                        b'{"n":1}',
                        "é".encode(),
                    ]


async def test_a_proxy_in_the_environment_routes_the_upgrade_through_httpx(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The proxy named here listens nowhere: the upgrade fails as httpx's, where a direct
    socket would have reached the server."""
    for name in ("NO_PROXY", "no_proxy", "ALL_PROXY", "all_proxy", "HTTPS_PROXY", "https_proxy"):
        monkeypatch.delenv(name, raising=False)
    with socket.socket() as unused:
        unused.bind(("127.0.0.1", 0))
        nowhere = unused.getsockname()[1]
    monkeypatch.setenv("HTTP_PROXY", f"http://127.0.0.1:{nowhere}")
    monkeypatch.setenv("http_proxy", f"http://127.0.0.1:{nowhere}")
    async with serving(Echo()) as port:
        with pytest.raises((httpx.ConnectError, httpx.ProxyError)):
            async with connect_websocket(f"ws://127.0.0.1:{port}/acp"):
                pass
        monkeypatch.setenv("NO_PROXY", "127.0.0.1")
        monkeypatch.setenv("no_proxy", "127.0.0.1")
        async with connect_websocket(f"ws://127.0.0.1:{port}/acp") as transport:
            assert transport.connection_id == "c-2"


@asynccontextmanager
async def connect_proxy() -> AsyncGenerator[tuple[int, list[bytes]], None]:
    """A bare HTTP CONNECT proxy on a loopback port: tunnels each connection to the
    address it names, and records the CONNECT lines."""
    requests: list[bytes] = []

    async def pipe(source: anyio.abc.ByteStream, sink: anyio.abc.ByteStream) -> None:
        with contextlib.suppress(anyio.EndOfStream, anyio.BrokenResourceError):
            async for chunk in source:
                await sink.send(chunk)
        with contextlib.suppress(anyio.BrokenResourceError, anyio.ClosedResourceError):
            await sink.send_eof()

    async def handle(client: anyio.abc.SocketStream) -> None:
        head = b""
        while b"\r\n\r\n" not in head:
            head += await client.receive()
        line = head.split(b"\r\n", 1)[0]
        requests.append(line)
        host, port = line.split()[1].rsplit(b":", 1)
        async with client, await anyio.connect_tcp(host.decode(), int(port)) as upstream:
            await client.send(b"HTTP/1.1 200 Connection established\r\n\r\n")
            async with anyio.create_task_group() as tg:
                tg.start_soon(pipe, client, upstream)
                await pipe(upstream, client)

    async with tcp_serving(handle) as port:
        yield port, requests


async def test_a_proxied_wss_upgrade_verifies_the_server_with_the_given_context(
    certificate: tuple[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """With a proxy in the environment the upgrade goes through httpx, which must verify
    the server with ``ssl_context`` too (it used certifi's roots, which refuse this one)."""
    for name in ("NO_PROXY", "no_proxy", "ALL_PROXY", "all_proxy", "HTTP_PROXY", "http_proxy"):
        monkeypatch.delenv(name, raising=False)
    cert, _ = certificate
    async with serving(Echo(), tls=certificate) as port, connect_proxy() as (proxy, requests):
        monkeypatch.setenv("HTTPS_PROXY", f"http://127.0.0.1:{proxy}")
        monkeypatch.setenv("https_proxy", f"http://127.0.0.1:{proxy}")
        context = ssl.create_default_context(cafile=cert)
        url = f"wss://127.0.0.1:{port}/acp"
        async with connect_websocket(url, ssl_context=context) as transport:
            with anyio.fail_after(5):
                assert await transport.receive() == b""
                await transport.send(b'{"proxied":true}')
                assert await transport.receive() == b'{"proxied":true}'
    assert requests == [f"CONNECT 127.0.0.1:{port} HTTP/1.1".encode()]


@pytest.fixture(scope="module")
def certificate(tmp_path_factory: pytest.TempPathFactory) -> tuple[str, str]:
    """A self-signed certificate for 127.0.0.1 (made with the openssl command)."""
    if shutil.which("openssl") is None:
        pytest.skip("no openssl command to make a test certificate")
    folder = tmp_path_factory.mktemp("tls")
    cert, key = str(folder / "cert.pem"), str(folder / "key.pem")
    subprocess.run(
        [
            "openssl",
            "req",
            "-x509",
            "-newkey",
            "ec",
            "-pkeyopt",
            "ec_paramgen_curve:prime256v1",
            "-nodes",
            "-keyout",
            key,
            "-out",
            cert,
            "-days",
            "1",
            "-subj",
            "/CN=127.0.0.1",
            "-addext",
            "subjectAltName=IP:127.0.0.1",
        ],
        check=True,
        capture_output=True,
    )
    return cert, key


async def test_wss_verifies_the_server_with_the_given_context(
    certificate: tuple[str, str],
) -> None:
    cert, _ = certificate
    async with serving(Echo(), tls=certificate) as port:
        url = f"wss://127.0.0.1:{port}/acp"
        context = ssl.create_default_context(cafile=cert)
        async with connect_websocket(url, ssl_context=context) as transport:
            with anyio.fail_after(5):
                assert await transport.receive() == b""
                await transport.send(b'{"secure":true}')
                assert await transport.receive() == b'{"secure":true}'
        with pytest.raises((ssl.SSLError, anyio.BrokenResourceError, OSError)):
            async with connect_websocket(url):  # the default roots do not know it
                pass


async def test_an_empty_close_from_the_server_is_echoed_empty_never_as_1005() -> None:
    """1005 means "the close carried no code" and must never be sent (RFC 6455 7.4.1):
    the TS SDK's ``ws`` fails the socket on it. wsproto, recording, does too."""

    async def script(stream: anyio.abc.SocketStream, ws: WSConnection, seen: Seen) -> None:
        await stream.send(bytes((0x88, 0)))  # a close frame with no payload
        await anyio.sleep_forever()

    async with raw_server(script) as (port, seen):
        async with connect_websocket(f"ws://127.0.0.1:{port}/acp") as transport:
            with anyio.fail_after(5), pytest.raises(anyio.EndOfStream):
                await transport.receive()
            echo = await seen.wait_for(CloseConnection)
    assert echo.code == 1005  # wsproto's reading of an empty close frame
    assert transport.close_code == 1005


class CountedWrites:
    """Wraps an asyncio transport's ``write``: what each call wrote."""

    def __init__(self, transport: Any) -> None:
        self.writes: list[bytes] = []
        self._write = transport._transport.write
        transport._transport.write = self

    def __call__(self, data: bytes) -> None:
        self.writes.append(bytes(data))
        self._write(data)


@pytest.mark.parametrize("anyio_backend", ["asyncio"])
async def test_a_burst_goes_in_two_writes_and_a_lone_frame_at_once(anyio_backend: str) -> None:
    """With ``TCP_NODELAY`` a write is a segment: a burst is two writes (its first frame
    at once, the rest at the end of the event loop's turn), and a frame sent after a
    pause goes at once."""
    close = ClientClose()
    async with wsproto_server('"hi"', close) as port:
        async with connect_websocket(f"ws://127.0.0.1:{port}/acp") as transport:
            assert isinstance(transport, LoopWebSocket)  # the asyncio socket path
            counted = CountedWrites(transport)
            await anyio.sleep(2 * BURST_GAP)
            for i in range(100):
                assert transport.send_nowait(b'{"n":%d}' % i)
            assert 1 <= len(counted.writes) <= 2  # the first at once (a stalled machine: two)
            await anyio.lowlevel.checkpoint()  # the turn ends: the rest in one write
            assert 2 <= len(counted.writes) <= 3
            await anyio.sleep(2 * BURST_GAP)
            before = len(counted.writes)
            assert transport.send_nowait(b'"later"')
            assert len(counted.writes) == before + 1  # after a pause: at once
        with anyio.fail_after(5):
            await close.seen.wait()
    assert close.texts == [f'{{"n":{i}}}' for i in range(100)] + ['"later"']


@pytest.mark.parametrize("anyio_backend", ["asyncio"])
async def test_held_frames_go_before_a_later_send_and_before_the_close(
    anyio_backend: str,
) -> None:
    close = ClientClose()
    async with wsproto_server('"hi"', close) as port:
        async with connect_websocket(f"ws://127.0.0.1:{port}/acp") as transport:
            for text in (b'"a"', b'"b"', b'"c"'):
                assert transport.send_nowait(text)
            await transport.send_many([b'"d"', b'"e"'])  # the writer's path: no hold
            assert transport.send_nowait(b'"f"')
            assert transport.send_nowait(b'"g"')  # held when the block closes the socket
        with anyio.fail_after(5):
            await close.seen.wait()
    assert close.texts == ['"a"', '"b"', '"c"', '"d"', '"e"', '"f"', '"g"']


@pytest.mark.parametrize("anyio_backend", ["asyncio"])
async def test_a_long_burst_is_written_every_coalesce_bytes_not_held_whole(
    anyio_backend: str,
) -> None:
    close = ClientClose()
    message = b'"' + b"x" * 998 + b'"'
    async with wsproto_server('"hi"', close) as port:
        async with connect_websocket(f"ws://127.0.0.1:{port}/acp") as transport:
            counted = CountedWrites(transport)
            count = 0
            while count < 300 and transport.send_nowait(message):
                count += 1
            assert max(map(len, counted.writes)) <= COALESCE_BYTES + 1024
            assert len(counted.writes) >= count * 1000 // COALESCE_BYTES
        with anyio.fail_after(10):
            await close.seen.wait()
    assert len(close.texts) == count
