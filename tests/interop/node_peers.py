"""Finding Node, installing the pinned npm packages, and running the TypeScript peers."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

INTEROP_DIR = Path(__file__).resolve().parent
REPO_ROOT = INTEROP_DIR.parents[1]
PEERS_DIR = INTEROP_DIR / "peers"
TS_AGENT = PEERS_DIR / "agent.mjs"
TS_CLIENT = PEERS_DIR / "client.mjs"
TS_V2_AGENT = PEERS_DIR / "v2_agent.mjs"
TS_V2_CLIENT = PEERS_DIR / "v2_client.mjs"
TS_ROUTER_AGENT = PEERS_DIR / "router_agent.mjs"
ECHO_AGENT = REPO_ROOT / "examples" / "echo_agent.py"
V2_AGENT = REPO_ROOT / "examples" / "v2_agent.py"
ROUTER_AGENT = REPO_ROOT / "examples" / "router_agent.py"
ACPX_BIN = INTEROP_DIR / "node_modules" / "acpx" / "dist" / "cli.js"

Event = dict[str, Any]


def node_executable() -> str | None:
    """Path of `node`, or None when Node.js is not installed."""
    return shutil.which("node")


class JsonLinesNode:
    """A long-lived Node script that answers each JSON line with one JSON line: for the
    differential tests that ask it many small questions, without a process per question."""

    def __init__(self, script: Path) -> None:
        node = node_executable()
        assert node is not None
        self.process = subprocess.Popen(
            [node, str(script)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
        )

    def ask(self, question: object) -> Any:
        assert self.process.stdin is not None and self.process.stdout is not None
        self.process.stdin.write(json.dumps(question) + "\n")
        self.process.stdin.flush()
        return json.loads(self.process.stdout.readline())


def ensure_node_modules() -> None:
    """Install the locked npm packages unless present (`make setup` does this too)."""
    modules = INTEROP_DIR / "node_modules"
    sdk = modules / "@agentclientprotocol" / "sdk" / "package.json"
    mcp_server = modules / "@modelcontextprotocol" / "server" / "package.json"
    ws = modules / "ws" / "package.json"
    if sdk.exists() and mcp_server.exists() and ws.exists() and ACPX_BIN.exists():
        return
    npm = shutil.which("npm")
    if npm is None:
        raise RuntimeError(
            "node is installed but npm is not: cannot install tests/interop packages"
        )
    subprocess.run(
        [npm, "ci", "--prefix", str(INTEROP_DIR), "--no-audit", "--no-fund"],
        check=True,
        stdout=subprocess.DEVNULL,
    )


def ts_agent_command(*args: str) -> list[str]:
    """Command line that starts the TypeScript peer agent."""
    node = node_executable()
    assert node is not None
    return [node, str(TS_AGENT), *args]


def ts_v2_agent_command(*args: str) -> list[str]:
    """Command line that starts the TypeScript v2 peer agent."""
    node = node_executable()
    assert node is not None
    return [node, str(TS_V2_AGENT), *args]


def ts_router_agent_command(*args: str) -> list[str]:
    """Command line that starts the TypeScript agent behind its v1/v2 router."""
    node = node_executable()
    assert node is not None
    return [node, str(TS_ROUTER_AGENT), *args]


def router_agent_command(*args: str) -> list[str]:
    """Command line that starts examples/router_agent.py with this interpreter."""
    return [sys.executable, str(ROUTER_AGENT), *args]


def v2_agent_command(*args: str) -> list[str]:
    """Command line that starts examples/v2_agent.py with this interpreter."""
    return [sys.executable, str(V2_AGENT), *args]


def echo_agent_command(*args: str) -> list[str]:
    """Command line that starts examples/echo_agent.py with this interpreter."""
    return [sys.executable, str(ECHO_AGENT), *args]


def _run_node(cmd: list[str], timeout: float) -> list[Event]:
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, check=False)
    events = [json.loads(line) for line in proc.stdout.splitlines() if line.strip()]
    if proc.returncode != 0:
        raise AssertionError(
            f"{Path(cmd[1]).name} exited {proc.returncode}\nstderr:\n{proc.stderr}\nevents:\n"
            + "\n".join(json.dumps(e) for e in events)
        )
    return events


def run_ts_client(
    agent: list[str],
    scenario: dict[str, Any],
    *,
    transcript: Path | None = None,
    timeout: float = 30.0,
) -> list[Event]:
    """Run peers/client.mjs against `agent` and return its events; raises if it failed."""
    node = node_executable()
    assert node is not None
    cmd = [node, str(TS_CLIENT), "--scenario", json.dumps(scenario)]
    if transcript is not None:
        cmd += ["--transcript", str(transcript)]
    return _run_node([*cmd, "--", *agent], timeout)


def run_ts_v2_client(
    agent: list[str],
    prompt: str,
    long_prompt: str,
    *,
    cwd: str,
    transcript: Path | None = None,
    timeout: float = 30.0,
) -> list[Event]:
    """Run peers/v2_client.mjs: `prompt` to idle, then `long_prompt` stopped by session/cancel."""
    node = node_executable()
    assert node is not None
    cmd = [node, str(TS_V2_CLIENT), "--cwd", cwd]
    if transcript is not None:
        cmd += ["--transcript", str(transcript)]
    return _run_node([*cmd, prompt, long_prompt, "--", *agent], timeout)
