"""Runtime benchmark suite: this SDK against the PyPI package and the TypeScript SDK.

A fourth column, ``floor``, runs the same workloads with no SDK at all, to show what
bounds every Python figure on the machine at hand.

Every run starts one driver process per implementation (its client) which spawns that
implementation's benchmark agent over stdio pipes, runs the workloads of
:mod:`bench.workload_spec` and prints its figures. Implementations take turns
(A B C, A B C, ...) so a load change on the machine hits all of them alike.

Output on stdout, one JSON object per line: a ``run`` record per (implementation, run),
then a ``summary`` with min/median/max over the runs and, next to each figure, the
ratio of this SDK to each peer (``> 1``: this SDK is better, whatever the unit). A
readable table of the medians goes to stderr.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from bench.stats import spread
from bench.workload_spec import FULL, QUICK, Spec

REPO = Path(__file__).resolve().parents[1]
TS_SDK = REPO / "tests/interop/node_modules/@agentclientprotocol/sdk/package.json"
IMPLS = ("this", "pypi", "ts", "floor")
PEERS = ("pypi", "ts", "floor")
WEBSOCKET_IMPLS = ("this", "ts", "floor")
"""The drivers with a ``--transport websocket`` mode (our client and server, the TS ones,
and the floor's: RFC 6455 framing by hand, no SDK)."""
HTTP_IMPLS = ("this", "ts")
"""The agents with a ``--transport http`` mode: the TS client drives each through its SDK's
Streamable HTTP server (ours: ``http_app``; TS: ``AcpServer`` and its Node handler)."""
"""Ratios are printed against each. ``floor`` is no SDK at all (``bench/drivers/floor.py``):
the bound the machine's pipes, event loop and JSON codec put under any Python client."""

METRICS: list[tuple[str, bool]] = [
    # (workload.figure, higher is better)
    ("ping.per_s", True),
    ("ping.p50_us", False),
    ("ping.p99_us", False),
    ("ping.client_cpu_us", False),
    ("ping.agent_cpu_us", False),
    ("prompt.per_s", True),
    ("prompt.p50_us", False),
    ("prompt.p99_us", False),
    ("prompt.client_cpu_us", False),
    ("prompt.agent_cpu_us", False),
    ("inflight.per_s", True),
    ("inflight.p50_us", False),
    ("inflight.p99_us", False),
    ("inflight.client_cpu_us", False),
    ("inflight.agent_cpu_us", False),
    ("notify.per_s", True),
    ("notify.client_cpu_us", False),
    ("notify.agent_cpu_us", False),
    ("cancel.p50_us", False),
    ("cancel.p99_us", False),
    ("rss.client_kb", False),
    ("rss.agent_kb", False),
    ("mixed.total_ms", False),
    ("mixed.chunks_per_s", True),
    ("mixed.ping_p50_us", False),
    ("mixed.ping_p99_us", False),
]


def agent_command(impl: str) -> list[str]:
    """The benchmark agent of ``impl`` (``bench/peers``), as the TS client spawns it."""
    if impl == "ts":
        node = shutil.which("node")
        assert node is not None
        return [node, str(REPO / "bench/peers/ts_agent.mjs")]
    return [sys.executable, str(REPO / f"bench/peers/{impl}_agent.py")]


def agent_spec(impl: str, spec: Spec, agent_side: bool) -> Spec:
    """The PyPI package cannot handle ``$/cancel_request``, which the TS client's cancel
    workload sends: under the TS client its agent skips that workload."""
    if agent_side and impl == "pypi":
        return {**spec, "cancel": 0}
    return spec


def driver_command(impl: str, spec: Spec, *, agent_side: bool = False) -> list[str]:
    arg = json.dumps(spec)
    if impl == "ts" or agent_side:
        node = shutil.which("node")
        assert node is not None
        return [node, str(REPO / "bench/peers/ts_client.mjs"), arg]
    module = {
        "this": "bench.drivers.this_sdk",
        "pypi": "bench.drivers.pypi",
        "floor": "bench.drivers.floor",
    }[impl]
    return [sys.executable, "-m", module, arg]


def unavailable(impl: str) -> str | None:
    """Why ``impl`` cannot run here, or None."""
    if impl == "ts":
        if shutil.which("node") is None:
            return "node not found"
        if not TS_SDK.exists():
            return "tests/interop/node_modules missing (make setup)"
    if impl == "pypi":
        try:
            import acp  # noqa: F401
        except ImportError:
            return "agent-client-protocol not installed (pip install -e '.[bench]')"
    return None


def run_driver(
    impl: str, spec: Spec, timeout: float, *, agent_side: bool = False
) -> dict[str, Any]:
    """One run of ``impl``'s client and agent; with ``agent_side``, the TS client drives
    ``impl``'s agent (what an editor on the TS SDK does to an agent written with it)."""
    started = time.perf_counter()
    env = {**os.environ, "BENCH_AGENT": json.dumps(agent_command(impl))} if agent_side else None
    proc = subprocess.run(
        driver_command(impl, spec, agent_side=agent_side),
        env=env,
        cwd=REPO,
        stdout=subprocess.PIPE,
        text=True,
        timeout=timeout,
        check=False,
    )
    if proc.returncode != 0:
        raise RuntimeError(f"{impl} driver exited {proc.returncode}")
    figures: dict[str, Any] = json.loads(proc.stdout.strip().splitlines()[-1])
    figures["wall_s"] = round(time.perf_counter() - started, 2)
    return figures


def figure(figures: dict[str, Any], path: str) -> float | None:
    """One figure of a run; None where the run skipped that workload."""
    workload, name = path.split(".")
    value = figures.get(workload, {}).get(name)
    return None if value is None else float(value)


def ratio(ours: float, peer: float, higher_is_better: bool) -> float | None:
    if ours == 0 or peer == 0:
        return None
    return round(ours / peer if higher_is_better else peer / ours, 2)


def summarize(runs: dict[str, list[dict[str, Any]]]) -> dict[str, Any]:
    metrics: dict[str, Any] = {}
    for path, higher in METRICS:
        entry: dict[str, Any] = {"higher_is_better": higher}
        for impl, records in runs.items():
            values = [v for v in (figure(r, path) for r in records) if v is not None]
            if values:
                entry[impl] = spread(values)
        if "this" in entry:
            for peer in PEERS:
                if peer in entry:
                    entry[f"this_vs_{peer}"] = ratio(
                        entry["this"]["median"], entry[peer]["median"], higher
                    )
        metrics[path] = entry
    return metrics


def table(metrics: dict[str, Any], impls: list[str]) -> str:
    """Medians per implementation and the ratios, as a Markdown table."""
    peers = [p for p in PEERS if p in impls and "this" in impls]
    head = ["figure", *impls, *(f"this/{p}" for p in peers)]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for path, entry in metrics.items():
        cells = [path]
        cells += [f"{entry[i]['median']:g}" if i in entry else "-" for i in impls]
        cells += [f"{entry.get(f'this_vs_{p}') or '-'}x" for p in peers]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def emit(record: dict[str, Any]) -> None:
    print(json.dumps(record), flush=True)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench", description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="tiny workloads, one run (CI)")
    parser.add_argument("--runs", type=int, help="runs per implementation (default 3; 1 quick)")
    parser.add_argument(
        "--impl", action="append", choices=IMPLS, help="repeat to pick; default: all four"
    )
    parser.add_argument(
        "--transport",
        choices=["stdio", "websocket", "http"],
        default="stdio",
        help="websocket: each agent behind its SDK's WebSocket server on loopback (this, ts); "
        "http: the TS client drives each agent behind its SDK's Streamable HTTP server",
    )
    parser.add_argument(
        "--agent-side",
        action="store_true",
        help="the TS SDK client drives each implementation's agent (stdio)",
    )
    parser.add_argument(
        "--pairs",
        action="store_true",
        help="with --transport http: each SDK's client drives its own server (client side)",
    )
    parser.add_argument(
        "--asgi-server",
        choices=["hypercorn", "uvicorn", "direct"],
        default="hypercorn",
        help="with --transport websocket or http: the ASGI server our app runs under "
        "(uvicorn: asyncio, its websockets-sansio and httptools protocols; direct: no ASGI "
        "server, the WebSocket app on its own listener, WebSocketApp.serve)",
    )
    parser.add_argument(
        "--agent-backend",
        choices=["asyncio", "trio"],
        default="asyncio",
        help="with --transport websocket or http: the anyio backend our agent's server runs "
        "on (trio: under hypercorn or on the own listener; clients stay on asyncio)",
    )
    args = parser.parse_args(argv)
    trio_cannot = args.transport == "stdio" or args.asgi_server == "uvicorn"
    if args.agent_backend == "trio" and trio_cannot:
        parser.error("--agent-backend trio needs --transport websocket or http, not uvicorn")
    if args.asgi_server == "direct" and args.transport != "websocket":
        parser.error("--asgi-server direct serves WebSocket only")
    if args.pairs and args.transport != "http":
        parser.error("--pairs goes with --transport http (websocket already runs in pairs)")
    if args.agent_side and args.transport != "stdio":
        parser.error("--agent-side runs over stdio")
    if args.transport != "stdio":
        os.environ["BENCH_TRANSPORT"] = args.transport  # read by the drivers and agents
        os.environ["BENCH_ASGI_SERVER"] = args.asgi_server  # read by bench/peers/this_agent.py
        os.environ["BENCH_AGENT_BACKEND"] = args.agent_backend  # read there too
    ts_drives = args.agent_side or (args.transport == "http" and not args.pairs)
    spec = QUICK if args.quick else FULL
    runs_wanted = args.runs or (1 if args.quick else 3)
    impls: list[str] = []
    for impl in args.impl or IMPLS:
        reason = unavailable(impl)
        if reason is None and args.transport == "websocket" and impl not in WEBSOCKET_IMPLS:
            reason = "no WebSocket transport in this driver"
        if reason is None and args.transport == "http" and impl not in HTTP_IMPLS:
            reason = "no Streamable HTTP server for this agent"
        if reason is None and ts_drives:
            reason = unavailable("ts")  # the TS client drives every agent
        if reason is None:
            impls.append(impl)
        else:
            emit({"kind": "skipped", "impl": impl, "reason": reason})
    timeout = 120.0 if args.quick else 900.0
    started = time.time()
    load_start = os.getloadavg()[0]
    runs: dict[str, list[dict[str, Any]]] = {impl: [] for impl in impls}
    for k in range(runs_wanted):
        for impl in impls:
            load = os.getloadavg()[0]
            figures = run_driver(
                impl, agent_spec(impl, spec, ts_drives), timeout, agent_side=ts_drives
            )
            runs[impl].append(figures)
            emit({"kind": "run", "impl": impl, "run": k, "load_1m": round(load, 2), **figures})
    metrics = summarize(runs)
    emit(
        {
            "kind": "summary",
            "runs": runs_wanted,
            "impls": impls,
            "quick": args.quick,
            "transport": args.transport,
            "asgi_server": args.asgi_server if args.transport != "stdio" else None,
            "agent_backend": args.agent_backend if args.transport != "stdio" else None,
            "agent_side": args.agent_side,
            "ts_client_drives": ts_drives,
            "spec": dict(spec),
            "duration_s": round(time.time() - started, 1),
            "load_1m": {"start": round(load_start, 2), "end": round(os.getloadavg()[0], 2)},
            "cpus": os.cpu_count(),
            "python": platform.python_version(),
            "metrics": metrics,
        }
    )
    print(table(metrics, impls), file=sys.stderr)
    return 0
