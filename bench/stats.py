"""Small statistics shared by the drivers and the summary: percentiles and min/median/max."""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence


def percentile(values: Sequence[float], q: float) -> float:
    """Nearest-rank percentile (``q`` in 0..100) of unsorted ``values``; no interpolation,
    so the p99 of 1,000 samples is the 990th smallest, a value that was really measured."""
    ordered = sorted(values)
    rank = max(1, math.ceil(q / 100 * len(ordered)))
    return ordered[rank - 1]


def latency_figures(samples_ns: Sequence[int]) -> dict[str, float]:
    """p50 and p99 of latency samples, in microseconds."""
    return {
        "p50_us": round(percentile(samples_ns, 50) / 1000, 1),
        "p99_us": round(percentile(samples_ns, 99) / 1000, 1),
    }


def spread(values: Sequence[float]) -> dict[str, float]:
    """min, median and max over runs."""
    return {"min": min(values), "median": statistics.median(values), "max": max(values)}
