"""Tests of the benchmark tools: each runs one as a user would, in a child interpreter."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def run_python(*args: str, timeout: float) -> subprocess.CompletedProcess[str]:
    """Run this interpreter with ``args`` from the repository root, output captured as
    text; the caller judges the exit status (a failed run should show its stderr)."""
    return subprocess.run(
        [sys.executable, *args],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )
