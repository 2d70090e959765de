"""RFC 6455 framing without I/O, either side: the client masks what it sends and reads
unmasked frames, the server the other way round.

Written for the one shape ACP traffic has (one JSON text per unfragmented text frame, no
extensions) at a few bytecodes per frame: wsproto's general frame machine costs about 20 µs
per message each way, more than the whole runtime spends on a notification. Everything
else RFC 6455 allows from a peer is handled too (fragments, control frames between them,
close, ping); what it forbids (a mask bit the wrong way, reserved bits, bad opcodes, invalid
UTF-8, oversize control frames) raises :class:`FrameError` with the close code to send.
The Autobahn|Testsuite's text cases check it in CI (``tests/remote/test_autobahn.py``);
``websockets``' sans-I/O ``Protocol`` would cost more per message (``bench/ws_codec_bench.py``).
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Final

OP_CONTINUATION: Final = 0x0
OP_TEXT: Final = 0x1
OP_BINARY: Final = 0x2
OP_CLOSE: Final = 0x8
OP_PING: Final = 0x9
OP_PONG: Final = 0xA

CLOSE_NORMAL: Final = 1000
CLOSE_GOING_AWAY: Final = 1001
CLOSE_PROTOCOL_ERROR: Final = 1002
CLOSE_NO_STATUS: Final = 1005
CLOSE_INVALID_DATA: Final = 1007
CLOSE_POLICY_VIOLATION: Final = 1008
CLOSE_MESSAGE_TOO_BIG: Final = 1009
CLOSE_INTERNAL_ERROR: Final = 1011

TOO_LARGE_PREFIX_BYTES: Final = 1024
"""How much of an over-limit message :class:`TooLarge` keeps (for the error's id lookup)."""


class FrameError(Exception):
    """The peer broke RFC 6455; this side closes with ``code``."""

    def __init__(self, code: int, reason: str) -> None:
        super().__init__(reason)
        self.code = code
        self.reason = reason


@dataclass(frozen=True, slots=True)
class Close:
    """The peer's close frame (code 1005 when it carried none)."""

    code: int
    reason: str


@dataclass(frozen=True, slots=True)
class Ping:
    payload: bytes


@dataclass(frozen=True, slots=True)
class Binary:
    """A binary message, skipped by ACP peers; only its size is kept (for the log)."""

    size: int


@dataclass(frozen=True, slots=True)
class TooLarge:
    """A message over the limit: its first bytes; nothing after it is parsed."""

    prefix: bytes


Event = bytes | Close | Ping | Binary | TooLarge | None
"""What :meth:`FrameReader.next` returns: a text message's UTF-8 bytes, a control event,
or None when the buffer holds no complete frame (a pong is consumed silently)."""


class FrameReader:
    """Parses the peer's frames from the bytes fed to it, one event per :meth:`next`:
    a server's (unmasked) by default, a client's (each masked) when ``masked``."""

    __slots__ = (
        "_buffer",
        "_discarding",
        "_fragment_opcode",
        "_fragments",
        "_fragments_size",
        "_mask_bit",
        "_max",
        "_skip",
        "_stopped",
    )

    def __init__(self, max_message_bytes: int, *, masked: bool = False) -> None:
        self._max = max_message_bytes
        self._mask_bit = 0x80 if masked else 0
        self._buffer = bytearray()
        self._fragments: list[bytes] = []
        self._fragments_size = 0
        self._fragment_opcode = 0
        self._stopped = False
        self._skip = 0  # bytes still to come of an over-limit frame: dropped as they come
        self._discarding = False  # the rest of an over-limit message is dropped too

    def feed(self, data: bytes | memoryview) -> None:
        """Take ``data`` (copied: a caller may reuse its buffer)."""
        if self._stopped:
            return
        if self._skip:
            if len(data) <= self._skip:
                self._skip -= len(data)
                return
            data = data[self._skip :]
            self._skip = 0
        self._buffer += data

    @property
    def buffered(self) -> int:
        return len(self._buffer)

    def next(self) -> Event:
        """The next event from the buffered bytes; raises :class:`FrameError`, after which
        the reader takes nothing more (the socket is failed: what the peer sends next is
        dropped, not buffered)."""
        buffer = self._buffer
        try:
            while True:
                size = len(buffer)
                if size < 2:
                    return None
                first, second = buffer[0], buffer[1]
                length = second & 0x7F
                start = 2
                if length == 126:
                    if size < 4:
                        return None
                    length = int.from_bytes(buffer[2:4], "big")
                    start = 4
                elif length == 127:
                    if size < 10:
                        return None
                    length = int.from_bytes(buffer[2:10], "big")
                    start = 10
                if second & 0x80 != self._mask_bit:
                    raise FrameError(CLOSE_PROTOCOL_ERROR, _MASK_ERRORS[self._mask_bit])
                if first & 0x70:
                    raise FrameError(CLOSE_PROTOCOL_ERROR, "reserved bits set (no extension)")
                opcode = first & 0x0F
                if opcode >= OP_CLOSE:
                    if length > 125 or not first & 0x80:
                        raise FrameError(
                            CLOSE_PROTOCOL_ERROR, "fragmented or oversized control frame"
                        )
                elif self._discarding:
                    if opcode != OP_CONTINUATION:
                        raise FrameError(
                            CLOSE_PROTOCOL_ERROR, "new message inside a fragmented one"
                        )
                    self._drop_frame(start, length, bool(first & 0x80))
                    continue
                elif length + self._fragments_size > self._max:
                    return self._too_large(opcode, start, length, bool(first & 0x80))
                key = b""
                if self._mask_bit:
                    key = bytes(buffer[start : start + 4])
                    start += 4
                end = start + length
                if size < end:
                    return None
                payload = bytes(buffer[start:end])
                del buffer[:end]  # O(1): a bytearray drops a prefix by moving its start
                if key:
                    payload = _masked(payload, key)
                if first & 0x80 and opcode == OP_TEXT and not self._fragment_opcode:
                    return _checked_text(payload)
                event = self._other(opcode, bool(first & 0x80), payload)
                if event is not None:
                    return event
        except FrameError:
            self._stop()
            raise

    def _other(self, opcode: int, fin: bool, payload: bytes) -> Event:
        """Everything but an unfragmented text frame; None for a frame that ends in no
        event (a fragment, a pong)."""
        if opcode >= OP_CLOSE:
            if opcode == OP_CLOSE:
                return _close(payload)
            if opcode == OP_PING:
                return Ping(payload)
            if opcode == OP_PONG:
                return None
            raise FrameError(CLOSE_PROTOCOL_ERROR, f"unknown opcode {opcode}")
        if opcode == OP_CONTINUATION:
            if not self._fragment_opcode:
                raise FrameError(CLOSE_PROTOCOL_ERROR, "continuation of nothing")
        elif opcode in (OP_TEXT, OP_BINARY):
            if self._fragment_opcode:
                raise FrameError(CLOSE_PROTOCOL_ERROR, "new message inside a fragmented one")
            self._fragment_opcode = opcode
        else:
            raise FrameError(CLOSE_PROTOCOL_ERROR, f"unknown opcode {opcode}")
        if payload:
            self._fragments.append(payload)
        # an empty fragment counts as a byte: a message that never ends in empty
        # continuation frames still reaches the limit
        self._fragments_size += len(payload) or 1
        if not fin:
            return None
        whole = b"".join(self._fragments)
        kind = self._fragment_opcode
        self._fragments.clear()
        self._fragments_size = 0
        self._fragment_opcode = 0
        return _checked_text(whole) if kind == OP_TEXT else Binary(len(whole))

    def _too_large(self, opcode: int, start: int, length: int, fin: bool) -> TooLarge:
        """The over-limit message's first bytes; the rest of it is dropped unparsed, not
        buffered, and the frames after it are read again (the peer's close answer)."""
        head = b"".join(self._fragments)[:TOO_LARGE_PREFIX_BYTES]
        payload = start + (4 if self._mask_bit else 0)
        tail = bytes(self._buffer[payload : payload + TOO_LARGE_PREFIX_BYTES])
        if self._mask_bit:  # the key, then the payload's start (to unmask)
            key = bytes(self._buffer[start:payload])
            tail = _masked(tail, key) if len(key) == 4 else b""
        prefix = (head + tail)[: min(TOO_LARGE_PREFIX_BYTES, self._max)]
        self._fragments.clear()
        self._fragments_size = 0
        if opcode != OP_CONTINUATION:
            self._fragment_opcode = opcode
        self._discarding = True
        self._drop_frame(start, length, fin)
        return TooLarge(prefix)

    def _drop_frame(self, start: int, length: int, fin: bool) -> None:
        """Drop a frame of an over-limit message, what is buffered now and the rest as it
        comes; its last frame ends the message."""
        end = start + (4 if self._mask_bit else 0) + length
        held = len(self._buffer)
        del self._buffer[: min(end, held)]
        self._skip = max(0, end - held)
        if fin:
            self._discarding = False
            self._fragment_opcode = 0

    def _stop(self) -> None:
        """Take nothing more: the bytes held and those fed later are dropped."""
        self._stopped = True
        self._buffer.clear()
        self._fragments.clear()


def _checked_text(payload: bytes) -> bytes:
    if not payload.isascii():
        try:
            payload.decode()
        except UnicodeDecodeError:
            raise FrameError(CLOSE_INVALID_DATA, "text frame is not UTF-8") from None
    return payload


def _close(payload: bytes) -> Close:
    if not payload:
        return Close(CLOSE_NO_STATUS, "")
    if len(payload) == 1:
        raise FrameError(CLOSE_PROTOCOL_ERROR, "close frame with a one-byte payload")
    code = int.from_bytes(payload[:2], "big")
    if not _sendable_close_code(code):
        raise FrameError(CLOSE_PROTOCOL_ERROR, f"close code {code} is not one a peer may send")
    try:
        reason = payload[2:].decode()
    except UnicodeDecodeError:
        raise FrameError(CLOSE_INVALID_DATA, "close reason is not UTF-8") from None
    return Close(code, reason)


def _sendable_close_code(code: int) -> bool:
    """RFC 6455 7.4: the defined codes a peer may send (1004-1006 and 1015 never go on the
    wire; 1012-1014 are registered since), and 3000-4999 for libraries and applications."""
    return 1000 <= code <= 1003 or 1007 <= code <= 1014 or 3000 <= code <= 4999


_MASK_ERRORS: Final = {0: "masked frame from the server", 0x80: "unmasked frame from the client"}


MASK_KEYS_PER_DRAW: Final = 1024
"""How many frames' masking keys one ``os.urandom`` call draws (4 KiB)."""


class MaskKeys:
    """Masking keys for a client's frames, drawn from ``os.urandom`` many at a time.

    RFC 6455 wants every frame's key fresh and unpredictable: the keys come from the
    operating system's strong source, but one system call per frame was a visible part
    of a small message's cost (the npm ``ws`` package, the TypeScript peers' WebSocket on
    Node, pools its keys too). ``next()`` on a list's iterator is atomic, so threads
    never share a key, and a forked child drops its parent's keys.
    """

    def __init__(self) -> None:
        self._keys: Iterator[bytes] = iter(())

    def reset(self) -> None:
        """Drop the keys drawn so far: the next one comes from a new draw."""
        self._keys = iter(())

    def next(self) -> bytes:
        """A fresh 4-byte key."""
        for key in self._keys:
            return key
        pool = os.urandom(4 * MASK_KEYS_PER_DRAW)
        keys = self._keys = iter([pool[i : i + 4] for i in range(0, len(pool), 4)])
        return next(keys)


mask_keys = MaskKeys()
"""Where a client's frames take their keys."""
if hasattr(os, "register_at_fork"):  # POSIX; elsewhere no process is forked
    os.register_at_fork(after_in_child=mask_keys.reset)


def text_frame(message: bytes, *, mask: bool = True) -> bytes:
    """One message as one text frame (see :func:`text_frames`)."""
    if mask:
        key = mask_keys.next()
        return _header(0x81, len(message)) + key + _masked(message, key)
    return _header(0x81, len(message), 0) + message


def text_frames(messages: Sequence[bytes], *, mask: bool = True) -> bytes:
    """Each message as one text frame, all in one buffer (one write for a burst): masked
    (a client's, each frame with its fresh key from :data:`mask_keys`) or not (a
    server's)."""
    if not mask:
        return b"".join(
            [part for message in messages for part in (_header(0x81, len(message), 0), message)]
        )
    parts: list[bytes] = []
    for message in messages:
        key = mask_keys.next()
        parts += (_header(0x80 | OP_TEXT, len(message)), key, _masked(message, key))
    return b"".join(parts)


def control_frame(opcode: int, payload: bytes = b"", *, mask: bool = True) -> bytes:
    """A close, ping or pong frame (payload at most 125 bytes), masked unless told."""
    if not mask:
        return _header(0x80 | opcode, len(payload[:125]), 0) + payload[:125]
    key = mask_keys.next()
    return _header(0x80 | opcode, len(payload)) + key + _masked(payload[:125], key)


def close_payload(code: int, reason: str | None) -> bytes:
    """A close frame's payload: the code, then the reason cut to fit 125 bytes (at a
    character's boundary: a reason that is not UTF-8 fails the peer's socket)."""
    cut = (reason or "").encode()[:123].decode(errors="ignore").encode()
    return code.to_bytes(2, "big") + cut


def _header(first: int, length: int, mask_bit: int = 0x80) -> bytes:
    if length < 126:
        return bytes((first, mask_bit | length))
    if length < 0x10000:
        return bytes((first, mask_bit | 126)) + length.to_bytes(2, "big")
    return bytes((first, mask_bit | 127)) + length.to_bytes(8, "big")


def _masked(payload: bytes, key: bytes) -> bytes:
    """``payload`` XOR the key repeated: one big-integer XOR, in C, whatever the size."""
    size = len(payload)
    if not size:
        return b""
    mask = (key * ((size >> 2) + 1))[:size]
    return (int.from_bytes(payload, "little") ^ int.from_bytes(mask, "little")).to_bytes(
        size, "little"
    )
