"""Regenerate tests/corpus/transcripts/: TS SDK client <-> TS SDK agent, every wire message.

Run: ``.venv/bin/python tests/interop/capture_transcripts.py`` (needs node; installs the
pinned npm packages on first use). Each scenario of ``scenarios.py`` becomes one
``<name>.jsonl`` file whose lines are ``{"dir": "c2a" | "a2c", "msg": <JSON-RPC message>}``
in the order the client saw them. The codegen round-trip tests read these files.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from node_peers import (
    REPO_ROOT,
    ensure_node_modules,
    node_executable,
    run_ts_client,
    ts_agent_command,
)
from scenarios import SCENARIOS, scenario_with_cwd

TRANSCRIPTS_DIR = REPO_ROOT / "tests" / "corpus" / "transcripts"


def main() -> int:
    if node_executable() is None:
        print("node is not installed", file=sys.stderr)
        return 1
    ensure_node_modules()
    TRANSCRIPTS_DIR.mkdir(parents=True, exist_ok=True)
    for name in SCENARIOS:
        target = TRANSCRIPTS_DIR / f"{name}.jsonl"
        events = run_ts_client(
            ts_agent_command("--quiet"), scenario_with_cwd(name), transcript=target
        )
        lines = target.read_text().count("\n")
        print(f"{target.relative_to(REPO_ROOT)}: {lines} messages, {len(events)} client events")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
