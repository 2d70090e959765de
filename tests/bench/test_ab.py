"""``python -m bench.ab --quick``: both sides run, the summary compares them."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.bench import REPO, run_python

# make test-bench (and CI) runs these; make test leaves them out
pytestmark = pytest.mark.bench


def test_quick_ab_runs_both_sides_in_turn_and_compares_them() -> None:
    proc = run_python(
        *("-m", "bench.ab", "--quick", "--rounds", "2"),
        *("--baseline-src", str(REPO / "src")),
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    records = [json.loads(line) for line in proc.stdout.splitlines()]
    assert [(r["side"], r["round"]) for r in records[:-1]] == [
        ("baseline", 0),
        ("this", 0),
        ("this", 1),
        ("baseline", 1),
    ]
    summary = records[-1]
    assert summary["kind"] == "summary"
    cpu = summary["metrics"]["ping.client_cpu_us"]
    assert cpu["baseline"]["median"] > 0 and cpu["this"]["median"] > 0
    assert cpu["this_vs_baseline"] > 0
    assert "| ping.client_cpu_us |" in proc.stderr


def test_the_baseline_must_hold_a_runtime(tmp_path: Path) -> None:
    proc = run_python("-m", "bench.ab", "--baseline-src", str(tmp_path), timeout=60)
    assert proc.returncode == 2 and "no acp_runtime package" in proc.stderr
