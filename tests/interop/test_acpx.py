"""The acpx CLI (npm `acpx`, pinned in package.json) driving examples/echo_agent.py.

acpx prints every JSON-RPC message it sends or receives as one JSON line with
``--format json``; ``exec`` is its one-shot mode (no saved session). On SIGINT during
a prompt it sends ``session/cancel`` and waits for the turn to end.
"""

from __future__ import annotations

import json
import os
import shlex
import signal
import subprocess
from pathlib import Path
from typing import Any

import anyio
import pytest
from anyio.streams.text import TextReceiveStream

from .node_peers import ACPX_BIN, echo_agent_command

Message = dict[str, Any]


def acpx_command(node: str, *args: str) -> list[str]:
    agent = shlex.join(echo_agent_command("--quiet"))
    return [node, str(ACPX_BIN), "--agent", agent, "--format", "json", *args]


def isolated_env(home: Path) -> dict[str, str]:
    """Our environment with HOME moved, so acpx keeps no state in the real home."""
    return {**os.environ, "HOME": str(home)}


def chunk_texts(messages: list[Message]) -> list[str]:
    return [
        m["params"]["update"]["content"]["text"]
        for m in messages
        if m.get("method") == "session/update"
    ]


def prompt_result(messages: list[Message]) -> Message:
    [prompt] = [m for m in messages if m.get("method") == "session/prompt"]
    [answer] = [m for m in messages if m.get("id") == prompt["id"] and "method" not in m]
    return answer


def test_one_shot_prompt(node: str, tmp_path: Path) -> None:
    done = subprocess.run(
        acpx_command(node, "--approve-all", "exec", "hello from acpx"),
        capture_output=True,
        text=True,
        timeout=60,
        cwd=tmp_path,
        env=isolated_env(tmp_path),
    )
    assert done.returncode == 0, done.stderr
    messages = [json.loads(line) for line in done.stdout.splitlines()]
    assert "".join(chunk_texts(messages)) == "hello from acpx"
    assert prompt_result(messages)["result"] == {"stopReason": "end_turn"}


@pytest.mark.anyio
async def test_sigint_cancels_the_prompt_with_session_cancel(node: str, tmp_path: Path) -> None:
    messages: list[Message] = []
    with anyio.fail_after(30):
        async with await anyio.open_process(
            acpx_command(node, "exec", "sleep 20000"),
            cwd=tmp_path,
            env=isolated_env(tmp_path),
            stderr=subprocess.DEVNULL,
        ) as process:
            assert process.stdout is not None
            buffer = ""
            async for text in TextReceiveStream(process.stdout):
                buffer += text
                *lines, buffer = buffer.split("\n")
                for line in lines:
                    message = json.loads(line)
                    messages.append(message)
                    if message.get("method") == "session/prompt":
                        process.send_signal(signal.SIGINT)  # the user presses Ctrl-C
            returncode = await process.wait()
    methods = [m.get("method") for m in messages]
    assert methods.index("session/prompt") < methods.index("session/cancel")
    assert prompt_result(messages)["result"] == {"stopReason": "cancelled"}
    assert chunk_texts(messages) == []
    assert returncode == 0
