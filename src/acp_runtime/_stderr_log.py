"""Logging to stderr for agents on stdio: bounded, and never blocking the protocol.

An agent's stderr is a pipe its editor may read slowly, only when asked, or never. With
:class:`logging.StreamHandler` a full pipe blocks the agent inside ``write(2)``, in the
middle of whatever logged, so the agent stops answering. :class:`StderrLogHandler`
formats each record where it is logged and hands the text to a writer thread through a
bounded queue: when stderr is not read, the queue fills, further records are dropped and
counted, and once stderr drains again a line says how many were lost. Logging itself
never waits for the pipe.

:func:`log_to_stderr` sets it up for a whole agent in one call (what
``logging.basicConfig`` would do, minus the blocking); :func:`log_nothing` is the quiet
mode: no log output at all, not even Python's last-resort handler for warnings.
"""

from __future__ import annotations

import logging
import os
import threading
from collections import deque

MAX_QUEUED_BYTES = 1024 * 1024
"""Formatted log text held for a stderr that is not read before records are dropped."""

WRITE_BYTES = 64 * 1024
"""Most text handed to one ``write`` (a pipe's capacity)."""

FLUSH_TIMEOUT = 0.5
"""Seconds :meth:`StderrLogHandler.flush` waits for stderr to take what is queued."""

DEFAULT_FORMAT = "%(levelname)s %(name)s: %(message)s"


class StderrLogHandler(logging.Handler):
    """A :class:`logging.Handler` that writes to a file descriptor (stderr) from a thread.

    ``emit`` never blocks on the descriptor: it queues the formatted record, or drops it
    when ``max_queued_bytes`` are already waiting. A write error (stderr closed) stops
    the output for good; records are then dropped silently.
    """

    def __init__(
        self,
        level: int = logging.NOTSET,
        *,
        fd: int = 2,
        max_queued_bytes: int = MAX_QUEUED_BYTES,
    ) -> None:
        super().__init__(level)
        self.fd = fd
        self.max_queued_bytes = max_queued_bytes
        self.dropped = 0
        """Records dropped because stderr was not read (reported, then reset)."""
        self._queue: deque[bytes] = deque()
        self._queued = 0
        self._writing = False
        self._broken = False
        self._closing = False
        self._wakeup = threading.Condition(threading.Lock())
        self._thread: threading.Thread | None = None

    def emit(self, record: logging.LogRecord) -> None:
        try:
            text = self.format(record) + "\n"
        except Exception:
            self.handleError(record)
            return
        data = text.encode("utf-8", "backslashreplace")
        with self._wakeup:
            if self._broken or self._closing:
                return
            if self._queued + len(data) > self.max_queued_bytes:
                self.dropped += 1
                return
            self._queue.append(data)
            self._queued += len(data)
            self._wakeup.notify()
            if self._thread is None:
                self._thread = threading.Thread(
                    target=self._write_loop, name="acp-stderr-log", daemon=True
                )
                self._thread.start()

    def flush(self) -> None:
        """Wait up to :data:`FLUSH_TIMEOUT` for stderr to take what is queued."""
        with self._wakeup:
            self._wakeup.wait_for(
                lambda: self._broken or not (self._queue or self._writing), FLUSH_TIMEOUT
            )

    def close(self) -> None:
        """Flush (bounded), then stop the writer thread; later records are dropped."""
        self.flush()
        with self._wakeup:
            self._closing = True
            self._wakeup.notify_all()
        super().close()

    def _write_loop(self) -> None:
        while True:
            with self._wakeup:
                self._writing = False
                self._wakeup.notify_all()  # flush() waits for an empty queue
                self._wakeup.wait_for(lambda: self._queue or self._closing)
                if not self._queue:
                    return
                data = self._take()
                self._writing = True
            try:
                _write_all(self.fd, data)
            except OSError:
                with self._wakeup:
                    self._broken = True
                    self._queue.clear()
                    self._queued = 0
                    self._writing = False
                    self._wakeup.notify_all()
                return

    def _take(self) -> bytes:
        """Queued text up to :data:`WRITE_BYTES` (at least one record), plus the report
        of records dropped meanwhile."""
        parts = [self._queue.popleft()]
        size = len(parts[0])
        while self._queue and size + len(self._queue[0]) <= WRITE_BYTES:
            parts.append(self._queue.popleft())
            size += len(parts[-1])
        self._queued -= size
        if self.dropped and not self._queue:
            parts.append(b"[%d log records dropped: stderr was not being read]\n" % self.dropped)
            self.dropped = 0
        return b"".join(parts)


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


def log_to_stderr(
    level: int = logging.INFO, *, fmt: str = DEFAULT_FORMAT, fd: int = 2
) -> StderrLogHandler:
    """Send records of ``level`` and above (and Python warnings) to stderr through a
    :class:`StderrLogHandler` on the root logger; returns the handler."""
    handler = StderrLogHandler(fd=fd)
    handler.setFormatter(logging.Formatter(fmt))
    root = logging.getLogger()
    root.addHandler(handler)
    root.setLevel(level)
    logging.captureWarnings(True)
    return handler


def log_nothing() -> None:
    """No log output at all: every record is dropped where it is made, and Python
    warnings become (dropped) records instead of lines on stderr."""
    logging.captureWarnings(True)
    logging.disable(logging.CRITICAL)
