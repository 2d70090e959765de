"""RFC 6455 in a few lines, for the floor's WebSocket mode (``floor_agent.py`` and
``bench/drivers/floor.py``): the handshake, and text frames whose payload is under 64 KiB
or longer, masked from client to server as the RFC requires. No fragments, no control
frames beyond ignoring them: the least a WebSocket peer does per message."""

from __future__ import annotations

import base64
import hashlib
import os

_GUID = b"258EAFA5-E914-47DA-95CA-C5AB0DC85B11"


def accept_key(key: bytes) -> bytes:
    return base64.b64encode(hashlib.sha1(key + _GUID).digest())


def handshake_answer(head: bytes) -> bytes:
    """The 101 for an upgrade request's head (its lines up to the blank one)."""
    key = next(
        line.split(b":", 1)[1].strip()
        for line in head.split(b"\r\n")
        if line.lower().startswith(b"sec-websocket-key:")
    )
    return (
        b"HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
        b"Sec-WebSocket-Accept: " + accept_key(key) + b"\r\n\r\n"
    )


def handshake_request(port: int, key: bytes) -> bytes:
    return (
        b"GET /acp HTTP/1.1\r\nHost: 127.0.0.1:%d\r\nUpgrade: websocket\r\n"
        b"Connection: Upgrade\r\nSec-WebSocket-Key: %s\r\nSec-WebSocket-Version: 13\r\n\r\n"
        % (port, key)
    )


def _header(first: int, mask_bit: int, size: int) -> bytes:
    if size < 126:
        return bytes((first, mask_bit | size))
    if size < 0x10000:
        return bytes((first, mask_bit | 126)) + size.to_bytes(2, "big")
    return bytes((first, mask_bit | 127)) + size.to_bytes(8, "big")


def xor_mask(payload: bytes, key: bytes) -> bytes:
    """``payload`` masked (or unmasked) with the 4-byte ``key``, in one big-integer XOR."""
    size = len(payload)
    mask = (key * ((size >> 2) + 1))[:size]
    return (int.from_bytes(payload, "little") ^ int.from_bytes(mask, "little")).to_bytes(
        size, "little"
    )


def server_frame(payload: bytes) -> bytes:
    return _header(0x81, 0, len(payload)) + payload


def client_frame(payload: bytes) -> bytes:
    key = os.urandom(4)
    return _header(0x81, 0x80, len(payload)) + key + xor_mask(payload, key)


def whole_frames(buffer: bytes) -> tuple[list[tuple[int, bytes, bytes]], bytes]:
    """Whole frames at the front of ``buffer`` as (opcode, masking key, payload), and the rest."""
    frames: list[tuple[int, bytes, bytes]] = []
    at = 0
    while len(buffer) - at >= 2:
        opcode, second = buffer[at] & 0x0F, buffer[at + 1]
        size, start = second & 0x7F, at + 2
        if size == 126:
            size, start = int.from_bytes(buffer[start : start + 2], "big"), start + 2
        elif size == 127:
            size, start = int.from_bytes(buffer[start : start + 8], "big"), start + 8
        key = b""
        if second & 0x80:
            key, start = buffer[start : start + 4], start + 4
        if len(buffer) < start + size:
            break
        frames.append((opcode, key, buffer[start : start + size]))
        at = start + size
    return frames, buffer[at:]


def unmasked_frames(buffer: bytes) -> tuple[list[bytes], bytes]:
    """The text messages whole in ``buffer`` (unmasked), and what is left of it."""
    frames, rest = whole_frames(buffer)
    return [xor_mask(p, k) if k else p for op, k, p in frames if op == 1], rest
