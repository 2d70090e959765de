"""The example programs, run as a user runs them."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from .node_peers import REPO_ROOT, echo_agent_command, ts_agent_command

CLIENT = REPO_ROOT / "examples" / "client.py"
Message = dict[str, Any]


def run_client(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(CLIENT), *args], capture_output=True, text=True, timeout=60
    )


def check_demo_output(out: str) -> None:
    assert "-> session/new: sess-1" in out
    assert "   agent: Hello from the Python ACP SDK!" in out
    assert "   [plan] [completed] echo the prompt" in out
    assert "   [permission] 'Echo permission': answering 'Allow'" in out
    assert "   agent: permission:selected:allow" in out
    assert "session/cancel after 0.3s\n   <- stopReason cancelled" in out
    assert "$/cancel_request after 0.3s\n   <- error -32800 Request cancelled" in out


def test_make_demo_command_exits_0_with_streaming_and_both_cancellations() -> None:
    done = run_client("--", *echo_agent_command())
    assert done.returncode == 0, done.stderr
    check_demo_output(done.stdout)


def test_example_client_drives_the_typescript_agent(node: str) -> None:
    done = run_client("--", *ts_agent_command("--quiet"))
    assert done.returncode == 0, done.stderr
    check_demo_output(done.stdout)


def exchange(lines: list[Message], *args: str, env: dict[str, str] | None = None) -> list[Message]:
    """Write `lines` to the echo agent's stdin, close it, and return its answers."""
    done = subprocess.run(
        echo_agent_command("--quiet", *args),
        input="".join(json.dumps(line) + "\n" for line in lines),
        capture_output=True,
        text=True,
        timeout=30,
        env={**os.environ, **(env or {})},
    )
    assert done.returncode == 0, done.stderr
    return [json.loads(line) for line in done.stdout.splitlines()]


def request(id_: int, method: str, params: Message) -> Message:
    return {"jsonrpc": "2.0", "id": id_, "method": method, "params": params}


def prompt(id_: int, text: str) -> Message:
    params = {"sessionId": "sess-1", "prompt": [{"type": "text", "text": text}]}
    return request(id_, "session/prompt", params)


INIT = [
    request(0, "initialize", {"protocolVersion": 1}),
    request(1, "session/new", {"cwd": "/tmp", "mcpServers": []}),
]


def test_echo_agent_answers_in_flight_prompts_after_stdin_eof() -> None:
    replies = exchange([*INIT, prompt(2, "sleep 300"), prompt(3, "sleep-ignore 200")])
    answers = {r["id"]: r for r in replies if "id" in r}
    assert answers[2]["result"] == {"stopReason": "end_turn"}
    assert answers[3]["result"] == {"stopReason": "end_turn"}
    chunks = [r["params"]["update"]["content"]["text"] for r in replies if "method" in r]
    assert chunks == ["slept 300"]


@pytest.mark.parametrize(
    ("args", "env"),
    [(("--max-message-bytes", "1000"), None), ((), {"ECHO_AGENT_MAX_MESSAGE_BYTES": "1000"})],
)
def test_echo_agent_max_message_bytes(args: tuple[str, ...], env: dict[str, str] | None) -> None:
    big = request(2, "_echo/ping", {"pad": "x" * 2000})
    small = request(3, "_echo/ping", {"pad": "ok"})
    replies = exchange([*INIT, big, small], *args, env=env)
    assert [r["error"]["code"] for r in replies if "error" in r] == [-32600]
    assert replies[-1] == {"jsonrpc": "2.0", "id": 3, "result": {"pong": {"pad": "ok"}}}


def test_v2_pair_shows_accepted_then_idle_and_session_cancel() -> None:
    agent = [sys.executable, str(REPO_ROOT / "examples" / "v2_agent.py"), "--quiet"]
    done = subprocess.run(
        [sys.executable, str(REPO_ROOT / "examples" / "v2_client.py"), "--", *agent],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0] == "-> initialize: python-v2-agent 1.0.0, protocol 2"
    first_turn = lines[: lines.index("   [state] idle, stopReason end_turn")]
    # The response (accepted) and the streamed chunks race on the client: both orders are fine.
    assert "   <- accepted as user-1 (the turn goes on)" in first_turn
    streamed = "".join(line.removeprefix("   agent: ") for line in first_turn if "agent: " in line)
    assert streamed.split() == "Version two streams, then goes idle".split()
    assert lines[-1] == "   [state] idle, stopReason cancelled"


TYPED_EXAMPLES = [
    str(REPO_ROOT / "examples" / name)
    for name in (
        "echo_agent.py",
        "client.py",
        "v2_agent.py",
        "v2_client.py",
        "tutorial_agent.py",
        "tutorial_client.py",
    )
]


def test_examples_pass_mypy_strict() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "mypy", "--strict", *TYPED_EXAMPLES],
        cwd=REPO_ROOT,
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stdout + done.stderr


def test_examples_pass_pyright_strict() -> None:
    pyright = Path(sys.executable).with_name("pyright")
    done = subprocess.run(
        [str(pyright), "--pythonpath", sys.executable, *TYPED_EXAMPLES],
        cwd=REPO_ROOT,
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stdout + done.stderr
