"""Cold start of each benchmark agent: spawn to the ``initialize`` answer, and to the first
``session/update`` of a prompt (what an editor that spawns an agent per workspace feels).

The agents of ``bench/peers`` (this SDK, the PyPI package, the TypeScript SDK, the no-SDK
floor, and ``deps_floor``: no SDK either, but anyio on asyncio and pydantic validating one
model, what this SDK cannot start without) take turns run by run, so a load change hits
them alike; each figure is the median of ``--runs`` spawns. Prints one JSON object per
agent and a summary with the ratios ``ours / peer`` (below 1: ours starts faster). Usage::

    python -m bench.cold_start [--runs 10]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

PEERS = Path(__file__).parent / "peers"
ENV = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
"""Installed packages start from compiled bytecode: let the untimed first spawn write it."""

INITIALIZE = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": 1}}
NEW_SESSION = {
    "jsonrpc": "2.0",
    "id": 2,
    "method": "session/new",
    "params": {"cwd": "/", "mcpServers": []},
}


def prompt(session_id: str) -> dict[str, object]:
    text = {"type": "text", "text": "chunks 1 size 8"}
    params = {"sessionId": session_id, "prompt": [text]}
    return {"jsonrpc": "2.0", "id": 3, "method": "session/prompt", "params": params}


def agents() -> dict[str, list[str]]:
    found = {
        "this": [sys.executable, str(PEERS / "this_agent.py")],
        "pypi": [sys.executable, str(PEERS / "pypi_agent.py")],
        "floor": [sys.executable, str(PEERS / "floor_agent.py")],
        "deps_floor": [sys.executable, str(PEERS / "deps_floor_agent.py")],
    }
    node = shutil.which("node")
    if node is not None:
        found["ts"] = [node, str(PEERS / "ts_agent.mjs")]
    return found


def send(process: subprocess.Popen[bytes], message: dict[str, object]) -> None:
    assert process.stdin is not None
    process.stdin.write(json.dumps(message).encode() + b"\n")
    process.stdin.flush()


def read_until(process: subprocess.Popen[bytes], wanted: object) -> dict[str, object]:
    assert process.stdout is not None
    while True:
        line = process.stdout.readline()
        if not line:
            raise RuntimeError(f"agent {process.args!r} closed its output")
        message = json.loads(line)
        if message.get("id") == wanted and "method" not in message:
            return message  # type: ignore[no-any-return]
        if wanted == "update" and message.get("method") == "session/update":
            return message  # type: ignore[no-any-return]


def one_start(command: list[str], env: dict[str, str] = ENV) -> tuple[float, float]:
    """Seconds from spawn to the initialize answer, and to the prompt's first update
    (after session/new, sent at once when initialize is answered)."""
    start = time.perf_counter()
    with subprocess.Popen(
        command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env
    ) as process:
        send(process, INITIALIZE)
        read_until(process, 1)
        initialized = time.perf_counter() - start
        send(process, NEW_SESSION)
        session = read_until(process, 2)["result"]
        assert isinstance(session, dict)
        send(process, prompt(str(session["sessionId"])))
        read_until(process, "update")
        first_update = time.perf_counter() - start
        assert process.stdin is not None
        process.stdin.close()
        process.wait(timeout=10)
    return initialized, first_update


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description="spawn-to-initialize cold start per agent")
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument(
        "--baseline-src",
        help="also time this SDK's agent on another checkout's src/ (PYTHONPATH), as 'before'",
    )
    args = parser.parse_args(argv)
    commands = agents()
    envs = {name: ENV for name in commands}
    if args.baseline_src:
        commands["before"] = commands["this"]
        envs["before"] = {**ENV, "PYTHONPATH": args.baseline_src}
    samples: dict[str, list[tuple[float, float]]] = {name: [] for name in commands}
    load = os.getloadavg()[0]
    for name, command in commands.items():  # warm the OS caches once, not timed
        one_start(command, envs[name])
    for _ in range(args.runs):
        for name, command in commands.items():
            samples[name].append(one_start(command, envs[name]))
    medians: dict[str, dict[str, float]] = {}
    for name, runs in samples.items():
        medians[name] = {
            "initialize_ms": round(statistics.median(r[0] for r in runs) * 1000, 1),
            "first_update_ms": round(statistics.median(r[1] for r in runs) * 1000, 1),
        }
        print(json.dumps({"kind": "cold_start", "impl": name, "runs": args.runs, **medians[name]}))
    ours = medians["this"]["initialize_ms"]
    ratios = {
        f"this/{name}": round(ours / m["initialize_ms"], 3)
        for name, m in medians.items()
        if name != "this"
    }
    summary = {"kind": "summary", "load_1m_start": load, "load_1m_end": os.getloadavg()[0]}
    print(json.dumps({**summary, "initialize_ratios": ratios}))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
