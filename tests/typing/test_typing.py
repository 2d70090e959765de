"""Run mypy --strict and pyright (strict) on small snippet files, no pydantic plugin.

Each snippet marks what the checkers must say: ``# expect: T`` on a ``reveal_type`` line
(the revealed type must end with ``T``) and ``# expect-error`` on a line where an error
must be reported (at that line or the next two, since mypy points at the argument and
pyright at the name). Any other error fails the test, so the positive snippets prove
that snake_case constructors, typed sends and handler subclasses are accepted.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path

import pytest

# One mypy and one pyright run per process checks every snippet: keep them in one worker
pytestmark = pytest.mark.xdist_group("typing-snippets")

SNIPPETS = Path(__file__).parent / "snippets"
ROOT = Path(__file__).resolve().parents[2]
FILES = sorted(SNIPPETS.glob("*.py"))
_EXPECT = re.compile(r"#\s*expect:\s*([\w.]+)")
_EXPECT_ERROR = re.compile(r"#\s*expect-error")


@dataclass
class Findings:
    errors: dict[str, set[int]] = field(default_factory=dict)
    reveals: dict[str, dict[int, str]] = field(default_factory=dict)


@cache
def _checker_processes() -> dict[str, subprocess.Popen[str]]:
    """Start both checkers at once (they take seconds each); collected on first use."""
    bin_dir = Path(sys.executable).parent
    commands = {
        "mypy": [str(bin_dir / "mypy"), "--strict", "--no-incremental", "--show-error-codes"],
        # the interpreter running the tests, wherever its venv is (not pyproject's .venv)
        "pyright": [str(bin_dir / "pyright"), "--outputjson", "--pythonpath", sys.executable],
    }
    return {
        name: subprocess.Popen(
            [*cmd, *map(str, FILES)],
            cwd=ROOT,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for name, cmd in commands.items()
    }


def _run(name: str) -> subprocess.CompletedProcess[str]:
    proc = _checker_processes()[name]
    stdout, stderr = proc.communicate(timeout=300)
    return subprocess.CompletedProcess(proc.args, proc.returncode, stdout, stderr)


@cache
def mypy_findings() -> Findings:
    proc = _run("mypy")
    out = Findings()
    for line in proc.stdout.splitlines():
        m = re.match(r"(.+?\.py):(\d+): (error|note): (.*)", line)
        if not m:
            continue
        name, lineno, kind, text = Path(m[1]).name, int(m[2]), m[3], m[4]
        if kind == "error":
            out.errors.setdefault(name, set()).add(lineno)
        elif text.startswith("Revealed type is"):
            out.reveals.setdefault(name, {})[lineno] = text.split('"')[1]
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
        name = Path(diag["file"]).name
        lineno = diag["range"]["start"]["line"] + 1
        if diag["severity"] == "error":
            out.errors.setdefault(name, set()).add(lineno)
        elif diag["message"].startswith("Type of"):
            out.reveals.setdefault(name, {})[lineno] = diag["message"].split('"')[-2]
    return out


def _expectations(path: Path) -> tuple[dict[int, str], set[int]]:
    reveals: dict[int, str] = {}
    errors: set[int] = set()
    for lineno, line in enumerate(path.read_text().splitlines(), start=1):
        if m := _EXPECT.search(line):
            reveals[lineno] = m[1]
        if _EXPECT_ERROR.search(line):
            errors.add(lineno)
    return reveals, errors


CHECKERS = {"mypy": mypy_findings, "pyright": pyright_findings}


@pytest.mark.parametrize("checker", sorted(CHECKERS))
@pytest.mark.parametrize("snippet", FILES, ids=[f.stem for f in FILES])
def test_snippet(checker: str, snippet: Path) -> None:
    found = CHECKERS[checker]()
    want_reveals, want_errors = _expectations(snippet)
    got_errors = found.errors.get(snippet.name, set())
    got_reveals = found.reveals.get(snippet.name, {})
    for lineno, type_name in want_reveals.items():
        assert lineno in got_reveals, f"{checker}: no reveal_type output at {snippet.name}:{lineno}"
        assert got_reveals[lineno].split(".")[-1] == type_name, (
            checker,
            lineno,
            got_reveals[lineno],
        )
    windows = {lineno: range(lineno, lineno + 3) for lineno in want_errors}
    for lineno, window in windows.items():
        assert got_errors & set(window), f"{checker}: expected an error at {snippet.name}:{lineno}"
    unexpected = {e for e in got_errors if not any(e in w for w in windows.values())}
    assert not unexpected, (
        f"{checker}: unexpected errors in {snippet.name} at lines {sorted(unexpected)}"
    )
