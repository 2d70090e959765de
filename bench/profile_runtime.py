"""Profile one workload of a Python implementation with pyinstrument (client and agent).

Usage: ``python -m bench.profile_runtime [--impl this|pypi] WORKLOAD [--n N]``, WORKLOAD
one of ping, prompt, inflight, notify, cancel, mixed. Writes ``client.txt`` and
``agent.txt`` under ``.bench/profile/<impl>-<workload>/`` and prints their paths and the
run's figures. Needs pyinstrument (in the ``bench`` extra).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

from bench.profiling import ENV
from bench.workload_spec import FULL, Spec

REPO = Path(__file__).resolve().parents[1]
COUNT_KEY = {
    "ping": "ping",
    "prompt": "prompt",
    "inflight": "inflight_total",
    "notify": "notify",
    "cancel": "cancel",
    "mixed": "mixed_chunks",
}
DRIVER = {"this": "bench.drivers.this_sdk", "pypi": "bench.drivers.pypi"}


def single_workload_spec(workload: str, n: int | None) -> Spec:
    spec = FULL.copy()
    for key in COUNT_KEY.values():
        spec[key] = 0  # type: ignore[literal-required]
    key = COUNT_KEY[workload]
    spec[key] = n if n is not None else FULL[key]  # type: ignore[literal-required]
    return spec


def main() -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.profile_runtime")
    parser.add_argument("--impl", choices=sorted(DRIVER), default="this")
    parser.add_argument("workload", choices=sorted(COUNT_KEY))
    parser.add_argument("--n", type=int, help="count (default: the full suite's)")
    args = parser.parse_args()
    out = REPO / ".bench" / "profile" / f"{args.impl}-{args.workload}"
    out.mkdir(parents=True, exist_ok=True)
    spec = single_workload_spec(args.workload, args.n)
    proc = subprocess.run(
        [sys.executable, "-m", DRIVER[args.impl], json.dumps(spec)],
        cwd=REPO,
        env={**os.environ, ENV: str(out)},
        stdout=subprocess.PIPE,
        text=True,
        check=True,
    )
    print(proc.stdout.strip())
    print(f"profiles: {out / 'client.txt'} {out / 'agent.txt'}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
