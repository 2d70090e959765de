"""Cold start of each benchmark agent: spawn to the ``initialize`` answer, and to the first
``session/update`` of a prompt (what an editor that spawns an agent per workspace feels).

The agents of ``bench/peers`` (this SDK, the PyPI package, the TypeScript SDK, the no-SDK
floor, and ``deps_floor``: no SDK either, but anyio on asyncio and pydantic with one model
built at class creation and one deferred to its first validation, what this SDK cannot
start without) and the examples users start from (``examples/echo_agent.py``,
``examples/tutorial_agent.py``) take turns run by run, so a load change hits them alike;
each figure is the median of ``--runs`` spawns, in wall time and in the agent process's
CPU time (user + system, spawn to exit), which other jobs on the machine disturb less.
Prints one JSON object per agent and a summary with the ratios ``ours / peer`` (below 1:
ours starts faster). Usage::

    python -m bench.cold_start [--runs 10] [--agents this,echo,tutorial,ts,deps_floor]
        [--core-venv]

``--core-venv`` runs the Python agents in an environment holding only this SDK and its
core dependencies, as a user's install does (``bench/core_venv.py``).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

from bench.core_venv import core_venv, distributions

PEERS = Path(__file__).parent / "peers"
EXAMPLES = Path(__file__).parent.parent / "examples"
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


def agents(python: str = sys.executable) -> dict[str, list[str]]:
    """Each agent's command; ``python`` runs all but the PyPI package's (which needs its
    own package, so it keeps this interpreter) and the TypeScript one."""
    found = {
        "this": [python, str(PEERS / "this_agent.py")],
        "pypi": [sys.executable, str(PEERS / "pypi_agent.py")],
        "floor": [python, str(PEERS / "floor_agent.py")],
        "deps_floor": [python, str(PEERS / "deps_floor_agent.py")],
        "echo": [python, str(EXAMPLES / "echo_agent.py"), "--quiet"],
        "tutorial": [python, str(EXAMPLES / "tutorial_agent.py")],
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


def children_cpu() -> float:
    """User + system CPU seconds of every child process waited for so far."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def one_start(command: list[str], env: dict[str, str] = ENV) -> tuple[float, float, float]:
    """Seconds from spawn to the initialize answer, and to the prompt's first update
    (after session/new, sent at once when initialize is answered), and the CPU seconds
    (user + system) the agent process used from spawn to its exit after stdin closes:
    less sensitive than wall time to other jobs on the machine."""
    cpu_before = children_cpu()
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
    return initialized, first_update, children_cpu() - cpu_before


OURS = ("this", "echo", "tutorial", "before", "echo_before", "tutorial_before")
"""This SDK's agents: the benchmark agent and the two examples users start from."""


def ratios_to_peers(medians: dict[str, dict[str, float]]) -> dict[str, dict[str, float]]:
    """``ours / peer`` for each of this SDK's agents against every other agent, on the wall
    time to the ``initialize`` answer and on the CPU time of the whole process."""
    ratios: dict[str, dict[str, float]] = {"initialize_ratios": {}, "cpu_ratios": {}}
    for ours in (name for name in OURS if name in medians):
        for name, m in medians.items():
            if name in OURS:
                continue
            for key, figure in (("initialize_ratios", "initialize_ms"), ("cpu_ratios", "cpu_ms")):
                ratios[key][f"{ours}/{name}"] = round(medians[ours][figure] / m[figure], 3)
    return ratios


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description="spawn-to-initialize cold start per agent")
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument(
        "--baseline-src",
        help="also time this SDK's agent on another checkout's src/ (PYTHONPATH), as 'before'",
    )
    parser.add_argument(
        "--baseline-root",
        help="also time another checkout's examples on its src/, as 'echo_before' and "
        "'tutorial_before'",
    )
    parser.add_argument("--agents", help="comma-separated subset of the agents (default: all)")
    parser.add_argument(
        "--core-venv",
        action="store_true",
        help="run the Python agents in an environment like a user's (bench/core_venv.py): "
        "this checkout and its core dependencies only, made anew under .bench/core-venv",
    )
    args = parser.parse_args(argv)
    python = sys.executable
    if args.core_venv:
        python = str(core_venv())
        print(json.dumps({"kind": "environment", "distributions": distributions(Path(python))}))
    commands = agents(python)
    if args.agents:
        wanted = args.agents.split(",")
        commands = {name: commands[name] for name in wanted}
    envs = {name: ENV for name in commands}
    if args.baseline_src:
        commands["before"] = commands["this"]
        envs["before"] = {**ENV, "PYTHONPATH": args.baseline_src}
    if args.baseline_root:
        root = Path(args.baseline_root)
        for name in ("echo", "tutorial"):
            if name in commands:
                old = [
                    str(root / "examples" / Path(part).name) if part.endswith(".py") else part
                    for part in commands[name]
                ]
                commands[f"{name}_before"] = old
                envs[f"{name}_before"] = {**ENV, "PYTHONPATH": str(root / "src")}
    samples: dict[str, list[tuple[float, float, float]]] = {name: [] for name in commands}
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
            "cpu_ms": round(statistics.median(r[2] for r in runs) * 1000, 1),
        }
        print(json.dumps({"kind": "cold_start", "impl": name, "runs": args.runs, **medians[name]}))
    summary = {"kind": "summary", "load_1m_start": load, "load_1m_end": os.getloadavg()[0]}
    print(json.dumps({**summary, **ratios_to_peers(medians)}))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
