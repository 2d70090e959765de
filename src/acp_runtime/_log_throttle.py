"""Rate-limited log records for what a peer can repeat at will, one record per message.

A broken or hostile peer can send a million bad lines; a WARNING for each would flood
the log (and an agent's stderr, which its editor may not even read). So each kind of
record, meaning its logger and its format string, is logged as it is for the first
:data:`BURST` occurrences; after that the records are counted, and the first one of that
kind arriving :data:`INTERVAL` seconds after the last summary is replaced by a summary
with the count. :meth:`LogThrottle.flush` reports what is still counted (connections
call it when they close). A kind that stays quiet for a whole interval gets its burst
back.

The budget is per process, not per connection: what it protects (the log's reader and
its pipe) is shared by every connection in the process.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from typing import Any

BURST = 5
"""Records of one kind logged as they are before counting starts."""

INTERVAL = 10.0
"""Seconds between two summaries of one kind."""


class _Budget:
    __slots__ = ("level", "logged", "since", "suppressed")

    def __init__(self, now: float, level: int) -> None:
        self.since = now
        self.logged = 0
        self.suppressed = 0
        self.level = level


class LogThrottle:
    """Logs the first records of each kind, then periodic summaries with counts."""

    def __init__(
        self,
        burst: int = BURST,
        interval: float = INTERVAL,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._burst = burst
        self._interval = interval
        self._clock = clock
        self._budgets: dict[tuple[logging.Logger, str], _Budget] = {}

    def log(
        self, logger: logging.Logger, level: int, msg: str, *args: object, **kwargs: Any
    ) -> None:
        """``logger.log(level, msg, *args, **kwargs)``, within the budget of ``msg``."""
        if not logger.isEnabledFor(level):
            return
        now = self._clock()
        budget = self._budgets.get((logger, msg))
        if budget is None:
            budget = self._budgets[(logger, msg)] = _Budget(now, level)
        elif now - budget.since >= self._interval:
            if budget.suppressed:
                self._summarize(logger, msg, budget, now)
                budget.suppressed = 1  # this record is counted in the next summary
                return
            budget.since, budget.logged = now, 0  # a quiet interval: the burst again
        if budget.logged < self._burst:
            budget.logged += 1
            logger.log(level, msg, *args, stacklevel=2, **kwargs)  # the caller's place
        else:
            budget.suppressed += 1

    def flush(self) -> None:
        """Log a summary for every kind with records counted and not yet reported."""
        now = self._clock()
        for (logger, msg), budget in self._budgets.items():
            if budget.suppressed:
                self._summarize(logger, msg, budget, now)

    def reset(self) -> None:
        """Forget every budget (tests start from a clean slate)."""
        self._budgets.clear()

    @staticmethod
    def _summarize(logger: logging.Logger, msg: str, budget: _Budget, now: float) -> None:
        logger.log(
            budget.level,
            "%d more records like %r in the last %.0f s were not logged",
            budget.suppressed,
            msg,
            now - budget.since,
        )
        budget.since, budget.suppressed = now, 0


peer_log = LogThrottle()
"""The runtime's throttle for records caused by what a peer sends, one per message."""
