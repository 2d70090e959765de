"""Opt-in wire trace: record every message a transport receives or sends.

Wrap a transport to debug a session; an unwrapped transport pays nothing::

    transport = TracingTransport(transport, jsonl_sink(open("wire.jsonl", "a")))

A sink is any callable taking a :class:`TraceEvent`. It runs inline on the
connection's tasks, so it should be quick (the sinks here write one line each).
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import IO, Any, Literal

from ._transport import MessageTooLarge, Transport

Direction = Literal["in", "out"]


@dataclass(frozen=True)
class TraceEvent:
    """One message seen on the wire.

    ``error`` is None for a message that went through; otherwise it names what
    happened: ``"message_too_large"`` (``message`` is then the skipped line's prefix)
    or, for a failed send, the exception's class name.
    """

    timestamp: float
    """Wall-clock time (:func:`time.time`) when the message was received or sent."""
    direction: Direction
    message: bytes
    error: str | None = None


TraceSink = Callable[[TraceEvent], object]


class TracingTransport:
    """A :class:`~acp_runtime._transport.Transport` that reports each message to a sink."""

    def __init__(
        self, inner: Transport, sink: TraceSink, *, clock: Callable[[], float] = time.time
    ) -> None:
        self.inner = inner
        self._sink = sink
        self._clock = clock

    async def receive(self) -> bytes:
        try:
            message = await self.inner.receive()
        except MessageTooLarge as exc:
            self._sink(TraceEvent(self._clock(), "in", exc.prefix, "message_too_large"))
            raise
        self._sink(TraceEvent(self._clock(), "in", message))
        return message

    async def send(self, message: bytes) -> None:
        """Send, then record; a failed send is recorded with its error and re-raised."""
        try:
            await self.inner.send(message)
        except Exception as exc:
            self._sink(TraceEvent(self._clock(), "out", message, type(exc).__name__))
            raise
        self._sink(TraceEvent(self._clock(), "out", message))

    async def aclose(self) -> None:
        await self.inner.aclose()


def trace_record(event: TraceEvent) -> dict[str, Any]:
    """A JSON-ready dict: the message is embedded as JSON when it parses, else as text."""
    record: dict[str, Any] = {"time": event.timestamp, "dir": event.direction}
    try:
        record["msg"] = json.loads(event.message)
    except (ValueError, RecursionError):  # invalid JSON or UTF-8, or nested too deeply
        record["raw"] = event.message.decode("utf-8", "backslashreplace")
    if event.error is not None:
        record["error"] = event.error
    return record


def jsonl_sink(file: IO[str]) -> TraceSink:
    """Write each event as one JSON line to a text file, flushed at once.

    The caller owns the file (opens and closes it).
    """

    def write(event: TraceEvent) -> None:
        record = trace_record(event)
        try:
            line = json.dumps(record, ensure_ascii=False) + "\n"
            file.write(line)
        except UnicodeEncodeError:  # lone surrogates (a peer can send "\\ud800"): escape
            file.write(json.dumps(record) + "\n")
        file.flush()

    return write


def logging_sink(logger: logging.Logger, level: int = logging.DEBUG) -> TraceSink:
    """Log each event as ``<dir> <json>``; the record is only built if the level is enabled."""

    def log(event: TraceEvent) -> None:
        if logger.isEnabledFor(level):
            arrow = "<-" if event.direction == "in" else "->"
            logger.log(level, "%s %s", arrow, json.dumps(trace_record(event), ensure_ascii=False))

    return log
