"""Per-message log records are rate-limited (REL-3): the first few of each kind, then
periodic summaries with counts, and a final summary when the connection closes."""

from __future__ import annotations

import logging
import re

import pytest

from acp_runtime import ConnectionBuilder
from acp_runtime._log_throttle import BURST, INTERVAL, LogThrottle
from acp_runtime.testing import wire_connection

log = logging.getLogger("acp_runtime.test_throttle")


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def messages(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [record.getMessage() for record in caplog.records]


def test_rel3_the_first_records_of_a_kind_then_one_summary_per_interval(
    caplog: pytest.LogCaptureFixture,
) -> None:
    clock = Clock()
    throttle = LogThrottle(burst=3, interval=10.0, clock=clock)
    with caplog.at_level(logging.WARNING, logger=log.name):
        for n in range(1000):
            throttle.log(log, logging.WARNING, "bad line %d", n)
            throttle.log(log, logging.WARNING, "other kind %d", n)
        assert messages(caplog) == [
            "bad line 0",
            "other kind 0",
            "bad line 1",
            "other kind 1",
            "bad line 2",
            "other kind 2",
        ]
        caplog.clear()
        clock.now += 10.0
        throttle.log(log, logging.WARNING, "bad line %d", 1000)  # replaced by the summary
        assert messages(caplog) == [
            "997 more records like 'bad line %d' in the last 10 s were not logged"
        ]
        caplog.clear()
        clock.now += 3.0
        throttle.log(log, logging.WARNING, "bad line %d", 1001)
        throttle.flush()  # the rest, whatever the interval
        assert sorted(messages(caplog)) == [
            "2 more records like 'bad line %d' in the last 3 s were not logged",
            "997 more records like 'other kind %d' in the last 13 s were not logged",
        ]
        caplog.clear()
        throttle.flush()
        assert messages(caplog) == []


def test_rel3_a_quiet_interval_gives_the_burst_back(caplog: pytest.LogCaptureFixture) -> None:
    clock = Clock()
    throttle = LogThrottle(burst=2, interval=10.0, clock=clock)
    with caplog.at_level(logging.WARNING, logger=log.name):
        for n in range(2):
            throttle.log(log, logging.WARNING, "rare %d", n)
        clock.now += 11.0
        throttle.log(log, logging.WARNING, "rare %d", 2)
        assert messages(caplog) == ["rare 0", "rare 1", "rare 2"]


def test_rel3_records_keep_their_extras_and_the_callers_location(
    caplog: pytest.LogCaptureFixture,
) -> None:
    throttle = LogThrottle()
    with caplog.at_level(logging.WARNING, logger=log.name):
        throttle.log(log, logging.WARNING, "x", extra={"acp_request_id": 5})
    [record] = caplog.records
    assert record.__dict__["acp_request_id"] == 5
    assert record.pathname == __file__


def test_rel3_disabled_levels_cost_no_budget(caplog: pytest.LogCaptureFixture) -> None:
    throttle = LogThrottle(burst=1)
    with caplog.at_level(logging.ERROR, logger=log.name):
        for _ in range(10):
            throttle.log(log, logging.DEBUG, "noise")
        throttle.flush()
    assert messages(caplog) == []


@pytest.mark.anyio
async def test_rel3_a_flood_of_bad_lines_logs_a_few_records_and_a_summary_at_close(
    caplog: pytest.LogCaptureFixture,
) -> None:
    with caplog.at_level(logging.DEBUG, logger="acp_runtime"):
        async with wire_connection(ConnectionBuilder()) as (_cx, peer):
            for n in range(500):
                await peer.send(b"not json %d" % n)
            replies = await peer.barrier()
            assert len(replies) == 500  # every line is still answered
    warnings = [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING]
    assert warnings[:BURST] == [f"unparsable message: not json {n}" for n in range(BURST)]
    [summary] = warnings[BURST:]  # the barrier's line is one of them
    assert re.fullmatch(
        rf"{501 - BURST} more records like 'unparsable message: %s' in the last \d+ s were"
        " not logged",
        summary,
    )
    assert INTERVAL >= 1.0
