"""The frame codec against wsproto's, both sides: what it writes, wsproto (as the other
side) reads; what wsproto writes, it reads, whole or a byte at a time; what RFC 6455
forbids, it refuses with the close code to send."""

from __future__ import annotations

import pytest
from wsproto import ConnectionType
from wsproto.connection import Connection
from wsproto.events import BytesMessage, CloseConnection, Ping, Pong, TextMessage

from acp_runtime.remote import _websocket_frames as frames
from acp_runtime.remote._websocket_frames import Binary, Close, FrameError, FrameReader, TooLarge

SIZES = [0, 1, 125, 126, 65535, 65536, 70000]


def server() -> Connection:
    return Connection(ConnectionType.SERVER)


def events_of(
    reader: FrameReader, data: bytes, *, one_byte_at_a_time: bool = False
) -> list[object]:
    chunks = [data[i : i + 1] for i in range(len(data))] if one_byte_at_a_time else [data]
    found: list[object] = []
    for chunk in chunks:
        reader.feed(chunk)
        while (event := reader.next()) is not None:
            found.append(event)
    return found


@pytest.mark.parametrize("size", SIZES)
def test_what_the_client_writes_a_server_reads_as_masked_text_messages(size: int) -> None:
    texts = ["é" * (size // 2) + "x" * (size % 2), '{"n":1}']
    ws = server()
    ws.receive_data(frames.text_frames([text.encode() for text in texts]))
    received = list(ws.events())
    assert all(isinstance(event, TextMessage) and event.message_finished for event in received)
    assert [event.data for event in received if isinstance(event, TextMessage)] == texts


def test_control_frames_are_masked_and_read_by_a_server() -> None:
    ws = server()
    ping = frames.control_frame(frames.OP_PING, b"abc")
    pong = frames.control_frame(frames.OP_PONG, b"xyz")
    close = frames.control_frame(frames.OP_CLOSE, frames.close_payload(1009, "Message too large"))
    ws.receive_data(ping + pong + close)
    received = list(ws.events())
    assert isinstance(received[0], Ping) and received[0].payload == b"abc"
    assert isinstance(received[1], Pong) and received[1].payload == b"xyz"
    assert isinstance(received[2], CloseConnection)
    assert (received[2].code, received[2].reason) == (1009, "Message too large")


@pytest.mark.parametrize("size", SIZES)
@pytest.mark.parametrize("one_byte_at_a_time", [False, True])
def test_the_reader_takes_a_servers_text_frames_whole_or_byte_by_byte(
    size: int, one_byte_at_a_time: bool
) -> None:
    text = "é" * (size // 2) + "x" * (size % 2)
    ws = server()
    data = ws.send(TextMessage(data=text)) + ws.send(TextMessage(data="{}"))
    found = events_of(FrameReader(1 << 20), data, one_byte_at_a_time=one_byte_at_a_time)
    assert found == [text.encode(), b"{}"]


def test_fragments_are_joined_and_control_frames_between_them_come_out_first() -> None:
    ws = server()
    data = ws.send(TextMessage(data="hé", message_finished=False))
    data += ws.send(Ping(payload=b"p"))
    data += ws.send(TextMessage(data="llo", message_finished=True))
    data += ws.send(BytesMessage(data=b"\x00" * 10, message_finished=False))
    data += ws.send(BytesMessage(data=b"\x00" * 5, message_finished=True))
    data += ws.send(Pong(payload=b"ignored"))
    data += ws.send(CloseConnection(code=1001, reason="bye"))
    found = events_of(FrameReader(1 << 20), data)
    assert found == [frames.Ping(b"p"), "héllo".encode(), Binary(15), Close(1001, "bye")]


def test_a_close_frame_without_a_code_reads_as_1005() -> None:
    assert events_of(FrameReader(100), bytes((0x88, 0))) == [Close(1005, "")]


def frame(first: int, payload: bytes, *, masked: bool = False) -> bytes:
    assert len(payload) < 126
    mask = b"\x00\x00\x00\x00" if masked else b""
    return bytes((first, (0x80 if masked else 0) | len(payload))) + mask + payload


@pytest.mark.parametrize(
    ("data", "code"),
    [
        (frame(0x81, b"{}", masked=True), 1002),  # a server never masks
        (frame(0xC1, b"{}"), 1002),  # RSV1 without an extension
        (frame(0x83, b""), 1002),  # reserved opcode
        (frame(0x80, b"x"), 1002),  # continuation of nothing
        (frame(0x01, b"a") + frame(0x81, b"b"), 1002),  # a new message inside a fragmented one
        (frame(0x09, b""), 1002),  # a fragmented ping
        (bytes((0x89, 126, 0, 126)) + b"x" * 126, 1002),  # an oversized ping
        (frame(0x81, b"\xff\xfe"), 1007),  # text that is not UTF-8
        (frame(0x01, b"\xc3") + frame(0x80, b"\x28"), 1007),  # split, still not UTF-8
        (frame(0x88, b"\x03"), 1002),  # a one-byte close payload
        (frame(0x88, b"\x03\xe8\xff"), 1007),  # a close reason that is not UTF-8
    ],
)
def test_what_rfc_6455_forbids_is_refused_with_its_close_code(data: bytes, code: int) -> None:
    with pytest.raises(FrameError) as refused:
        events_of(FrameReader(1 << 20), data)
    assert refused.value.code == code


def test_a_message_over_the_limit_is_refused_from_its_header_before_its_payload() -> None:
    reader = FrameReader(100)
    head = bytes((0x81, 126)) + (200).to_bytes(2, "big")
    assert events_of(reader, head + b'{"id":7') == [TooLarge(b'{"id":7')]
    assert events_of(reader, b"x" * 193) == []  # the rest of it: dropped as it comes
    assert reader.buffered == 0
    close = frame(0x88, (1000).to_bytes(2, "big"))
    assert events_of(reader, close) == [Close(1000, "")]  # the peer's answer is read


def test_the_rest_of_a_fragmented_message_over_the_limit_is_dropped_then_frames_read_again() -> (
    None
):
    """After the 1008/1009 the reader used to stop: the peer's close answer went unread and
    every such close waited its full timeout."""
    reader = FrameReader(10, masked=True)
    start = frame(0x01, b"01234567", masked=True) + frame(0x00, b"89ABCDEF", masked=True)
    assert events_of(reader, start) == [TooLarge(b"0123456789")]
    rest = frame(0x00, b"more", masked=True) + frame(0x80, b"last", masked=True)
    assert events_of(reader, rest, one_byte_at_a_time=True) == []
    close = frame(0x88, (1009).to_bytes(2, "big"), masked=True)
    assert events_of(reader, close + frame(0x81, b"{}", masked=True)) == [Close(1009, ""), b"{}"]


def test_a_new_message_inside_an_over_limit_one_is_a_protocol_error() -> None:
    reader = FrameReader(4)
    assert events_of(reader, frame(0x01, b"12345")) == [TooLarge(b"1234")]
    with pytest.raises(FrameError):
        events_of(reader, frame(0x81, b"{}"))


def test_fragments_that_add_up_over_the_limit_are_refused_with_the_messages_start() -> None:
    reader = FrameReader(10)
    assert events_of(reader, frame(0x01, b"12345678") + frame(0x80, b"9012")) == [
        TooLarge(b"1234567890")  # the prefix is the message's, up to the limit
    ]


# -- the server's side: masked frames in, unmasked frames out ----------------------------


def client() -> Connection:
    return Connection(ConnectionType.CLIENT)


@pytest.mark.parametrize("size", SIZES)
@pytest.mark.parametrize("one_byte_at_a_time", [False, True])
def test_a_server_side_reader_unmasks_a_clients_frames_whole_or_byte_by_byte(
    size: int, one_byte_at_a_time: bool
) -> None:
    text = "é" * (size // 2) + "x" * (size % 2)
    ws = client()
    data = ws.send(TextMessage(data=text)) + ws.send(Ping(payload=b"p"))
    data += ws.send(TextMessage(data="h", message_finished=False))
    data += ws.send(TextMessage(data="i", message_finished=True))
    data += ws.send(CloseConnection(code=1000, reason="done"))
    reader = FrameReader(1 << 20, masked=True)
    found = events_of(reader, data, one_byte_at_a_time=one_byte_at_a_time)
    assert found == [text.encode(), frames.Ping(b"p"), b"hi", Close(1000, "done")]


def test_a_server_side_reader_refuses_an_unmasked_frame_with_1002() -> None:
    with pytest.raises(FrameError) as refused:
        events_of(FrameReader(100, masked=True), frame(0x81, b"{}"))
    assert (refused.value.code, refused.value.reason) == (1002, "unmasked frame from the client")


def test_an_over_limit_masked_message_keeps_its_start_unmasked() -> None:
    ws = client()
    data = ws.send(TextMessage(data='{"id":7,"params":"' + "x" * 300 + '"}'))
    found = events_of(FrameReader(100, masked=True), data)
    assert found == [TooLarge(b'{"id":7,"params":"' + b"x" * 82)]


@pytest.mark.parametrize("size", SIZES)
def test_what_a_server_writes_a_client_reads_unmasked(size: int) -> None:
    texts = ["é" * (size // 2) + "x" * (size % 2), '{"n":1}']
    ws = client()
    ws.receive_data(frames.text_frames([text.encode() for text in texts], mask=False))
    ws.receive_data(frames.control_frame(frames.OP_PING, b"abc", mask=False))
    ws.receive_data(
        frames.control_frame(frames.OP_CLOSE, frames.close_payload(1001, "bye"), mask=False)
    )
    received = list(ws.events())
    assert [event.data for event in received if isinstance(event, TextMessage)] == texts
    assert isinstance(received[2], Ping) and received[2].payload == b"abc"
    assert isinstance(received[3], CloseConnection)
    assert (received[3].code, received[3].reason) == (1001, "bye")


# -- masking keys: fresh per frame, drawn from os.urandom many at a time ------------------


def _key_of(frame_bytes: bytes) -> bytes:
    """The masking key of a client's frame whose payload is under 126 bytes."""
    assert frame_bytes[1] & 0x80, "a client's frame is masked"
    return frame_bytes[2:6]


def _numbered_urandom(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """``os.urandom`` giving distinct 4-byte numbers, so a key handed out twice shows;
    returns the sizes drawn."""
    draws: list[int] = []
    counter = iter(range(1 << 30))

    def numbered(size: int) -> bytes:
        draws.append(size)
        return b"".join(next(counter).to_bytes(4, "big") for _ in range(size // 4))

    monkeypatch.setattr(frames.os, "urandom", numbered)
    frames.mask_keys.reset()
    return draws


def test_a_clients_frames_take_fresh_keys_from_one_draw_per_thousand_frames(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """One system call per frame was a visible part of a small message's cost."""
    draws = _numbered_urandom(monkeypatch)
    per_draw = frames.MASK_KEYS_PER_DRAW
    keys = [_key_of(frames.text_frame(b"{}")) for _ in range(per_draw + 1)]
    keys.append(_key_of(frames.control_frame(frames.OP_PING, b"p")))
    burst = frames.text_frames([b"{}"] * 3)
    keys += [burst[2:6], burst[10:14], burst[18:22]]
    assert draws == [4 * per_draw, 4 * per_draw]
    assert len(set(keys)) == len(keys) == per_draw + 5


def test_keys_stay_distinct_across_threads(monkeypatch: pytest.MonkeyPatch) -> None:
    """Threads switching every microsecond never get the same key (a pool read through an
    index kept beside it hands some out twice here)."""
    import sys
    import threading

    _numbered_urandom(monkeypatch)
    found: list[bytes] = []
    start = threading.Barrier(4)

    def draw() -> None:
        start.wait()
        found.extend([frames.mask_keys.next() for _ in range(3000)])  # extend is atomic

    interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)
    try:
        threads = [threading.Thread(target=draw) for _ in range(4)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    finally:
        sys.setswitchinterval(interval)
    assert len(set(found)) == len(found) == 12000


@pytest.mark.skipif(not hasattr(frames.os, "fork"), reason="needs fork")
def test_a_forked_child_does_not_reuse_its_parents_keys() -> None:
    """Without the reset at fork, parent and child would mask with the same keys."""
    import os

    frames.mask_keys.next()  # the parent has keys drawn
    read, write = os.pipe()
    child = os.fork()
    if child == 0:  # pragma: no cover - runs in the child
        os.write(write, b"".join(frames.mask_keys.next() for _ in range(8)))
        os._exit(0)
    os.close(write)
    os.waitpid(child, 0)
    in_child = os.read(read, 64)
    os.close(read)
    in_parent = b"".join(frames.mask_keys.next() for _ in range(8))
    assert len(in_child) == 32
    assert in_child != in_parent
