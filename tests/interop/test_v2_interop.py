"""Protocol v2 over real pipes, in both directions: the TypeScript SDK's v2 client
(experimental entry point, which validates every message against its v2 schema) drives
examples/v2_agent.py, and the Python SDK's v2 client drives the TypeScript v2 agent."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import anyio
import pytest

from acp_generated.v2 import (
    AgentMessageChunkSessionUpdate,
    CancelSessionNotification,
    ClientHandler,
    Implementation,
    InitializeRequest,
    NewSessionRequest,
    PromptRequest,
    RunningStateUpdateSessionUpdate,
    SessionUpdate,
    TextContentBlock,
    UpdateSessionNotification,
    UserMessageSessionUpdate,
)
from acp_runtime import Connection, ConnectionBuilder, spawn_agent

from .node_peers import Event, run_ts_v2_client, ts_v2_agent_command, v2_agent_command
from .scenarios import V2_LONG_PROMPT, V2_PROMPT, WORKSPACE


def by_kind(events: list[Event]) -> dict[str, list[object]]:
    """What the TS client saw, per kind: the response/update interleaving may vary."""
    updates = [e["update"] for e in events if e["event"] == "update"]
    return {
        "responses": [e["result"] for e in events if e["event"] == "prompt_response"],
        "inserted": [u["messageId"] for u in updates if u["sessionUpdate"] == "user_message"],
        "chunks": [
            u["content"]["text"] for u in updates if u["sessionUpdate"] == "agent_message_chunk"
        ],
        "states": [
            (u["state"], u.get("stopReason"))
            for u in updates
            if u["sessionUpdate"] == "state_update"
        ],
        "exit": [e for e in events if e["event"] == "agent_exit"],
    }


@pytest.mark.parametrize("agent", [v2_agent_command, ts_v2_agent_command], ids=["python", "ts"])
def test_ts_v2_client_sees_accepted_then_idle_and_cancels_with_session_cancel(
    node: str, agent: Callable[..., list[str]]
) -> None:
    events = run_ts_v2_client(agent("--quiet"), V2_PROMPT, V2_LONG_PROMPT, cwd=WORKSPACE)
    assert events[0]["result"]["protocolVersion"] == 2
    assert by_kind(events) == {
        "responses": [{"messageId": "user-1"}, {"messageId": "user-3"}],
        "inserted": ["user-1", "user-3"],
        "chunks": ["hello", " v2", " from", " ts"],
        "states": [
            ("running", None),
            ("idle", "end_turn"),
            ("running", None),
            ("idle", "cancelled"),
        ],
        "exit": [{"event": "agent_exit", "code": 0, "signal": None}],
    }


class StateRecorder(ClientHandler):
    def __init__(self) -> None:
        self.updates: list[SessionUpdate] = []
        self.running = anyio.Event()
        self.idle = anyio.Event()

    async def session_update(self, params: UpdateSessionNotification, cx: Connection) -> None:
        self.updates.append(params.update)
        if isinstance(params.update, RunningStateUpdateSessionUpdate):
            self.running.set()
        elif getattr(params.update, "state", None) == "idle":
            self.idle.set()

    def next_turn(self) -> None:
        self.running, self.idle = anyio.Event(), anyio.Event()


async def run_v2_turns(agent: list[str], protocol_version: int = 2) -> StateRecorder:
    """Python v2 client against ``agent``: initialize (asking for ``protocol_version``),
    session/new, a prompt run to idle, then a long one stopped with session/cancel.
    Checks the answers; returns what the client recorded."""
    recorder = StateRecorder()
    builder = ConnectionBuilder(role="client")
    recorder.attach(builder)
    async with spawn_agent(agent, stderr="discard") as process, builder.connect(process) as cx:
        with anyio.fail_after(15):  # includes Node's start
            init = await cx.send_request(
                InitializeRequest(
                    protocol_version=protocol_version, info=Implementation(name="t", version="1")
                )
            )
            sid = (await cx.send_request(NewSessionRequest(cwd=str(Path.cwd())))).session_id
        with anyio.fail_after(5):
            text = [TextContentBlock(type="text", text="typed v2 updates")]
            accepted = await cx.send_request(PromptRequest(session_id=sid, prompt=text))
            await recorder.idle.wait()
            recorder.next_turn()
            long = [TextContentBlock(type="text", text=V2_LONG_PROMPT)]
            await cx.send_request(PromptRequest(session_id=sid, prompt=long))
            await recorder.running.wait()
            cx.send_notification(CancelSessionNotification(session_id=sid))
            await recorder.idle.wait()
    assert init.protocol_version == 2
    assert accepted.message_id == "user-1"
    return recorder


def check_v2_turns(recorder: StateRecorder) -> None:
    """The updates of :func:`run_v2_turns`: two inserted prompts, the echo, both idles."""
    inserted = [u for u in recorder.updates if isinstance(u, UserMessageSessionUpdate)]
    assert [u.message_id for u in inserted] == ["user-1", "user-3"]
    chunks = [u for u in recorder.updates if isinstance(u, AgentMessageChunkSessionUpdate)]
    assert "".join(c.content.text for c in chunks if isinstance(c.content, TextContentBlock)) == (
        "typed v2 updates"
    )
    stop_reasons = [getattr(u, "stop_reason", None) for u in recorder.updates]
    assert [r for r in stop_reasons if r] == ["end_turn", "cancelled"]


@pytest.mark.anyio
async def test_python_v2_client_against_the_ts_v2_agent(node: str) -> None:
    check_v2_turns(await run_v2_turns(ts_v2_agent_command("--quiet")))
