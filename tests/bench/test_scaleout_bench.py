"""``python -m bench.scaleout``: 100 clients through HAProxy on 1 worker and on 4, both
transports, with and without agent work. Several minutes, so ``slow``; it checks the
run, not the rates (they depend on the machine and its load)."""

from __future__ import annotations

import json

import pytest

from tests.bench import run_python
from tests.scaleout.haproxy import haproxy_executable


@pytest.mark.slow
def test_the_scaleout_bench_serves_every_client_on_one_worker_and_on_four() -> None:
    if haproxy_executable() is None:
        pytest.skip("haproxy is not installed (`make haproxy`)")
    proc = run_python("-m", "bench.scaleout", timeout=1200)
    assert proc.returncode == 0, proc.stderr[-2000:]
    records = [json.loads(line) for line in proc.stdout.splitlines()]
    runs = [r for r in records if r["kind"] == "run"]
    assert {(r["transport"], r["work_ms"], r["workers"]) for r in runs} == {
        (t, w, n) for t in ("http", "ws") for w in (0, 5) for n in (1, 4)
    }
    for run in runs:
        assert run["failed_clients"] == 0, run["failures"]
        assert sum(run["clients_per_worker"].values()) == 100
        if run["workers"] == 4:
            assert run["clients_per_worker"] == {"w1": 25, "w2": 25, "w3": 25, "w4": 25}
        assert 0 < run["prompt_p50_ms"] <= run["prompt_p99_ms"]
    summary = records[-1]
    assert summary["kind"] == "summary" and len(summary["medians"]) == 4
