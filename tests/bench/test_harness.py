"""The workload loops of ``bench/drivers/harness.py``, against a client that counts."""

from __future__ import annotations

import json

from tests.bench import run_python

# In a child interpreter from the repository root: under pytest, ``bench`` is tests/bench.
CANCEL_FOUR = """
import anyio, itertools, json
from bench.drivers.harness import cancellations

class Counting:
    cancel_mechanism = "$/cancel_request"
    calls = itertools.count(1)

    async def cancel_latency_ns(self):
        return next(self.calls) * 1000  # the n-th call takes n µs

client = Counting()
figures = anyio.run(cancellations, client, 4)
print(json.dumps({"figures": figures, "calls": next(client.calls) - 1}))
"""


def test_cancellations_time_n_cancels_after_n_untimed_ones() -> None:
    """The first ``n`` cancels warm the client's cancel path and stay out of the figures:
    the timed samples are calls 5 to 8."""
    proc = run_python("-c", CANCEL_FOUR, timeout=60)
    assert proc.returncode == 0, proc.stderr[-2000:]
    result = json.loads(proc.stdout)
    assert result["calls"] == 8
    assert result["figures"] == {
        "n": 4,
        "mechanism": "$/cancel_request",
        "p50_us": 6.0,
        "p99_us": 8.0,
    }
