"""The committed transcripts are what the pinned TypeScript SDK really sends today."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from node_peers import REPO_ROOT, run_ts_client, ts_agent_command
from scenarios import SCENARIOS, scenario_with_cwd

TRANSCRIPTS = REPO_ROOT / "tests" / "corpus" / "transcripts"


@pytest.mark.parametrize("name", sorted(SCENARIOS))
def test_transcript_matches_fresh_capture(node: str, name: str, tmp_path: Path) -> None:
    fresh = tmp_path / f"{name}.jsonl"
    run_ts_client(ts_agent_command("--quiet"), scenario_with_cwd(name), transcript=fresh)
    committed = TRANSCRIPTS / f"{name}.jsonl"
    assert fresh.read_text() == committed.read_text(), (
        "regenerate with tests/interop/capture_transcripts.py"
    )


def test_every_transcript_line_is_a_jsonrpc_message() -> None:
    files = sorted(TRANSCRIPTS.glob("*.jsonl"))
    assert {f.stem for f in files} == set(SCENARIOS)
    for path in files:
        for line in path.read_text().splitlines():
            entry = json.loads(line)
            assert entry["dir"] in ("c2a", "a2c")
            assert entry["msg"]["jsonrpc"] == "2.0"
