"""The tutorial's agent (examples/tutorial_agent.py) under the TypeScript SDK's client.

The realistic agent of issue #15: streamed chunks, a tool call and its updates, a
permission request, a file read through the client, and both cancellations.
"""

from __future__ import annotations

import sys
from typing import Any

import pytest

from .node_peers import REPO_ROOT, Event, run_ts_client

AGENT = [sys.executable, str(REPO_ROOT / "examples" / "tutorial_agent.py")]
PYPI_AGENT = [sys.executable, str(REPO_ROOT / "bench" / "authoring" / "pypi_agent.py")]
"""The same agent on the PyPI package, whose line count the notes compare (no $/cancel_request)."""
FILE = "/workspace/notes.txt"
FILES = {FILE: "one\ntwo\nthree\n"}


def run(node: str, agent: list[str] = AGENT, **scenario: Any) -> list[Event]:
    return run_ts_client(agent, {"files": FILES, **scenario})


def chunks(events: list[Event]) -> str:
    return "".join(
        e["update"]["content"]["text"]
        for e in events
        if e["event"] == "update" and e["update"]["sessionUpdate"] == "agent_message_chunk"
    )


def tool_statuses(events: list[Event]) -> list[str]:
    return [
        e["update"].get("status", "-")
        for e in events
        if e["event"] == "update" and e["update"]["sessionUpdate"].startswith("tool_call")
    ]


def settled(events: list[Event], label: str) -> Event:
    [event] = [e for e in events if e.get("as") == label]
    return event


AGENTS = pytest.mark.parametrize("agent", [AGENT, PYPI_AGENT], ids=["ours", "pypi"])


@AGENTS
def test_allowed_read_streams_the_line_count(node: str, agent: list[str]) -> None:
    events = run(node, agent, permission="allow", steps=[{"op": "prompt", "text": FILE, "as": "p"}])
    assert settled(events, "p")["result"] == {"stopReason": "end_turn"}
    assert chunks(events) == f"Let me read {FILE}. {FILE} has 3 lines. "
    assert tool_statuses(events) == ["pending", "in_progress", "completed"]
    assert [e["path"] for e in events if e["event"] == "read_text_file"] == [FILE]
    assert events[-2] == {"event": "agent_exit", "code": 0, "signal": None}


@AGENTS
def test_rejected_read_is_a_refusal_without_reading(node: str, agent: list[str]) -> None:
    events = run(
        node, agent, permission="reject", steps=[{"op": "prompt", "text": FILE, "as": "p"}]
    )
    assert settled(events, "p")["result"] == {"stopReason": "refusal"}
    assert tool_statuses(events) == ["pending", "failed"]
    assert not [e for e in events if e["event"] == "read_text_file"]


def test_session_cancel_stops_the_turn_and_cancels_its_permission_request(node: str) -> None:
    """Ours only: the PyPI agent's permission request is not cancelled on the wire."""
    steps = [
        {"op": "prompt", "text": FILE, "as": "p", "wait": False},
        {"op": "wait_event", "event": "permission_request"},
        {"op": "cancel"},
        {"op": "await", "target": "p"},
    ]
    events = run(node, permission="hold", steps=steps)
    assert settled(events, "p")["result"] == {"stopReason": "cancelled"}
    assert [e for e in events if e["event"] == "permission_cancel_request"]  # hop by hop
    assert tool_statuses(events)[-1] == "failed"


def test_cancel_request_alone_also_ends_the_turn_cancelled(node: str) -> None:
    """The SDK's abort sends only ``$/cancel_request``: the turn ends as on ``session/cancel``,
    with stop reason ``cancelled`` (it answered -32800 before issue 33, which raced with the
    ``cancelled`` answer when a client sent both)."""
    steps = [
        {"op": "prompt", "text": FILE, "as": "p", "wait": False},
        {"op": "wait_event", "event": "permission_request"},
        {"op": "abort", "target": "p"},
        {"op": "await", "target": "p"},
    ]
    events = run(node, permission="hold", steps=steps)
    assert settled(events, "p")["result"] == {"stopReason": "cancelled"}
    assert [e for e in events if e["event"] == "permission_cancel_request"]
