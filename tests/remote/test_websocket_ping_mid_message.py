"""A ping between two fragments of a message is answered as it arrives (RFC 6455 5.5:
control frames may come mid-message; Autobahn 5.6 and 5.7 expect the pong before the
echo of the message).

The stream path (trio, httpx's connection) parsed the frames that came behind the 101
when it was made, and ``receive`` returned their message without writing the pong: it
went out only at the next read, after whatever the caller sent in between (Autobahn's
fuzzingserver failed our trio client on 5.6 and 5.7).
"""

from __future__ import annotations

import anyio
import anyio.abc
import pytest

from acp_runtime.remote import _websocket_frames as frames
from acp_runtime.remote import connect_websocket
from acp_runtime.remote._websocket_handshake import Accepted
from acp_runtime.remote._websocket_socket import StreamWebSocket

from .test_websocket_client_hostile import server, switching

pytestmark = pytest.mark.anyio

FIRST = bytes((0x01, 9)) + b"fragment1"  # text, not final
PING = frames.control_frame(frames.OP_PING, b"ping payload", mask=False)
LAST = bytes((0x80, 9)) + b"fragment2"  # continuation, final
PONG = frames.control_frame(frames.OP_PONG, b"ping payload", mask=False)


class Wire:
    """A byte stream for :class:`StreamWebSocket`: ``read`` gives the chunks of
    ``incoming`` (then waits forever), ``write`` keeps what the socket sent."""

    def __init__(self, *incoming: bytes) -> None:
        self.incoming = list(incoming)
        self.written: list[bytes] = []

    async def read(self) -> bytes:
        if not self.incoming:
            await anyio.sleep_forever()
        return self.incoming.pop(0)

    async def write(self, data: bytes) -> None:
        self.written.append(data)

    async def close(self) -> None:
        pass


def pong_payloads(data: bytes) -> list[bytes]:
    """The payloads of the (masked) pongs in ``data``; :class:`FrameReader` consumes
    pongs silently, so they are read here by hand."""
    payloads, view = [], memoryview(data)
    while view:
        opcode, length = view[0] & 0x0F, view[1] & 0x7F  # control frames: length < 126
        key, payload = bytes(view[2:6]), bytes(view[6 : 6 + length])
        if opcode == frames.OP_PONG:
            payloads.append(frames._masked(payload, key))  # pyright: ignore[reportPrivateUsage]
        view = view[6 + length :]
    return payloads


async def test_a_ping_that_came_with_the_upgrade_mid_message_is_answered_before_the_message() -> (
    None
):
    """The frames behind the 101: a fragment, a ping, the last fragment. The pong is
    written by the time ``receive`` gives the message, before the caller can answer it."""
    wire = Wire()
    socket = StreamWebSocket(
        1 << 20, Accepted({}, FIRST + PING + LAST), wire.read, wire.write, wire.close
    )
    with anyio.fail_after(5):
        assert await socket.receive() == b"fragment1fragment2"
    assert pong_payloads(b"".join(wire.written)) == [b"ping payload"]


async def test_a_ping_between_fragments_read_apart_is_answered_before_the_last_fragment() -> None:
    """Each frame in its own read: the pong goes out while the message is incomplete."""
    pong_sent = anyio.Event()
    wire = Wire(FIRST, PING)

    async def read() -> bytes:
        if wire.incoming:
            return await wire.read()
        with anyio.fail_after(5):
            await pong_sent.wait()  # the last fragment comes only once the pong went
        return LAST

    async def write(data: bytes) -> None:
        await wire.write(data)
        if pong_payloads(data):
            pong_sent.set()

    socket = StreamWebSocket(1 << 20, Accepted({}, b""), read, write, wire.close)
    with anyio.fail_after(5):
        assert await socket.receive() == b"fragment1fragment2"


async def test_over_tcp_the_pong_goes_before_the_echo_of_the_message() -> None:
    """Autobahn 5.6 on the wire: the server sends the 101 and the three frames in one
    write; the client echoes the message; the server must see the pong first."""
    first_frame = len(PONG) + 4  # masked: the key's 4 bytes more; the echo is longer
    seen: list[bytes] = []
    done = anyio.Event()

    async def script(stream: anyio.abc.SocketStream) -> None:
        received = b""
        while len(received) < first_frame:
            received += await stream.receive()
        seen.append(received)  # then the socket ends: the client's close needs no wait
        done.set()

    def with_frames(key: bytes) -> bytes:
        return switching(key) + FIRST + PING + LAST

    async with server(script, with_frames) as port:
        url = f"ws://127.0.0.1:{port}/acp"
        async with connect_websocket(url, keepalive_ping_interval=None) as ws:
            with anyio.fail_after(5):
                await ws.send(await ws.receive())
                await done.wait()
    opcode = seen[0][0] & 0x0F
    assert opcode == frames.OP_PONG, f"the echo went before the pong: {seen[0][:first_frame]!r}"
    assert pong_payloads(seen[0][:first_frame]) == [b"ping payload"]
