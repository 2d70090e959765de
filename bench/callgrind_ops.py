"""Instructions per validate+dump of the codegen benchmark's messages, under callgrind.

Wall clock on a shared 2-core VM moves by 5-20 % between runs; the number of instructions
an operation executes does not. One interpreter under ``valgrind --tool=callgrind`` (hash
seed fixed) imports every implementation of ``bench/codegen_bench.py``, then for each
message and path warms the operation up and runs it N times between two markers
(``os.getppid`` zeroes the counters, ``os.getpgrp`` dumps them), so each dump holds the
N operations alone: one JSON record per line with the instructions per operation.

    .venv/bin/python bench/callgrind_ops.py                       # this tree, and the peer
    .venv/bin/python bench/callgrind_ops.py --src /tmp/base98/src  # another tree's models

``--src`` puts another checkout's ``src`` first on the path, so the same payloads run
through that tree's ``acp_generated`` and ``acp_runtime`` (an A/B against an older commit).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
CHILD = """
import os, sys
from bench.codegen_bench import IMPLS, PATHS, subjects_of
n = int(sys.argv[1])
for impl in sys.argv[2:]:
    for subject in subjects_of(impl):
        for path, make in PATHS.items():
            op = make(subject)
            for _ in range(200):  # first-use costs (deferred schema builds) stay out
                op()
            print(impl, subject.message, path, flush=True)
            os.getppid()
            for _ in range(n):
                op()
            os.getpgrp()
"""


def measure(src: str | None, impls: list[str], n: int) -> list[dict[str, object]]:
    from bench.callgrind import marked_stretches  # main() put the repository on the path

    env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in (src, str(HERE.parent)) if p)}
    totals, stdout = marked_stretches(["-c", CHILD, str(n), *impls], env=env)
    labels = stdout.splitlines()
    assert len(labels) == len(totals), (labels, totals)
    records: list[dict[str, object]] = []
    for label, total in zip(labels, totals, strict=True):
        impl, rest = label.split(" ", 1)
        message, path = rest.rsplit(" ", 1)
        records.append(
            {
                "kind": "instructions",
                "impl": impl,
                "tree": src or "this",
                "message": message,
                "path": path,
                "per_op": round(total / n),
            }
        )
    return records


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--src", help="a checkout's src/ to take acp_generated from")
    parser.add_argument("--impl", action="append", help="implementations (default: all)")
    parser.add_argument("-n", type=int, default=2000, help="operations measured per record")
    options = parser.parse_args(argv)
    sys.path.insert(0, str(HERE.parent))
    from bench.codegen_bench import IMPLS

    for record in measure(options.src, options.impl or list(IMPLS), options.n):
        print(json.dumps(record), flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
