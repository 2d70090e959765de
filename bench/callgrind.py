"""Instructions that callgrind counts in marked stretches of a child Python.

The child marks a stretch by calling ``os.getppid()`` where it starts (the counters are
zeroed) and ``os.getpgrp()`` where it ends (they are dumped), so start-up, imports and
warm-up stay out. The hash seed is fixed and, where ``setarch`` exists, address-space
randomization is off: where objects land decides which lookups collide in CPython's type
attribute cache, so a run is only repeatable with the same layout.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Mapping
from pathlib import Path

_TOTAL = re.compile(r"^(?:summary|totals): (\d+)", re.MULTILINE)


def marked_stretches(
    python_args: list[str], *, env: Mapping[str, str], cwd: Path | None = None
) -> tuple[list[int], str]:
    """Run ``python *python_args`` under callgrind: the instructions of each marked
    stretch, in order, and the child's standard output."""
    with tempfile.TemporaryDirectory() as tmp:
        command = [
            "valgrind",
            "--tool=callgrind",
            f"--callgrind-out-file={tmp}/out",
            "--zero-before=os_getppid",
            "--dump-before=os_getpgrp",
            sys.executable,
            *python_args,
        ]
        if shutil.which("setarch"):
            command = ["setarch", os.uname().machine, "-R", *command]
        run = subprocess.run(
            command,
            cwd=cwd,
            env={**env, "PYTHONHASHSEED": "0"},
            capture_output=True,
            text=True,
            check=False,
        )
        if run.returncode != 0:
            raise RuntimeError(f"{python_args[:3]} failed under callgrind:\n{run.stderr[-3000:]}")
        dumps = sorted(Path(tmp).glob("out.*"), key=lambda path: int(path.suffix[1:]))
        totals = []
        for dump in dumps:
            found = _TOTAL.search(dump.read_text())
            if found is None:
                raise RuntimeError(f"no instruction total in {dump.name}")
            totals.append(int(found.group(1)))
    return totals, run.stdout
