"""One mypy --strict run and one pyright (strict) run over every file the typing tests check.

The snippets here (which mark the errors and revealed types they expect), the examples, and
each docs page's code (extracted into one module per page) are checked together: the
checkers spend most of their time on what those files import (pydantic, anyio, the runtime
and the generated packages), so one run over all of them costs about what a run over any one
set did. Tests that read these findings share the ``GROUP`` xdist group, so the runs happen
once, in one worker.
"""

from __future__ import annotations

import atexit
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path

import pytest

from tests.docs.markdown_examples import extract, opted_in_pages

GROUP = "typing-checkers"
ROOT = Path(__file__).resolve().parents[2]
SNIPPETS = sorted((Path(__file__).parent / "snippets").glob("*.py"))
EXAMPLES = sorted((ROOT / "examples").glob("*.py"))


@dataclass
class Findings:
    """What one checker reported, per file (resolved path) and line."""

    errors: dict[Path, dict[int, list[str]]] = field(default_factory=dict)
    reveals: dict[Path, dict[int, str]] = field(default_factory=dict)

    def error(self, path: Path, lineno: int, message: str) -> None:
        self.errors.setdefault(path, {}).setdefault(lineno, []).append(message)

    def report(self, paths: list[Path]) -> str:
        """Every error in ``paths``, one per line, as ``file:line: message``."""
        return "\n".join(
            f"{path.name}:{lineno}: {message}"
            for path in paths
            for lineno, messages in sorted(self.errors.get(path, {}).items())
            for message in messages
        )


@cache
def doc_modules() -> list[Path]:
    """Each opted-in docs page's examples as one module (they share a namespace when run)."""
    out = Path(tempfile.mkdtemp(prefix="acp-doc-examples-"))
    atexit.register(shutil.rmtree, out, ignore_errors=True)
    modules: list[Path] = []
    for page in opted_in_pages():
        module = out / f"doc_{page.stem.replace('-', '_')}.py"
        module.write_text("".join(e.code for e in extract(page)), encoding="utf-8")
        modules.append(module.resolve())
    assert modules, "no docs page opts in to runnable examples"
    return modules


def checked_files() -> list[Path]:
    return [*SNIPPETS, *EXAMPLES, *doc_modules()]


@cache
def _checker_processes() -> dict[str, subprocess.Popen[str]]:
    """Start both checkers at once (they take seconds each); collected on first use."""
    bin_dir = Path(sys.executable).parent
    commands = {
        "mypy": [str(bin_dir / "mypy"), "--strict", "--no-incremental", "--show-error-codes"],
        # the interpreter running the tests, wherever its venv is (not pyproject's .venv)
        "pyright": [str(bin_dir / "pyright"), "--outputjson", "--pythonpath", sys.executable],
    }
    env = {**os.environ, "MYPYPATH": str(ROOT / "examples")}  # examples import their siblings
    files = [str(path) for path in checked_files()]
    return {
        name: subprocess.Popen(
            [*command, *files],
            cwd=ROOT,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for name, command in commands.items()
    }


def _run(name: str) -> subprocess.CompletedProcess[str]:
    proc = _checker_processes()[name]
    stdout, stderr = proc.communicate(timeout=600)
    return subprocess.CompletedProcess(proc.args, proc.returncode, stdout, stderr)


@cache
def mypy_findings() -> Findings:
    proc = _run("mypy")
    out = Findings()
    for line in proc.stdout.splitlines():
        m = re.match(r"(.+?\.py):(\d+): (error|note): (.*)", line)
        if not m:
            continue
        path, lineno, kind, text = (ROOT / m[1]).resolve(), int(m[2]), m[3], m[4]
        if kind == "error":
            out.error(path, lineno, text)
        elif text.startswith("Revealed type is"):
            out.reveals.setdefault(path, {})[lineno] = text.split('"')[1]
    if proc.returncode not in (0, 1):
        pytest.fail(f"mypy crashed:\n{proc.stdout}\n{proc.stderr}")
    return out


@cache
def pyright_findings() -> Findings:
    proc = _run("pyright")
    out = Findings()
    try:
        report = json.loads(proc.stdout)
    except json.JSONDecodeError:
        pytest.fail(f"pyright gave no JSON:\n{proc.stdout}\n{proc.stderr}")
    for diag in report["generalDiagnostics"]:
        path = Path(diag["file"]).resolve()
        lineno = diag["range"]["start"]["line"] + 1
        if diag["severity"] == "error":
            out.error(path, lineno, diag["message"])
        elif diag["message"].startswith("Type of"):
            out.reveals.setdefault(path, {})[lineno] = diag["message"].split('"')[-2]
    return out


CHECKERS = {"mypy": mypy_findings, "pyright": pyright_findings}
