"""Every example type-checks under mypy --strict and pyright strict (issue #15): users copy
them, so they must show code that passes the checkers a user runs."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples"


@pytest.mark.parametrize("checker", ["mypy", "pyright"])
def test_examples_pass_the_strict_checkers(checker: str) -> None:
    bin_dir = Path(sys.executable).parent
    command = {
        "mypy": [str(bin_dir / "mypy"), "--strict", "--no-incremental", str(EXAMPLES)],
        # the interpreter running the tests, wherever its venv is (not pyproject's .venv)
        "pyright": [str(bin_dir / "pyright"), "--pythonpath", sys.executable, str(EXAMPLES)],
    }[checker]
    env = {**os.environ, "MYPYPATH": str(EXAMPLES)}  # examples import their siblings
    done = subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stdout + done.stderr
