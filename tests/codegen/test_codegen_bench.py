"""``bench/codegen_bench.py --quick`` runs and prints well-formed JSON lines (no timing asserts)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]

pytestmark = pytest.mark.bench


def test_quick_bench_prints_json_records_and_a_summary() -> None:
    pytest.importorskip(
        "acp.schema", reason="the peer agent-client-protocol==0.12.1 is not installed"
    )
    done = subprocess.run(
        [sys.executable, str(REPO / "bench" / "codegen_bench.py"), "--quick"],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=REPO,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    records = [json.loads(line) for line in done.stdout.splitlines()]
    kinds = [r["kind"] for r in records]
    assert kinds[-1] == "summary" and kinds.count("summary") == 1
    assert {"generate", "import", "ops"} <= set(kinds)

    ops = [r for r in records if r["kind"] == "ops"]
    impls = {r["impl"] for r in ops}
    assert impls == {"acp_generated.v1", "agent-client-protocol==0.12.1"}
    assert {r["message"] for r in ops} == {"session/update agent_message_chunk", "session/prompt"}
    assert all(r["best_ops_s"] > 0 and r["median_ops_s"] > 0 for r in ops)

    summary = records[-1]
    # one ratio per generated (message, path) measured against the peer in the same run
    assert len(summary["ratios"]) == len([r for r in ops if r["impl"] == "acp_generated.v1"])
    assert all(r["median_ratio"] > 0 for r in summary["ratios"])
