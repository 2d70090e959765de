"""The committed transcripts are what the pinned TypeScript SDK really sends today."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from .conftest import ScenarioRuns
from .node_peers import REPO_ROOT, run_ts_v2_client, ts_v2_agent_command
from .scenarios import SCENARIOS, V2_LONG_PROMPT, V2_PROMPT, V2_SCENARIO, WORKSPACE

# The TS client's scenario runs are cached per process (conftest.ScenarioRuns)
pytestmark = pytest.mark.xdist_group("interop-scenario-runs")

TRANSCRIPTS = REPO_ROOT / "tests" / "corpus" / "transcripts"


@pytest.mark.parametrize("name", sorted(SCENARIOS))
def test_transcript_matches_fresh_capture(ts_agent_runs: ScenarioRuns, name: str) -> None:
    _, fresh = ts_agent_runs.run(name)
    committed = (TRANSCRIPTS / f"{name}.jsonl").read_text()
    assert fresh == committed, "regenerate with tests/interop/capture_transcripts.py"


def test_v2_transcript_matches_fresh_capture(node: str, tmp_path: Path) -> None:
    fresh = tmp_path / "v2.jsonl"
    agent = ts_v2_agent_command("--quiet")
    run_ts_v2_client(agent, V2_PROMPT, V2_LONG_PROMPT, cwd=WORKSPACE, transcript=fresh)
    committed = (TRANSCRIPTS / f"{V2_SCENARIO}.jsonl").read_text()
    assert fresh.read_text() == committed, "regenerate with tests/interop/capture_transcripts.py"


def test_every_transcript_line_is_a_jsonrpc_message() -> None:
    files = sorted(TRANSCRIPTS.glob("*.jsonl"))
    assert {f.stem for f in files} == {*SCENARIOS, V2_SCENARIO}
    for path in files:
        for line in path.read_text().splitlines():
            entry = json.loads(line)
            assert entry["dir"] in ("c2a", "a2c")
            assert entry["msg"]["jsonrpc"] == "2.0"
