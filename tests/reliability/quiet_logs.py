"""Keep the runtime's log records out of pytest's capture during long runs.

pytest stores every captured record until the test ends, which would look like a leak
in a memory measurement; records are still created and formatted, then dropped.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from contextlib import contextmanager


class _FormatAndDrop(logging.Handler):
    def emit(self, record: logging.LogRecord) -> None:
        self.format(record)


@contextmanager
def runtime_logs_formatted_and_dropped() -> Iterator[None]:
    logger = logging.getLogger("acp_runtime")
    handler = _FormatAndDrop()
    saved = logger.propagate, logger.level
    logger.addHandler(handler)
    logger.propagate = False
    logger.setLevel(logging.DEBUG)
    try:
        yield
    finally:
        logger.removeHandler(handler)
        logger.propagate, logger.level = saved
