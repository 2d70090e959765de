"""The tutorial's agent and client (examples/tutorial_*.py) against each other, over pipes.

Also the one-call runners they use: ``run_agent`` answers the turns in flight when stdin
closes and exits quietly with status 0 on SIGINT/SIGTERM; ``connect_to_agent`` spawns.
"""

from __future__ import annotations

import json
import signal
import subprocess
import sys
from pathlib import Path

import anyio
import pytest

from acp_generated import v1
from acp_generated.v1 import builders as b
from acp_runtime import Connection, RequestError, Responder, connect_to_agent

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
AGENT = [sys.executable, str(EXAMPLES / "tutorial_agent.py")]
sys.path.insert(0, str(EXAMPLES))

from tutorial_client import prompt_once  # noqa: E402


@pytest.fixture
def notes(tmp_path: Path) -> Path:
    path = tmp_path / "notes.txt"
    path.write_text("one\ntwo\n", encoding="utf-8")
    return path


@pytest.mark.anyio
@pytest.mark.parametrize("allow", [True, False], ids=["allow", "reject"])
async def test_tutorial_client_against_tutorial_agent(
    notes: Path, allow: bool, capsys: pytest.CaptureFixture[str]
) -> None:
    with anyio.fail_after(30):
        stop_reason = await prompt_once(str(notes), AGENT, allow)
    out = capsys.readouterr().out
    if allow:
        assert stop_reason == "end_turn"
        assert f"{notes} has 2 lines." in out
        assert out.index(": pending]") < out.index(": in_progress]") < out.index(": completed]")
    else:
        assert stop_reason == "refusal"
        assert "failed]" in out and "lines" not in out


class HoldingClient(v1.ClientHandler):
    """Parks the permission request until the agent cancels it."""

    def __init__(self) -> None:
        self.asked = anyio.Event()
        self.withdrawn = anyio.Event()

    async def session_update(self, params: v1.SessionNotification, cx: Connection) -> None:
        pass

    async def request_permission(
        self,
        params: v1.RequestPermissionRequest,
        responder: Responder[v1.RequestPermissionResponse],
    ) -> None:
        self.asked.set()
        responder.connection.spawn(self._hold, responder)

    async def _hold(self, responder: Responder[v1.RequestPermissionResponse]) -> None:
        await responder.cancellation.cancelled()
        self.withdrawn.set()
        cancelled = v1.CancelledRequestPermissionOutcome(outcome="cancelled")
        responder.respond(v1.RequestPermissionResponse(outcome=cancelled))


READS_FILES = v1.ClientCapabilities(fs=v1.FileSystemCapabilities(read_text_file=True))


async def started_turn(
    cx: Connection, notes: Path, capabilities: v1.ClientCapabilities = READS_FILES
) -> tuple[v1.RemoteAgent, str]:
    agent = v1.RemoteAgent(cx)
    await agent.initialize(protocol_version=1, client_capabilities=capabilities)
    session = await agent.new_session(cwd=str(notes.parent), mcp_servers=[])
    return agent, session.session_id


class TextOnlyClient(v1.ClientHandler):
    """A client that declares no file system: it only shows what the agent says."""

    def __init__(self) -> None:
        self.said: list[str] = []

    async def session_update(self, params: v1.SessionNotification, cx: Connection) -> None:
        update = params.update
        if isinstance(update, v1.AgentMessageChunkSessionUpdate) and isinstance(
            update.content, v1.TextContentBlock
        ):
            self.said.append(update.content.text)


@pytest.mark.anyio
async def test_on_a_client_without_read_text_file_the_turn_ends_saying_so(notes: Path) -> None:
    """Issue 33: the agent checks the capability before it reads, instead of relaying the
    client's -32601 as the answer to session/prompt."""
    client = TextOnlyClient()
    async with connect_to_agent(AGENT, client) as cx:
        agent, sid = await started_turn(cx, notes, v1.ClientCapabilities())
        with anyio.fail_after(30):
            response = await agent.prompt(session_id=sid, prompt=[b.text(text=str(notes))])
    assert response.stop_reason == "end_turn"
    assert "does not let me read files" in "".join(client.said)


@pytest.mark.anyio
async def test_session_cancel_ends_the_turn_cancelled_and_withdraws_the_permission(
    notes: Path,
) -> None:
    client = HoldingClient()
    async with connect_to_agent(AGENT, client) as cx:
        agent, sid = await started_turn(cx, notes)
        with anyio.fail_after(30):
            turn = agent.prompt(session_id=sid, prompt=[b.text(text=str(notes))])
            async with anyio.create_task_group() as tg:

                async def cancel_when_asked() -> None:
                    await client.asked.wait()
                    await agent.cancel(session_id=sid)

                tg.start_soon(cancel_when_asked)
                response = await turn
            await client.withdrawn.wait()
    assert response.stop_reason == "cancelled"


@pytest.mark.anyio
async def test_cancel_request_alone_also_ends_the_turn_cancelled(notes: Path) -> None:
    """``$/cancel_request`` for the prompt ends the turn as ``session/cancel`` does: with
    stop reason ``cancelled`` (it answered -32800 before issue 33). A client cancelling a
    prompt sends both, so the two answers raced; now either one gives the same answer."""
    client = HoldingClient()
    async with connect_to_agent(AGENT, client) as cx:
        agent, sid = await started_turn(cx, notes)
        with anyio.fail_after(30):
            turn = agent.prompt(session_id=sid, prompt=[b.text(text=str(notes))])
            async with anyio.create_task_group() as tg:

                async def abort_when_asked() -> None:
                    await client.asked.wait()
                    # $/cancel_request alone (turn.cancel() also sends session/cancel)
                    cx.send_cancel_request(turn.id)

                tg.start_soon(abort_when_asked)
                response = await turn
            await client.withdrawn.wait()
    assert response.stop_reason == "cancelled"


@pytest.mark.anyio
async def test_cancel_after_takes_the_turns_real_answer(notes: Path) -> None:
    """The tutorial client's pattern: wait, cancel (both notifications), keep the answer."""
    for _ in range(5):  # the two cancellations once raced (-32800 about 1 run in 8)
        client = HoldingClient()
        async with connect_to_agent(AGENT, client) as cx:
            agent, sid = await started_turn(cx, notes)
            with anyio.fail_after(30):
                turn = agent.prompt(session_id=sid, prompt=[b.text(text=str(notes))])
                response = await turn.cancel_after(0.2)
        assert response.stop_reason == "cancelled"


class RecordingClient(TextOnlyClient):
    """Keeps every update (the replay of ``session/load`` included)."""

    def __init__(self) -> None:
        super().__init__()
        self.updates: list[v1.SessionUpdate] = []

    async def session_update(self, params: v1.SessionNotification, cx: Connection) -> None:
        self.updates.append(params.update)
        await super().session_update(params, cx)


@pytest.mark.anyio
async def test_load_session_replays_the_history_before_answering(notes: Path) -> None:
    client = RecordingClient()
    async with connect_to_agent(AGENT, client) as cx:
        agent = v1.RemoteAgent(cx)
        hello = await agent.initialize(
            protocol_version=1, client_capabilities=v1.ClientCapabilities()
        )
        assert hello.agent_capabilities.load_session
        session = await agent.new_session(cwd=str(notes.parent), mcp_servers=[])
        with anyio.fail_after(30):
            await agent.prompt(session_id=session.session_id, prompt=[b.text(text="hi")])
            first = list(client.updates)
            client.updates.clear()
            await agent.load_session(session_id=session.session_id, cwd="/", mcp_servers=[])
    assert first and client.updates == [b.user_message_chunk(content=b.text(text="hi")), *first]


@pytest.mark.anyio
async def test_an_unknown_session_is_invalid_params_naming_it(notes: Path) -> None:
    async with connect_to_agent(AGENT, TextOnlyClient()) as cx:
        agent, _ = await started_turn(cx, notes)
        with anyio.fail_after(30), pytest.raises(RequestError) as caught:
            await agent.prompt(session_id="nope", prompt=[b.text(text="hi")])
        with pytest.raises(RequestError) as loading:
            await agent.load_session(session_id="nope", cwd="/", mcp_servers=[])
    assert caught.value.code == loading.value.code == -32602
    assert caught.value.data == "Unknown session 'nope'"


# -- run_agent as a process ------------------------------------------------------------


def line(message: dict[str, object]) -> bytes:
    return (json.dumps(message) + "\n").encode()


INITIALIZE = line(
    {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": 1}}
)


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
def test_run_agent_exits_quietly_with_status_0_on_a_stop_signal(signum: int) -> None:
    with subprocess.Popen(
        AGENT, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE
    ) as agent:
        assert agent.stdin is not None and agent.stdout is not None and agent.stderr is not None
        agent.stdin.write(INITIALIZE)
        agent.stdin.flush()
        assert json.loads(agent.stdout.readline())["id"] == 1  # up and serving
        agent.send_signal(signum)
        assert agent.wait(timeout=10) == 0
        stderr = agent.stderr.read().decode()
    assert "Traceback" not in stderr and "KeyboardInterrupt" not in stderr


def test_run_agent_answers_the_turn_in_flight_when_stdin_closes(tmp_path: Path) -> None:
    """EOF mid-turn: the prompt still gets its answer before the agent exits 0 (here an
    error, since the client it would ask can no longer answer)."""
    prompt = {"sessionId": "session-1", "prompt": [{"type": "text", "text": "/x"}]}
    messages = [
        INITIALIZE,
        line(
            {
                "jsonrpc": "2.0",
                "id": 2,
                "method": "session/new",
                "params": {"cwd": "/", "mcpServers": []},
            }
        ),
        line({"jsonrpc": "2.0", "id": 3, "method": "session/prompt", "params": prompt}),
    ]
    done = subprocess.run(AGENT, input=b"".join(messages), capture_output=True, timeout=30)
    answers = [json.loads(text) for text in done.stdout.splitlines()]
    assert done.returncode == 0
    [answer] = [a for a in answers if a.get("id") == 3 and "method" not in a]
    assert "result" in answer or "error" in answer
