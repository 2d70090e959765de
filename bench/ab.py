"""Interleaved A/B of this SDK's runtime benchmark: this checkout against another one.

Each round runs ``python -m bench --impl this --runs 1`` once with the other checkout's
``src`` first on ``PYTHONPATH`` (``baseline``: its runtime and generated models, in the
driver and in the agent it spawns) and once without (``this``), the order alternating from
round to round, so a change of load on the machine hits both sides alike. The workloads,
drivers and agents are this checkout's (``bench/``), so only the runtime differs.

    python -m bench.ab --baseline-src /path/to/other/checkout/src --rounds 7

Prints one JSON object per run (``side`` and its figures), then a ``summary``: per figure,
min/median/max of each side and ``this_vs_baseline``, the ratio of the medians oriented so
that ``> 1`` means this checkout is better (throughput this/baseline, CPU time and latency
baseline/this). A Markdown table of the medians goes to stderr. Compare the CPU figures
(``*_cpu_us``) first: on a shared machine they move far less than the rates.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path
from typing import Any

from bench.runtime_bench import ratio, run_driver, summarize
from bench.workload_spec import FULL, QUICK

SIDES = ("baseline", "this")


def run_side(side: str, baseline_src: Path, quick: bool) -> dict[str, Any]:
    """One run of the runtime benchmark's ``this`` driver on one side."""
    saved = os.environ.get("PYTHONPATH")
    if side == "baseline":
        os.environ["PYTHONPATH"] = str(baseline_src)
    else:
        os.environ.pop("PYTHONPATH", None)
    try:
        return run_driver("this", QUICK if quick else FULL, 120.0 if quick else 900.0)
    finally:
        if saved is None:
            os.environ.pop("PYTHONPATH", None)
        else:
            os.environ["PYTHONPATH"] = saved


def compare(runs: dict[str, list[dict[str, Any]]]) -> dict[str, Any]:
    """The runtime benchmark's summary of both sides, plus ``this_vs_baseline``."""
    metrics = summarize(runs)
    for entry in metrics.values():
        if all(side in entry for side in SIDES):
            this, baseline = entry["this"]["median"], entry["baseline"]["median"]
            entry["this_vs_baseline"] = ratio(this, baseline, entry["higher_is_better"])
    return metrics


def table(metrics: dict[str, Any]) -> str:
    lines = ["| figure | baseline | this | this vs baseline |", "|---|---|---|---|"]
    for path, entry in metrics.items():
        cells = [f"{entry[s]['median']:g}" if s in entry else "-" for s in SIDES]
        better = entry.get("this_vs_baseline")
        lines.append(f"| {path} | {' | '.join(cells)} | {f'{better}x' if better else '-'} |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.ab", description=__doc__.split("\n")[0])
    parser.add_argument("--baseline-src", type=Path, required=True, metavar="PATH")
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--quick", action="store_true", help="tiny workloads (a smoke test)")
    args = parser.parse_args(argv)
    baseline_src = args.baseline_src.resolve()
    if not (baseline_src / "acp_runtime").is_dir():
        parser.error(f"no acp_runtime package under {baseline_src}")
    started = time.time()
    runs: dict[str, list[dict[str, Any]]] = {side: [] for side in SIDES}
    for k in range(args.rounds):
        for side in SIDES if k % 2 == 0 else SIDES[::-1]:
            load = os.getloadavg()[0]
            figures = run_side(side, baseline_src, args.quick)
            runs[side].append(figures)
            record = {"kind": "run", "side": side, "round": k, "load_1m": round(load, 2)}
            print(json.dumps({**record, **figures}), flush=True)
    metrics = compare(runs)
    summary = {
        "kind": "summary",
        "baseline_src": str(baseline_src),
        "rounds": args.rounds,
        "quick": args.quick,
        "duration_s": round(time.time() - started, 1),
        "load_1m_end": round(os.getloadavg()[0], 2),
        "metrics": metrics,
    }
    print(json.dumps(summary), flush=True)
    print(table(metrics), file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
