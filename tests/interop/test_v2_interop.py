"""Protocol v2: the TypeScript SDK's v2 client (experimental entry point, which validates
every message against its v2 schema) drives examples/v2_agent.py over real pipes."""

from __future__ import annotations

import json
import subprocess
import sys

from .node_peers import PEERS_DIR, REPO_ROOT, Event

V2_AGENT = [sys.executable, str(REPO_ROOT / "examples" / "v2_agent.py"), "--quiet"]


def run_v2_client(node: str, prompt: str, long_prompt: str) -> list[Event]:
    done = subprocess.run(
        [node, str(PEERS_DIR / "v2_client.mjs"), prompt, long_prompt, "--", *V2_AGENT],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    return [json.loads(line) for line in done.stdout.splitlines()]


def test_ts_v2_client_sees_accepted_then_idle_and_cancels_with_session_cancel(node: str) -> None:
    events = run_v2_client(node, "hello v2 from ts", "sleep 20000")
    assert events[0]["result"]["protocolVersion"] == 2
    responses = [e["result"] for e in events if e["event"] == "prompt_response"]
    assert responses == [{"messageId": "user-1"}, {"messageId": "user-3"}]
    updates = [e["update"] for e in events if e["event"] == "update"]
    chunks = [u["content"]["text"] for u in updates if u["sessionUpdate"] == "agent_message_chunk"]
    assert "".join(chunks) == "hello v2 from ts"
    states = [
        (u["state"], u.get("stopReason")) for u in updates if u["sessionUpdate"] == "state_update"
    ]
    assert states == [
        ("running", None),
        ("idle", "end_turn"),
        ("running", None),
        ("idle", "cancelled"),
    ]
    inserted = [u["messageId"] for u in updates if u["sessionUpdate"] == "user_message"]
    assert inserted == ["user-1", "user-3"]
    assert events[-2:] == [{"event": "agent_exit", "code": 0, "signal": None}, {"event": "done"}]
