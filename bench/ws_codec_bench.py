"""The WebSocket frame codec per message: the hand-written one against ``websockets``'
sans-I/O ``Protocol``.

One ACP-sized text message (a 214-byte ``session/update`` notification) is encoded by
one side and decoded by the other, each way: client to server (masked, the key drawn
fresh) and server to client (unmasked). Both codecs keep their state across messages,
as on a connection. The implementations take turns batch by batch, so a load change on
the machine hits both alike; the figure is µs per message (encode + decode), the
fastest and the median batch.

    .venv/bin/python -m bench.ws_codec_bench            # about 20 s
    .venv/bin/python -m bench.ws_codec_bench --quick    # about 3 s
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import time
from collections.abc import Callable

from acp_runtime.remote._websocket_frames import FrameReader, text_frame

MESSAGE = json.dumps(
    {
        "jsonrpc": "2.0",
        "method": "session/update",
        "params": {
            "sessionId": "sess_0123456789abcdef",
            "update": {
                "sessionUpdate": "agent_message_chunk",
                "content": {"type": "text", "text": "Reading the file and planning the edit."},
            },
        },
    },
    separators=(",", ":"),
).encode()
"""The message timed (a streamed chunk of an agent's answer): 214 bytes."""

Codec = Callable[[bytes], bytes]
"""Encode on one side, decode on the other: the message as the receiver got it."""


def hand_written(masked: bool) -> Codec:
    """:func:`text_frame` on the sender, a :class:`FrameReader` on the receiver."""
    reader = FrameReader(64 * 1024 * 1024, masked=masked)

    def round_trip(message: bytes) -> bytes:
        reader.feed(text_frame(message, mask=masked))
        event = reader.next()
        assert type(event) is bytes
        return event

    return round_trip


def websockets_protocol(masked: bool) -> Codec:
    """``Protocol.send_text`` and ``data_to_send`` on the sender, ``receive_data`` and
    ``events_received`` on the receiver (both open, the handshake done elsewhere)."""
    from websockets.protocol import Protocol, Side

    sender = Protocol(Side.CLIENT if masked else Side.SERVER, max_size=None)
    receiver = Protocol(Side.SERVER if masked else Side.CLIENT, max_size=None)

    def round_trip(message: bytes) -> bytes:
        sender.send_text(message)
        for data in sender.data_to_send():
            receiver.receive_data(data)
        (frame,) = receiver.events_received()
        return frame.data

    return round_trip


def batch(codec: Codec, count: int) -> float:
    """µs per message over ``count`` messages."""
    message = MESSAGE
    start = time.perf_counter()
    for _ in range(count):
        codec(message)
    return (time.perf_counter() - start) / count * 1e6


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer, shorter batches")
    args = parser.parse_args()
    batches, count = (5, 5_000) if args.quick else (21, 20_000)
    codecs = {
        (name, direction): make(masked)
        for name, make in (("hand_written", hand_written), ("websockets", websockets_protocol))
        for direction, masked in (("client_to_server", True), ("server_to_client", False))
    }
    for codec in codecs.values():  # both give the message back unchanged before timing
        assert codec(MESSAGE) == MESSAGE
        batch(codec, count // 10)  # warm up
    times: dict[tuple[str, str], list[float]] = {key: [] for key in codecs}
    load_start = os.getloadavg()[0]
    for _ in range(batches):
        for key, codec in codecs.items():
            times[key].append(batch(codec, count))
    for (name, direction), runs in times.items():
        record = {
            "kind": "ws_codec",
            "codec": name,
            "direction": direction,
            "message_bytes": len(MESSAGE),
            "us_per_message_min": round(min(runs), 3),
            "us_per_message_median": round(statistics.median(runs), 3),
        }
        print(json.dumps(record))
    import websockets

    ratios = {
        direction: round(
            statistics.median(times["websockets", direction])
            / statistics.median(times["hand_written", direction]),
            2,
        )
        for direction in ("client_to_server", "server_to_client")
    }
    summary = {
        "kind": "summary",
        "python": platform.python_version(),
        "websockets": websockets.__version__,
        "batches": batches,
        "messages_per_batch": count,
        "load_start": round(load_start, 2),
        "load_end": round(os.getloadavg()[0], 2),
        "ratios_websockets_over_hand_written": ratios,
    }
    print(json.dumps(summary))


if __name__ == "__main__":
    main()
