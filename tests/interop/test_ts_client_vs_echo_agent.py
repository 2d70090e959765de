"""TypeScript SDK client -> examples/echo_agent.py over real pipes.

Every scenario must give the TS client exactly the events the TS SDK's own agent
(peers/agent.mjs) gives it, and the key behaviours are also asserted directly, so a
mistake shared by both agents cannot pass unnoticed.
"""

from __future__ import annotations

from typing import Any

import pytest

from .conftest import ScenarioRuns
from .node_peers import Event
from .scenarios import NOTES_TEXT, SCENARIOS, WORKSPACE

# The TS client's scenario runs are cached per process (conftest.ScenarioRuns)
pytestmark = pytest.mark.xdist_group("interop-scenario-runs")


def comparable(events: list[Event]) -> list[Event]:
    """Events without the agent's self-description, the one field allowed to differ."""
    return [
        {"event": "initialize", "protocolVersion": e["result"]["protocolVersion"]}
        if e["event"] == "initialize"
        else e
        for e in events
    ]


def texts(events: list[Event]) -> list[str]:
    return [
        e["update"]["content"]["text"]
        for e in events
        if e["event"] == "update" and e["update"]["sessionUpdate"] == "agent_message_chunk"
    ]


def outcome(events: list[Event], label: str) -> dict[str, Any]:
    [settled] = [e for e in events if e.get("as") == label]
    return settled


@pytest.mark.parametrize("name", sorted(SCENARIOS))
def test_same_events_as_the_ts_agent(
    ts_agent_runs: ScenarioRuns, echo_agent_runs: ScenarioRuns, name: str
) -> None:
    expected = ts_agent_runs.events(name)
    assert comparable(echo_agent_runs.events(name)) == comparable(expected)


def test_prompt_streaming(echo_agent_runs: ScenarioRuns) -> None:
    events = echo_agent_runs.events("v1_prompt_streaming")
    assert events[1] == {"event": "session", "sessionId": "sess-1"}
    chunks = texts(events)
    assert "".join(chunks[:3]) == "hello from the client" and len(chunks[0]) > 0
    assert chunks[3:7] == [f"chunk {i}\n" for i in range(4)]
    assert chunks[7:9] == ["x" * 16] * 2
    assert "".join(chunks[9:]) == "two blocks"
    assert outcome(events, "request-5")["result"] == {"pong": {"n": 1, "tags": ["a", "b"]}}
    assert events[-2:] == [{"event": "agent_exit", "code": 0, "signal": None}, {"event": "done"}]


def test_permission_selected(echo_agent_runs: ScenarioRuns) -> None:
    events = echo_agent_runs.events("v1_permission")
    [request] = [e for e in events if e["event"] == "permission_request"]
    assert [o["optionId"] for o in request["params"]["options"]] == ["allow", "reject"]
    assert texts(events) == ["permission:selected:allow"]
    assert outcome(events, "prompt-1")["result"] == {"stopReason": "end_turn"}


def test_fs_read_text_file(echo_agent_runs: ScenarioRuns) -> None:
    events = echo_agent_runs.events("v1_fs_read")
    reads = [e["path"] for e in events if e["event"] == "read_text_file"]
    assert reads == [f"{WORKSPACE}/notes.txt", f"{WORKSPACE}/missing.txt"]
    assert texts(events)[0] == NOTES_TEXT
    assert texts(events)[1].startswith("read-error:-32002:")


def test_session_cancel_ends_the_turn_with_cancelled(echo_agent_runs: ScenarioRuns) -> None:
    events = echo_agent_runs.events("v1_session_cancel")
    assert outcome(events, "sleep")["result"] == {"stopReason": "cancelled"}
    assert "".join(texts(events)) == "after cancel"


def test_ts_abort_signal_cancels_the_python_request(echo_agent_runs: ScenarioRuns) -> None:
    events = echo_agent_runs.events("v1_cancel_request")
    assert outcome(events, "sleep")["error"]["code"] == -32800
    assert texts(events) == ["slept 1"]


def test_python_agent_cancels_its_permission_request_to_the_ts_client(
    echo_agent_runs: ScenarioRuns,
) -> None:
    events = echo_agent_runs.events("v1_permission_cancelled_by_agent")
    names = [e["event"] for e in events]
    # The TS client only answers a held request once its AbortSignal fired, which
    # happens when $/cancel_request for it arrives from the Python agent.
    assert names.index("permission_request") < names.index("permission_cancel_request")
    assert texts(events) == ["permission:cancelled"]
    assert outcome(events, "turn")["result"] == {"stopReason": "cancelled"}


def test_prompt_error(echo_agent_runs: ScenarioRuns) -> None:
    events = echo_agent_runs.events("v1_prompt_error")
    assert outcome(events, "prompt-1")["error"] == {"code": -32042, "message": "custom failure"}
    assert outcome(events, "prompt-2")["error"]["code"] == 1
