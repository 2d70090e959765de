"""The committed transcripts are what the pinned TypeScript SDK really sends today."""

from __future__ import annotations

import json

import pytest

from .conftest import ScenarioRuns
from .node_peers import REPO_ROOT
from .scenarios import SCENARIOS

TRANSCRIPTS = REPO_ROOT / "tests" / "corpus" / "transcripts"


@pytest.mark.parametrize("name", sorted(SCENARIOS))
def test_transcript_matches_fresh_capture(ts_agent_runs: ScenarioRuns, name: str) -> None:
    _, fresh = ts_agent_runs.run(name)
    committed = (TRANSCRIPTS / f"{name}.jsonl").read_text()
    assert fresh == committed, "regenerate with tests/interop/capture_transcripts.py"


def test_every_transcript_line_is_a_jsonrpc_message() -> None:
    files = sorted(TRANSCRIPTS.glob("*.jsonl"))
    assert {f.stem for f in files} == set(SCENARIOS)
    for path in files:
        for line in path.read_text().splitlines():
            entry = json.loads(line)
            assert entry["dir"] in ("c2a", "a2c")
            assert entry["msg"]["jsonrpc"] == "2.0"
