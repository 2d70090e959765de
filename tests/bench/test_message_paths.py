"""``bench/message_paths.py``: every scenario runs and marks its measured part once."""

from __future__ import annotations

import pytest

from tests.bench import run_python

RUN_WITH_MARKS = """
import anyio, sys
import bench.message_paths as paths
marks = []
paths.WARMUP = 3
paths.measuring = lambda: marks.append("start")
paths.measured = lambda: marks.append("end")
anyio.run(paths.RUN[sys.argv[1]], 5, backend="asyncio")
print(marks)
"""


@pytest.mark.parametrize("scenario", ["send", "receive", "ping", "prompt"])
def test_scenario_runs_and_marks_its_measured_part_once(scenario: str) -> None:
    proc = run_python("-c", RUN_WITH_MARKS, scenario, timeout=60)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert proc.stdout.strip() == "['start', 'end']"


def test_one_scenario_is_named() -> None:
    proc = run_python("-m", "bench.message_paths", "pong", timeout=60)
    assert proc.returncode == 2 and "scenarios are" in proc.stderr
