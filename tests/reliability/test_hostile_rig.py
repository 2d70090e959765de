"""The hostile-peer rig itself: a stopped process takes no more writes
(:mod:`.hostile_peers`), and the side-by-side table (:mod:`.hostile_table`)."""

from __future__ import annotations

import os
import sys

import pytest

from .hostile_peers import Target
from .hostile_table import span, table


def test_a_stopped_process_takes_no_write_even_when_its_descriptor_is_reused() -> None:
    """A writer thread can outlive its process; the next process may get the same
    descriptor number, and the old writer's lines must not land there."""
    process = Target("sink", (sys.executable, "-c", "import time; time.sleep(60)")).start()
    stdin = process.popen.stdin
    assert stdin is not None
    number = stdin.fileno()
    process.stop()
    read_end, write_end = os.pipe()
    try:
        os.dup2(write_end, number)  # what the next Popen may well do
        with pytest.raises(BrokenPipeError):
            process.write(b"stale line\n")
        os.set_blocking(read_end, False)
        with pytest.raises(BlockingIOError):
            os.read(read_end, 100)  # nothing arrived
    finally:
        for fd in {read_end, write_end, number}:
            os.close(fd)


def flood(target: str, peak: float, taken: int, stopped: bool) -> dict[str, object]:
    return {
        "scenario": "pings_50k",
        "what": "50,000 unread 1 KB pings",
        "target": target,
        "taken": taken,
        "stopped_reading": stopped,
        "base_rss_mib": 40.0,
        "peak_rss_mib": peak,
    }


def test_a_figure_that_moved_between_runs_shows_its_range() -> None:
    runs = [{"ms": 2.5}, {"ms": 1.25}, {"ms": None}]
    assert span(runs, "ms", " ms") == "1.2-2.5 ms"
    assert span([{"ms": 3.04}, {"ms": 2.96}], "ms") == "3.0"
    assert span([{"ms": None}], "ms") == "n/a"


def test_each_process_gets_its_column_and_each_side_its_row() -> None:
    records = [
        flood("python (baseline)", 95.0, 50_000, False),
        flood("python", 59.5, 16_988, True),
        flood("typescript", 332.0, 50_000, False),
        flood("python client", 49.5, 16_900, True),
        {**flood("python client (baseline)", 0, 0, False), "error": "TimeoutError: x"},
    ]
    rows = table(records, ["before", "after", "ts"]).splitlines()
    assert rows[0] == "| Scenario | Side | before | after | ts |"
    assert rows[2] == (
        "| 50,000 unread 1 KB pings | agent | 95.0 MiB (+55.0), read all 50,000"
        " | 59.5 MiB (+19.5), stopped reading after 16,988 lines"
        " | 332.0 MiB (+292.0), read all 50,000 |"
    )
    assert rows[3] == (
        "| 50,000 unread 1 KB pings | client | failed: TimeoutError: x"
        " | 49.5 MiB (+9.5), stopped reading after 16,900 lines | not run |"
    )
