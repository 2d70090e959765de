"""Regenerate tests/corpus/transcripts/: TS SDK client <-> TS SDK agent, every wire message.

Run: ``.venv/bin/python tests/interop/capture_transcripts.py`` (needs node; installs the
pinned npm packages on first use). Each v1 scenario of ``scenarios.py`` (peers/client.mjs
against peers/agent.mjs), and the v2 prompt lifecycle (peers/v2_client.mjs against
peers/v2_agent.mjs), becomes one ``<name>.jsonl`` file whose lines are
``{"dir": "c2a" | "a2c", "msg": <JSON-RPC message>}`` in the order the client saw them.
The codegen round-trip tests read these files.
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
    run_ts_v2_client,
    ts_agent_command,
    ts_v2_agent_command,
)
from scenarios import (
    SCENARIOS,
    V2_LONG_PROMPT,
    V2_PROMPT,
    V2_SCENARIO,
    WORKSPACE,
    scenario_with_cwd,
)

TRANSCRIPTS_DIR = REPO_ROOT / "tests" / "corpus" / "transcripts"


def capture(name: str, target: Path) -> None:
    """Run the named scenario between the TS peers, recording it to `target`."""
    if name == V2_SCENARIO:
        agent = ts_v2_agent_command("--quiet")
        run_ts_v2_client(agent, V2_PROMPT, V2_LONG_PROMPT, cwd=WORKSPACE, transcript=target)
    else:
        run_ts_client(ts_agent_command("--quiet"), scenario_with_cwd(name), transcript=target)


def main() -> int:
    if node_executable() is None:
        print("node is not installed", file=sys.stderr)
        return 1
    ensure_node_modules()
    TRANSCRIPTS_DIR.mkdir(parents=True, exist_ok=True)
    for name in [*SCENARIOS, V2_SCENARIO]:
        target = TRANSCRIPTS_DIR / f"{name}.jsonl"
        capture(name, target)
        lines = target.read_text().count("\n")
        print(f"{target.relative_to(REPO_ROOT)}: {lines} messages")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
