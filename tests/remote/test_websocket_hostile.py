"""The WebSocket server against a peer that misbehaves on purpose: what it sends after a
protocol error, after its close frame, while its upgrade is judged or while the server
closes is dropped or waits for TCP, never held in memory; a ping flood from a peer that
reads nothing leaves one pong waiting, not one per ping; a close code no peer may send
fails the socket with 1002; a ping sent with the upgrade is answered at once.

Each case was found by a review that flooded the own listener (``WebSocketApp.serve``)
with a raw socket; they run here against it on both backends."""

from __future__ import annotations

import json
from collections.abc import AsyncGenerator, Callable, Iterator
from contextlib import asynccontextmanager, contextmanager
from typing import Any

import anyio
import anyio.abc
import pytest

from acp_runtime import ConnectionBuilder, Responder
from acp_runtime.remote import _websocket_frames as frames
from acp_runtime.remote import _websocket_socket as sockets
from acp_runtime.remote import websocket_app
from acp_runtime.remote._websocket_frames import Close, FrameReader

from .direct_server import serving

pytestmark = pytest.mark.anyio

KEY = "dGhlIHNhbXBsZSBub25jZQ=="
UPGRADE = (
    "GET /acp HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
    f"Sec-WebSocket-Key: {KEY}\r\nSec-WebSocket-Version: 13\r\n\r\n"
).encode()
MB = 1024 * 1024


def request(request_id: int, method: str) -> bytes:
    """A client's (masked) text frame holding one JSON-RPC request."""
    message = {"jsonrpc": "2.0", "id": request_id, "method": method, "params": {}}
    if method == "initialize":
        message["params"] = {"protocolVersion": 1}
    return frames.text_frame(json.dumps(message).encode())


def recording_agent(handled: list[str], hold: anyio.Event | None = None) -> Callable[[], Any]:
    """An agent that records the methods it is asked; ``slow`` waits for ``hold``."""

    def agent() -> ConnectionBuilder:
        builder = ConnectionBuilder(role="untyped")

        async def answer(method: str, params: Any, responder: Responder[Any]) -> Any:
            handled.append(method)
            if method == "slow" and hold is not None:
                await hold.wait()
            return {"protocolVersion": 1} if method == "initialize" else {}

        builder.on_raw_request(answer)
        return builder

    return agent


def server_frames(data: bytearray) -> Iterator[tuple[int, bytes]]:
    """Take the whole (unmasked) frames at the start of ``data``: opcode and payload."""
    while len(data) >= 2:
        length, start = data[1] & 0x7F, 2
        if length == 126:
            length, start = int.from_bytes(data[2:4], "big"), 4
        elif length == 127:
            length, start = int.from_bytes(data[2:10], "big"), 10
        if len(data) < start + length:
            return
        yield data[0] & 0x0F, bytes(data[start : start + length])
        del data[: start + length]


class RawPeer:
    """An upgraded socket written by hand; reads the server's frames as they are."""

    def __init__(self, stream: anyio.abc.SocketStream, rest: bytes) -> None:
        self.stream = stream
        self.buffer = bytearray(rest)

    async def frames(self, *, until_closed: bool = True, seconds: float = 5) -> list[Frame]:
        """The server's frames until it closes the socket (or ``seconds`` pass; with
        ``until_closed`` false, until some came)."""
        found = list(server_frames(self.buffer))
        with anyio.move_on_after(seconds):
            while until_closed or not found:
                try:
                    self.buffer += await self.stream.receive()
                except (anyio.EndOfStream, anyio.BrokenResourceError):
                    break
                found += server_frames(self.buffer)
        return found

    async def send_for(self, data: bytes, seconds: float) -> int:
        """Send ``data`` over and over for ``seconds`` (or until the socket fails): how
        many bytes the server took."""
        sent = 0
        with anyio.move_on_after(seconds):
            try:
                while True:
                    await self.stream.send(data)
                    sent += len(data)
            except (anyio.BrokenResourceError, anyio.ClosedResourceError, OSError):
                pass
        return sent


@asynccontextmanager
async def upgraded(port: int, first: bytes = b"") -> AsyncGenerator[RawPeer, None]:
    async with await anyio.connect_tcp("127.0.0.1", port) as stream:
        await stream.send(UPGRADE + first)
        head = b""
        with anyio.fail_after(5):
            while b"\r\n\r\n" not in head:
                head += await stream.receive()
        assert head.startswith(b"HTTP/1.1 101 ")
        yield RawPeer(stream, head.partition(b"\r\n\r\n")[2])


@contextmanager
def served_sockets(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[sockets.WebSocketTransport]]:
    """The server's sockets as they are made (either path)."""
    made: list[sockets.WebSocketTransport] = []
    for cls in (sockets.LoopWebSocket, sockets.StreamWebSocket):
        init = cls.__init__

        def recording(self: Any, *args: Any, _init: Any = init, **kwargs: Any) -> None:
            _init(self, *args, **kwargs)
            made.append(self)

        monkeypatch.setattr(cls, "__init__", recording)
    yield made


Frame = tuple[int, bytes]


def close_codes(found: list[Frame]) -> list[int]:
    return [int.from_bytes(payload[:2], "big") for opcode, payload in found if opcode == 0x8]


# -- what a peer sends after a protocol error, or after its close ------------------------


async def test_after_a_protocol_error_the_server_takes_nothing_more_from_the_peer() -> None:
    """An unmasked frame fails the socket (1002) while a handler runs. Before, the asyncio
    socket went on reading and buffered all the peer sent (1 GB in 2 s in the review)."""
    hold = anyio.Event()
    async with serving(websocket_app(recording_agent([], hold))) as port:
        async with upgraded(port, request(1, "initialize") + request(2, "slow")) as peer:
            await peer.frames(until_closed=False)  # the initialize answer
            await peer.stream.send(bytes((0x81, 2)) + b"{}")  # unmasked: a server refuses it
            taken = await peer.send_for(frames.text_frame(b"x" * 60_000) * 16, seconds=1.5)
            hold.set()
            assert close_codes(await peer.frames()) == [1002]
    assert taken < 24 * MB  # what the kernel's socket buffers hold, not what the peer sent


def test_a_frame_reader_drops_everything_after_a_protocol_error() -> None:
    reader = FrameReader(1 * MB, masked=True)
    reader.feed(bytes((0x81, 2)) + b"{}")  # unmasked
    with pytest.raises(frames.FrameError):
        reader.next()
    reader.feed(frames.text_frame(b"{}") * 1000)
    assert reader.buffered == 0 and reader.next() is None


async def test_frames_after_the_peers_close_are_not_served_and_a_second_close_not_echoed() -> None:
    """RFC 6455 1.4: after a close frame nothing is data. The asyncio socket served a
    request sent after the close, and echoed a second close."""
    handled: list[str] = []
    hold = anyio.Event()
    async with serving(websocket_app(recording_agent(handled, hold))) as port:
        async with upgraded(port, request(1, "initialize")) as peer:
            await peer.frames(until_closed=False)
            close = frames.control_frame(frames.OP_CLOSE, frames.close_payload(1000, None))
            await peer.stream.send(request(2, "slow") + close)
            await anyio.sleep(0.1)  # a later packet: parsed by a later read
            await peer.stream.send(request(3, "after-close") + close)
            await anyio.sleep(0.2)
            hold.set()
            codes = close_codes(await peer.frames())
    assert handled == ["initialize", "slow"]
    assert codes == [1000]


# -- a peer that reads nothing -----------------------------------------------------------


@pytest.mark.parametrize("anyio_backend", ["asyncio"])
async def test_a_ping_flood_from_a_peer_that_reads_nothing_leaves_one_pong_waiting(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The asyncio socket wrote a pong per ping whatever its buffer held: 319 MB waited
    for a peer that read nothing. Now, while writes wait, only the latest ping's pong does
    (RFC 6455 5.5.3), and it goes once the peer reads."""
    with served_sockets(monkeypatch) as made:
        async with serving(websocket_app(recording_agent([]))) as port:
            async with upgraded(port, request(1, "initialize")) as peer:
                pings = b"".join(
                    frames.control_frame(frames.OP_PING, b"%06d" % i + b"p" * 100)
                    for i in range(1000)
                )
                await peer.send_for(pings, seconds=1.5)
                last = b"%06d" % 999 + b"p" * 100
                await peer.stream.send(frames.control_frame(frames.OP_PING, last))
                await anyio.sleep(0.2)
                (server,) = made
                assert isinstance(server, sockets.LoopWebSocket)
                waiting = server._transport.get_write_buffer_size()  # pyright: ignore[reportPrivateUsage]
                assert waiting < 1 * MB
                found = await peer.frames(seconds=1.5)
    pongs = [payload for opcode, payload in found if opcode == 0xA]
    assert pongs[-1] == last  # the peer read again: the latest ping has its answer


async def test_a_peer_sending_on_while_its_upgrade_is_judged_waits_for_tcp() -> None:
    """An awaited ``authenticate`` hook: the asyncio handshake read on into memory (1 GB
    in the review) while the hook ran."""

    async def slow_refusal(headers: Any) -> bool:
        await anyio.sleep(1.5)
        return False

    app = websocket_app(recording_agent([]), authenticate=slow_refusal)
    async with serving(app) as port:
        async with await anyio.connect_tcp("127.0.0.1", port) as stream:
            await stream.send(UPGRADE)
            taken = await RawPeer(stream, b"").send_for(b"x" * 65536, seconds=1.2)
    assert taken < 24 * MB


async def test_what_the_peer_sends_while_the_server_closes_is_not_kept(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A first frame that is no ``initialize`` gets 1002; the server then waits a while
    for the peer's close answer. The stream path parsed every text frame sent meanwhile
    into an inbox nobody read (600 MB in the review)."""
    with served_sockets(monkeypatch) as made:
        async with serving(websocket_app(recording_agent([]))) as port:
            async with upgraded(port, request(1, "not-initialize")) as peer:
                await peer.send_for(frames.text_frame(b"y" * 60_000), seconds=1.0)
                (server,) = made
                assert server._queued == 0 and not server._inbox  # pyright: ignore[reportPrivateUsage]


# -- frames no peer may send ---------------------------------------------------------------


@pytest.mark.parametrize("code", [0, 999, 1004, 1005, 1006, 1015, 1016, 2999, 5000])
def test_a_close_code_no_peer_may_send_is_a_protocol_error(code: int) -> None:
    reader = FrameReader(1024)
    reader.feed(frames.control_frame(frames.OP_CLOSE, code.to_bytes(2, "big"), mask=False))
    with pytest.raises(frames.FrameError) as refused:
        reader.next()
    assert refused.value.code == 1002


@pytest.mark.parametrize("code", [1000, 1001, 1002, 1003, 1007, 1011, 1012, 1014, 3000, 4999])
def test_a_close_code_a_peer_may_send_is_read(code: int) -> None:
    reader = FrameReader(1024)
    reader.feed(frames.control_frame(frames.OP_CLOSE, code.to_bytes(2, "big"), mask=False))
    assert reader.next() == Close(code, "")


async def test_a_close_with_code_1006_from_the_peer_gets_1002_not_its_echo() -> None:
    async with serving(websocket_app(recording_agent([]))) as port:
        async with upgraded(port, request(1, "initialize")) as peer:
            await peer.frames(until_closed=False)
            await peer.stream.send(frames.control_frame(frames.OP_CLOSE, (1006).to_bytes(2, "big")))
            assert close_codes(await peer.frames()) == [1002]


def test_a_message_that_never_ends_in_empty_fragments_reaches_the_limit() -> None:
    """Empty continuation frames added nothing to the size: 5,000,000 of them were kept
    as list entries with a 1 KiB limit."""
    reader = FrameReader(1024)
    reader.feed(bytes((0x01, 1)) + b"x" + bytes((0x00, 0)) * 5000)  # text, FIN=0; then empty
    events = []
    while (event := reader.next()) is not None:
        events.append(event)
    assert len(events) == 1 and isinstance(events[0], frames.TooLarge)


def test_a_fragmented_message_ending_in_an_empty_fragment_is_whole() -> None:
    reader = FrameReader(1024)
    reader.feed(bytes((0x01, 2)) + b"{}" + bytes((0x80, 0)))  # text "{}" FIN=0, empty FIN
    assert reader.next() == b"{}"


# -- a ping that comes with the upgrade ------------------------------------------------------


async def test_a_ping_in_the_upgrade_packet_is_answered_before_anything_else() -> None:
    """The stream path queued the pong and sent it only after the peer's next frame."""
    ping = frames.control_frame(frames.OP_PING, b"are you there")
    async with serving(websocket_app(recording_agent([]))) as port:
        async with upgraded(port, ping) as peer:
            found = await peer.frames(until_closed=False, seconds=2)
    assert found == [(0xA, b"are you there")]


async def test_a_peer_that_pipelines_much_behind_its_upgrade_is_served_in_full() -> None:
    """What a handshake holds past its bound pauses reading; the socket that takes over
    reads on: 680 KiB of requests sent with the upgrade, while an awaited hook judges it,
    all get their answers."""

    async def slow_yes(headers: Any) -> bool:
        await anyio.sleep(0.3)
        return True

    pipelined = b"".join(request(n, "echo") for n in range(2, 10002))  # about 680 KiB
    handled: list[str] = []
    app = websocket_app(recording_agent(handled), authenticate=slow_yes)
    async with serving(app) as port:
        async with await anyio.connect_tcp("127.0.0.1", port) as stream:
            await stream.send(UPGRADE + request(1, "initialize") + pipelined)
            received = b""
            with anyio.fail_after(10):
                while received.count(b'"jsonrpc"') < 10001:
                    received += await stream.receive()
    assert len(pipelined) > 2 * sockets.HANDSHAKE_BUFFER_BYTES
    assert handled.count("echo") == 10000


async def test_after_an_over_limit_message_the_peers_close_answer_ends_the_socket_at_once() -> None:
    """The frame reader stopped at the over-limit message, so the peer's close answer went
    unread and the server waited its full 2 s close timeout every time."""
    app = websocket_app(recording_agent([]), max_message_bytes=1024)
    async with serving(app) as port:
        async with upgraded(port, request(1, "initialize")) as peer:
            await peer.frames(until_closed=False)  # the initialize answer
            await peer.stream.send(frames.text_frame(b"x" * 5000))
            assert close_codes(await peer.frames(until_closed=False)) == [1008]
            started = anyio.current_time()
            answer = frames.control_frame(frames.OP_CLOSE, frames.close_payload(1008, None))
            await peer.stream.send(answer)
            await peer.frames()  # until the server ends the socket
            assert anyio.current_time() - started < 1.0
