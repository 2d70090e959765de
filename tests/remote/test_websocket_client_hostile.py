"""The WebSocket client against a server that misbehaves on purpose: a hung server behind
a write that waits fails the keep-alive (nothing hangs), a flood of empty frames pauses
reading, binary frames cost a throttled log line, a refusal's body is read only so far and
so long, a 101 that does not switch as RFC 6455 says is refused on the httpx path too, and
a close reason is cut at a character's boundary.

Each case was found by a review that drove the client against hand-written servers."""

from __future__ import annotations

import logging
from collections.abc import AsyncGenerator, Awaitable, Callable
from contextlib import asynccontextmanager

import anyio
import anyio.abc
import httpx
import pytest
from wsproto.utilities import generate_accept_token

from acp_runtime import ConnectionBuilder, RequestError
from acp_runtime.remote import WebSocketUpgradeError, connect_websocket
from acp_runtime.remote import _websocket_frames as frames
from acp_runtime.remote import _websocket_socket as sockets

from .tcp_server import tcp_serving

pytestmark = pytest.mark.anyio

Script = Callable[[anyio.abc.SocketStream], Awaitable[None]]


def switching(key: bytes, *extra: str) -> bytes:
    lines = [
        "HTTP/1.1 101 Switching Protocols",
        "Upgrade: websocket",
        "Connection: Upgrade",
        f"Sec-WebSocket-Accept: {generate_accept_token(key).decode()}",
        *extra,
    ]
    return ("\r\n".join(lines) + "\r\n\r\n").encode()


@asynccontextmanager
async def server(
    script: Script, answer: Callable[[bytes], bytes] = switching
) -> AsyncGenerator[int, None]:
    """A server that reads the upgrade request, writes ``answer(key)``, then runs
    ``script`` on the socket."""

    async def handle(stream: anyio.abc.SocketStream) -> None:
        async with stream:
            head = b""
            while b"\r\n\r\n" not in head:
                head += await stream.receive()
            key = next(
                line.split(b":", 1)[1].strip()
                for line in head.split(b"\r\n")
                if line.lower().startswith(b"sec-websocket-key:")
            )
            await stream.send(answer(key))
            await script(stream)

    async with tcp_serving(handle) as port:
        yield port


async def test_a_hung_server_behind_a_waiting_write_fails_the_keepalive_and_nothing_hangs() -> None:
    """The server takes nothing and says nothing once a big request fills the socket's
    buffers. The keep-alive queued its ping behind that write and waited with it: the
    request never settled. Now a write the peer takes nothing of, with nothing received,
    for ``keepalive_ping_timeout`` closes the socket (1011) and the request fails."""

    async def hung(stream: anyio.abc.SocketStream) -> None:
        await anyio.sleep_forever()  # reads nothing, sends nothing

    async with server(hung) as port:
        url = f"ws://127.0.0.1:{port}/acp"
        async with connect_websocket(
            url, keepalive_ping_interval=0.2, keepalive_ping_timeout=0.3
        ) as transport:
            builder = ConnectionBuilder(role="untyped")
            async with builder.connect(transport) as cx:
                with anyio.fail_after(10), pytest.raises(RequestError):
                    await cx.send_raw_request("big", {"text": "x" * (32 * 1024 * 1024)})


@pytest.mark.parametrize("anyio_backend", ["asyncio"])
async def test_a_flood_of_empty_frames_pauses_reading_and_loses_nothing() -> None:
    """An empty message counted nothing toward the read pause: 14 million of them waited
    in the inbox of a client that was not receiving."""
    count = 600_000

    async def flood(stream: anyio.abc.SocketStream) -> None:
        await stream.send(bytes((0x81, 0)) * count + frames.text_frame(b'"end"', mask=False))
        await anyio.sleep_forever()

    async with server(flood) as port:
        async with connect_websocket(f"ws://127.0.0.1:{port}/acp") as transport:
            await anyio.sleep(0.5)  # nobody receives meanwhile
            assert isinstance(transport, sockets.LoopWebSocket)
            waiting = len(transport._inbox)  # pyright: ignore[reportPrivateUsage]
            one_read = 256 * 1024 // 2  # empty frames in one read of asyncio's
            assert waiting <= sockets.PAUSE_BYTES // sockets.MESSAGE_OVERHEAD + one_read
            received = 0
            with anyio.fail_after(20):
                while await transport.receive() != b'"end"':
                    received += 1
    assert received == count


async def test_binary_frames_cost_a_throttled_warning_not_one_each(
    caplog: pytest.LogCaptureFixture,
) -> None:
    async def binaries(stream: anyio.abc.SocketStream) -> None:
        await stream.send(bytes((0x82, 0)) * 2000 + frames.text_frame(b'"end"', mask=False))
        await anyio.sleep_forever()

    caplog.set_level(logging.WARNING, logger="acp_runtime.remote._websocket_socket")
    async with server(binaries) as port:
        async with connect_websocket(f"ws://127.0.0.1:{port}/acp") as transport:
            with anyio.fail_after(5):
                assert await transport.receive() == b'"end"'
    warnings = [r for r in caplog.records if "binary WebSocket frame" in r.getMessage()]
    assert 1 <= len(warnings) <= 10


# -- the httpx path (a lent client, or a proxy) ----------------------------------------------


async def test_a_refusal_body_that_never_ends_is_read_only_so_far() -> None:
    """The httpx path read a refusal's whole body, past ``open_timeout`` (1.3 GB in 5 s)."""

    async def endless(stream: anyio.abc.SocketStream) -> None:
        chunk = b"x" * 65536
        while True:
            await stream.send(b"10000\r\n" + chunk + b"\r\n")

    def forbidden(key: bytes) -> bytes:
        return b"HTTP/1.1 403 Forbidden\r\nTransfer-Encoding: chunked\r\n\r\n"

    async with server(endless, forbidden) as port, httpx.AsyncClient() as http:
        with anyio.fail_after(5), pytest.raises(WebSocketUpgradeError) as refused:
            async with connect_websocket(f"ws://127.0.0.1:{port}/acp", client=http, open_timeout=2):
                pass
    assert refused.value.status_code == 403
    assert len(refused.value.body) == 64 * 1024


@pytest.mark.parametrize(
    ("answer", "why"),
    [
        (lambda key: switching(key, "Sec-WebSocket-Extensions: permessage-deflate"), "extensions"),
        (lambda key: switching(key, "Sec-WebSocket-Protocol: acp"), "protocol"),
        (lambda key: switching(key).replace(b"Upgrade: websocket\r\n", b""), "Upgrade"),
        (lambda key: switching(key).replace(b"Connection: Upgrade\r\n", b""), "Upgrade"),
        (lambda key: b"NOT HTTP AT ALL\r\n\r\n", "invalid WebSocket handshake"),
    ],
)
async def test_the_httpx_path_refuses_an_answer_that_does_not_switch_as_rfc_6455_says(
    answer: Callable[[bytes], bytes], why: str
) -> None:
    """The own socket path leaves these checks to wsproto; the httpx path checked only the
    status and the accept token (a 101 with no Upgrade header opened)."""

    async def idle(stream: anyio.abc.SocketStream) -> None:
        await anyio.sleep_forever()

    async with server(idle, answer) as port, httpx.AsyncClient() as http:
        with anyio.fail_after(5), pytest.raises(WebSocketUpgradeError) as refused:
            async with connect_websocket(f"ws://127.0.0.1:{port}/acp", client=http):
                pass
    assert why in str(refused.value)


def test_a_close_reason_is_cut_at_a_characters_boundary() -> None:
    """``close(4000, "é" * 100)`` sent 123 bytes ending in half an "é": the peer must fail
    the socket with 1007 for a reason that is not UTF-8."""
    payload = frames.close_payload(4000, "é" * 100)
    assert len(payload) <= 125
    assert payload[2:].decode() == "é" * 61
    reader = frames.FrameReader(1024)
    reader.feed(frames.control_frame(frames.OP_CLOSE, payload, mask=False))
    assert reader.next() == frames.Close(4000, "é" * 61)
