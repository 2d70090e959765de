"""``python -m bench.ab --quick``: both sides run, the summary compares them."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def test_quick_ab_runs_both_sides_in_turn_and_compares_them() -> None:
    command = [sys.executable, "-m", "bench.ab", "--quick", "--rounds", "2"]
    proc = subprocess.run(
        [*command, "--baseline-src", str(REPO / "src")],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
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
    proc = subprocess.run(
        [sys.executable, "-m", "bench.ab", "--baseline-src", str(tmp_path)],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert proc.returncode == 2 and "no acp_runtime package" in proc.stderr
