"""An incremental Server-Sent Events parser over bytes, for the Streamable HTTP client.

It never decodes: line ends (LF, CRLF, bare CR) are single bytes that cannot occur
inside a multi-byte UTF-8 sequence, so a character split across network chunks passes
through untouched and each event's data reaches ``json.loads`` as bytes. Only what ACP
uses is kept (the ``data`` field; every other field and each comment is ignored), as the
TypeScript SDK's parser does, including a UTF-8 BOM stripped at the start of any line and
an unterminated last event dispatched at end of input.

Each event's data is bounded: past ``max_event_bytes`` the rest of the event is read and
dropped (never buffered) and :class:`OversizedEvent` stands in for it, so one huge event
costs at most the limit in memory and the stream stays usable.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

DEFAULT_MAX_EVENT_BYTES = 32 * 1024 * 1024
"""The TypeScript SDK's ``DEFAULT_MAX_MESSAGE_BYTES`` for its HTTP client."""

PREFIX_BYTES = 1024
"""How much of an oversized event's data is kept, to tell what it answered."""

_BOM = b"\xef\xbb\xbf"
_DATA = b"data:"
_DATA_SPACE = b"data: "
_LINE_OVERHEAD = len(_BOM) + len(_DATA) + 1  # a data line's bytes beyond its value
_LINE_END = re.compile(rb"\r\n?|\n")
# Byte values, not one-byte strings: on Python 3.11 ``b"\n" in value`` first tries the
# needle as an integer and builds and drops a TypeError (about ten times the cost).
_LF = 0x0A
_CR = 0x0D


@dataclass(frozen=True)
class OversizedEvent:
    """An event whose data exceeded the limit and was dropped."""

    limit: int
    prefix: bytes
    """The first :data:`PREFIX_BYTES` of its data."""


SseItem = bytes | OversizedEvent
"""What the parser yields: an event's data (data lines joined by LF), or a skipped one."""


class SseParser:
    """Feed network chunks in order; get each complete event's data as it ends."""

    def __init__(self, max_event_bytes: int = DEFAULT_MAX_EVENT_BYTES) -> None:
        self.max_event_bytes = max_event_bytes
        self._line = bytearray()  # the line being read, without its end
        self._line_dropped = False  # the current line outgrew every limit: skip to its end
        self._dropping_data = False  # ...and it is a data line (its first bytes still count)
        self._after_cr = False  # the last chunk ended in CR; an LF first in the next is its pair
        self._data: bytearray | None = None  # None: no data line in this event yet
        self._oversized: bytes | None = None  # the kept prefix once the event is over the limit

    def feed(self, chunk: bytes) -> list[SseItem]:
        """The events that ``chunk`` completes, in order."""
        out: list[SseItem] = []
        start = 0
        if self._after_cr and chunk:
            self._after_cr = False
            if chunk[0] == 0x0A:
                start = 1
        if not self._line and not self._line_dropped and self._data is None:
            start = self._whole_events(chunk, start, out)
        for end in _LINE_END.finditer(chunk, start):
            self._append(chunk, start, end.start())
            self._end_line(out)
            start = end.end()
            if end.group() == b"\r" and start == len(chunk):
                self._after_cr = True
        self._append(chunk, start, len(chunk))
        return out

    def _whole_events(self, chunk: bytes, start: int, out: list[SseItem]) -> int:
        """Take the events written as every ACP server writes them, ``data: <json>`` and a
        blank line, straight out of ``chunk`` from ``start`` (one slice each, no line
        buffer); return where the general parse resumes (an event of another shape, or
        one cut off at the chunk's end)."""
        limit = self.max_event_bytes
        while chunk.startswith(_DATA_SPACE, start):
            end = chunk.find(b"\n\n", start)
            if end < 0:
                break
            value = chunk[start + len(_DATA_SPACE) : end]
            if len(value) > limit or _LF in value or _CR in value:
                break
            out.append(value)
            start = end + 2
        return start

    def finish(self) -> list[SseItem]:
        """End of input: an unterminated last line and event still count (as in TS)."""
        out: list[SseItem] = []
        self._after_cr = False
        if self._line or self._line_dropped:
            self._end_line(out)
        self._dispatch(out)
        return out

    def _append(self, chunk: bytes, start: int, stop: int) -> None:
        if start == stop:
            return
        if self._line_dropped:
            kept = self._oversized
            if self._dropping_data and kept is not None and len(kept) < PREFIX_BYTES:
                self._oversized = kept + chunk[start : min(stop, start + PREFIX_BYTES - len(kept))]
            return
        room = self.max_event_bytes + _LINE_OVERHEAD - len(self._line)
        if stop - start <= room:
            self._line += chunk[start:stop]
            return
        # Longer than any data line that fits: if it is a data line the event is over
        # the limit; any other field is ignored anyway. Nothing more of it is kept.
        keep = PREFIX_BYTES + _LINE_OVERHEAD
        head = bytes(self._line[:keep]) + chunk[start : min(stop, start + keep)]
        value = self._data_value(head)
        if value is not None:
            self._mark_oversized(value)
        self._dropping_data = value is not None
        self._line.clear()
        self._line_dropped = True

    def _end_line(self, out: list[SseItem]) -> None:
        line = bytes(self._line)
        self._line.clear()
        if self._line_dropped:
            self._line_dropped = False
            return
        if line.startswith(_BOM):
            line = line[len(_BOM) :]
        if not line:
            self._dispatch(out)
            return
        value = self._data_value(line)
        if value is None:
            return
        if self._oversized is not None:
            self._mark_oversized(value)
        elif self._data is None:
            if len(value) > self.max_event_bytes:
                self._mark_oversized(value)
            else:
                self._data = bytearray(value)
        elif len(self._data) + 1 + len(value) > self.max_event_bytes:
            self._mark_oversized(value)
        else:
            self._data += b"\n"
            self._data += value

    @staticmethod
    def _data_value(line: bytes) -> bytes | None:
        """The value of a ``data`` line (one space after the colon dropped), else None."""
        if line.startswith(_BOM):
            line = line[len(_BOM) :]
        if not line.startswith(_DATA):
            return None
        value = line[len(_DATA) :]
        return value[1:] if value.startswith(b" ") else value

    def _mark_oversized(self, value: bytes) -> None:
        """Drop the event's data from here on (``value``: a data line past the limit),
        keeping its first :data:`PREFIX_BYTES`."""
        if self._oversized is None:
            before = b"" if self._data is None else bytes(self._data[:PREFIX_BYTES]) + b"\n"
            self._oversized = (before + value[:PREFIX_BYTES])[:PREFIX_BYTES]
        elif len(self._oversized) < PREFIX_BYTES:
            self._oversized = (self._oversized + b"\n" + value[:PREFIX_BYTES])[:PREFIX_BYTES]
        self._data = None

    def _dispatch(self, out: list[SseItem]) -> None:
        if self._oversized is not None:
            out.append(OversizedEvent(self.max_event_bytes, self._oversized))
        elif self._data is not None:
            out.append(bytes(self._data))
        self._data = None
        self._oversized = None
