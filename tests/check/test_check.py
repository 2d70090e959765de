"""``python -m acp_runtime.check`` against real agents over stdio: 0 errors on the SDKs'
echo agents (ours, the TypeScript SDK's, the PyPI package's), the tutorial agent and our
v2 agent (``--protocol v2``);
each deliberately broken agent (``raw_agent.py --defect``) reported as the error of its
check, and nothing else.

Every run starts at collection time of the first test, all at once, so the whole file
takes about as long as its slowest agent.
"""

from __future__ import annotations

import importlib.util
import json
import shutil
import subprocess
import sys
from collections.abc import Iterator
from functools import cache
from pathlib import Path
from typing import Any

import pytest

from acp_runtime.check._checks import Options, run_checks
from acp_runtime.check._report import CheckResult, exit_status, table

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
PY = sys.executable
RAW = [PY, str(HERE / "raw_agent.py")]
TS_AGENT = ROOT / "tests" / "interop" / "peers" / "agent.mjs"
NODE = shutil.which("node")
HAS_TS_SDK = (ROOT / "tests" / "interop" / "node_modules" / "@agentclientprotocol" / "sdk").is_dir()
# Every check of this module runs on one worker: each worker would otherwise start all of them
pytestmark = pytest.mark.xdist_group("agent-checks")
BOUNDS = ["--timeout", "5", "--cancel-bound", "1.5", "--eof-bound", "1.5"]

CORRECT: dict[str, list[str]] = {
    "echo": [
        "--cancel-prompt",
        "sleep 3000",
        "--",
        PY,
        str(ROOT / "examples" / "echo_agent.py"),
        "--quiet",
    ],
    "tutorial": ["--", PY, str(ROOT / "examples" / "tutorial_agent.py")],
    "raw": ["--cancel-prompt", "sleep 3000", "--", *RAW],
    "v2": [
        *("--protocol", "v2", "--cancel-prompt", "sleep 3000", "--"),
        *(PY, str(ROOT / "examples" / "v2_agent.py"), "--quiet"),
    ],
}
if importlib.util.find_spec("acp") is not None:  # the PyPI package, in the bench extra
    CORRECT["pypi"] = ["--cancel-prompt", "sleep 3000", "--", PY, str(HERE / "pypi_echo_agent.py")]
if NODE and HAS_TS_SDK:
    CORRECT["typescript"] = ["--cancel-prompt", "sleep 3000", "--", NODE, str(TS_AGENT), "--quiet"]

BROKEN: dict[str, set[str]] = {
    # defect: the checks that must report it (the first is the one the defect is for)
    "version-string": {"initialize: version", "schema: initialize result"},
    "no-session": {"session/new", "session turns"},
    "no-method-not-found": {"unknown method"},
    "crash-on-malformed": {"malformed JSON", "unknown notification"},
    "replies-to-notification": {"unknown notification"},
    "ignores-cancel": {"session/cancel"},
    "calls-fs": {"undeclared capabilities"},
    "no-exit-on-eof": {"EOF"},
    "invalid-update": {"schema: session/update params"},
}


@cache
def _runs() -> dict[str, subprocess.Popen[str]]:
    """Start every check at once (each takes seconds, mostly waiting)."""
    argvs = {name: args for name, args in CORRECT.items()}
    for defect in BROKEN:
        argvs[defect] = ["--cancel-prompt", "sleep 3000", "--", *RAW, "--defect", defect]
    return {
        name: subprocess.Popen(
            [PY, "-m", "acp_runtime.check", "--json", *BOUNDS, *args],
            stdout=subprocess.PIPE,
            text=True,
            cwd=ROOT,
        )
        for name, args in argvs.items()
    }


@pytest.fixture(scope="module", autouse=True)
def _stop_the_runs() -> Iterator[None]:
    """Every check started here has ended when the module's tests are done."""
    yield
    if _runs.cache_info().currsize:
        for process in _runs().values():
            if process.poll() is None:
                process.kill()
            process.communicate()


def check(name: str) -> tuple[int, list[dict[str, Any]]]:
    process = _runs()[name]
    stdout, _ = process.communicate(timeout=120)
    return process.returncode, json.loads(stdout)


def errors(results: list[dict[str, Any]]) -> set[str]:
    return {r["name"] for r in results if r["result"] == "error"}


@pytest.mark.parametrize(
    "agent",
    [
        pytest.param(name, marks=pytest.mark.interop) if name == "typescript" else name
        for name in ["echo", "tutorial", "raw", "v2", "pypi", "typescript"]
    ],
)
def test_a_correct_agent_passes_with_no_errors(agent: str) -> None:
    if agent not in CORRECT:
        pytest.skip(f"{agent}: node and the TypeScript SDK (make setup), or the bench extra")
    status, results = check(agent)
    assert errors(results) == set(), results
    assert status == 0
    names = {r["name"] for r in results}
    assert {"initialize: version", "session/new", "prompt turn", "session/cancel", "EOF"} <= names


@pytest.mark.parametrize("defect", sorted(BROKEN))
def test_each_defect_is_reported_as_the_error_of_its_check(defect: str) -> None:
    status, results = check(defect)
    found = errors(results)
    expected = BROKEN[defect]
    assert found and found <= expected, (defect, results)
    assert status == 1


def test_the_cancel_checks_pass_on_the_agents_that_can_be_cancelled() -> None:
    for agent in [name for name in ("echo", "pypi", "raw", "v2", "typescript") if name in CORRECT]:
        results = check(agent)[1]
        cancel = [r for r in results if r["name"] == "session/cancel"]
        assert [r["result"] for r in cancel] == ["pass"], (agent, results)


def test_the_table_and_the_exit_status() -> None:
    results = [
        CheckResult("a", "pass", "fine"),
        CheckResult("bb", "warning", "salvaged"),
        CheckResult("c", "info", "cooperative"),
    ]
    assert table(results).splitlines() == [
        "a   pass     fine",
        "bb  warning  salvaged",
        "c   info     cooperative",
        "1 pass, 0 error, 1 warning, 1 info",
    ]
    assert exit_status(results) == 0
    assert exit_status([*results, CheckResult("d", "error")]) == 1


@pytest.mark.anyio
async def test_run_checks_in_process() -> None:
    options = Options(command=RAW, cancel_prompt="sleep 3000", cancel_bound=1.5, eof_bound=1.5)
    results = await run_checks(options)
    assert [r for r in results if r.result == "error"] == []
