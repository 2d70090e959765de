"""100 concurrent clients through HAProxy, on 1 worker process against 4.

Usage: ``python -m bench.scaleout [--clients 100] [--prompts 10] [--workers 1,4]
[--transport http,ws] [--work-ms 0,5] [--rounds 1]``. Needs ``haproxy`` (``make haproxy``).

For each transport, agent work and worker count, the workers and HAProxy of
``tests/scaleout/`` (the configuration ``docs/deploying.md`` shows) are started afresh;
then every client, all at once, connects through HAProxy, sends ``initialize`` and
``session/new``, waits for all the others to get there, then sends its prompts one after
another: ``spin <work-ms>``, where the agent uses that much CPU (its own work; 0: the
transport and runtime alone) and answers one chunk. The clients run in this process
(asyncio), the workers under uvicorn (asyncio, httptools, websockets-sansio).

One JSON record per run: the wall time (first connect to last close), the prompt phase
(all clients set up to the last answer) and the prompts per second over it, prompt
latency (sent to answered) and setup latency (connect to session) p50/p99, failed
clients, how the clients spread over the workers, and the CPU the workers, HAProxy and
the clients used in the prompt phase, in seconds and in cores (seconds per second of the
phase, and per prompt): what bounds the run. On 2 cores, 4 workers can at most double one
worker's rate, less what the clients and HAProxy take; on a machine shared with other
work, less again, and with the kernel's CFS autogroup on, all of one session's processes
share one session's slice of the CPU, however many workers it runs: ``--own-sessions``
starts each worker and HAProxy in a session of its own, as separate services would be.
A ``summary`` record gives, per transport and work, the medians over ``--rounds`` and the
rate ratio.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import anyio

from bench.stats import percentile
from tests.scaleout.client import Visit, visit
from tests.scaleout.cluster import running_cluster
from tests.scaleout.haproxy import haproxy_executable, haproxy_version

CLOCK_TICKS = os.sysconf("SC_CLK_TCK")


def cpu_seconds(pid: int) -> float:
    """User + system CPU time of a live process, from /proc."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / CLOCK_TICKS


def autogroup() -> str:
    """``/proc/sys/kernel/sched_autogroup_enabled``: 1 when CPU time is shared out by
    session first, so that the processes of one session share one session's slice."""
    path = Path("/proc/sys/kernel/sched_autogroup_enabled")
    return path.read_text().strip() if path.exists() else "absent"


def own_cpu_seconds() -> float:
    """This process's CPU time: the clients'."""
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


CpuSnapshot = Callable[[], dict[str, float]]


class PromptPhase:
    """From every client set up (they wait for each other) to every client's last answer:
    its length, and the CPU seconds each part used during it."""

    def __init__(self, clients: int, cpu: CpuSnapshot) -> None:
        self.waiting = clients
        self.running = clients
        self.cpu = cpu
        self.open = anyio.Event()
        self.started_ns = self.ended_ns = 0
        self.cpu_at_start: dict[str, float] = {}
        self.cpu_used: dict[str, float] = {}

    async def ready(self) -> None:
        self.waiting -= 1
        if self.waiting == 0:
            self.cpu_at_start = self.cpu()
            self.started_ns = time.perf_counter_ns()
            self.open.set()
        await self.open.wait()

    def done(self) -> None:
        self.running -= 1
        if self.running == 0:
            self.ended_ns = time.perf_counter_ns()
            end = self.cpu()
            self.cpu_used = {k: round(end[k] - self.cpu_at_start[k], 2) for k in end}

    @property
    def seconds(self) -> float:
        return (self.ended_ns - self.started_ns) / 1e9


async def run_clients(
    url: str, clients: int, prompts: int, work_ms: int, cpu: CpuSnapshot
) -> tuple[list[Visit], list[str], PromptPhase]:
    """``clients`` concurrent visits: what each saw, the failures, the prompt phase."""
    visits: list[Visit] = []
    failures: list[str] = []
    phase = PromptPhase(clients, cpu)

    async def one() -> None:
        try:
            visits.append(
                await visit(url, [f"spin {work_ms}"] * prompts, ready=phase.ready, done=phase.done)
            )
        except Exception as error:
            failures.append(repr(error)[:200])
            if not phase.open.is_set():  # a client that failed holds no one up
                await phase.ready()
            phase.done()

    async with anyio.create_task_group() as tg:
        for _ in range(clients):
            tg.start_soon(one)
    return visits, failures, phase


def measure(
    transport: str, workers: int, work_ms: int, args: argparse.Namespace, haproxy: str
) -> dict[str, Any]:
    """One run on a fresh cluster of ``workers``."""
    with (
        tempfile.TemporaryDirectory() as workdir,
        running_cluster(
            workers, Path(workdir), haproxy=haproxy, own_sessions=args.own_sessions
        ) as cluster,
    ):
        url = cluster.http_url if transport == "http" else cluster.ws_url
        parts = {"haproxy": [cluster.haproxy.pid], "workers": [w.pid for w in cluster.workers]}

        def cpu() -> dict[str, float]:
            used = {part: sum(map(cpu_seconds, pids)) for part, pids in parts.items()}
            return {**used, "clients": own_cpu_seconds()}

        load = os.getloadavg()[0]
        started = time.perf_counter()
        visits, failures, phase = anyio.run(
            run_clients, url, args.clients, args.prompts, work_ms, cpu
        )
        wall = time.perf_counter() - started
        spread = Counter(cluster.worker_named(v.agent_name).name for v in visits)
    prompt_ns = [ns for v in visits for ns in v.prompt_ns]
    setup_ns = [v.setup_ns for v in visits]
    return {
        "kind": "run",
        "transport": transport,
        "workers": workers,
        "work_ms": work_ms,
        "clients": args.clients,
        "prompts_per_client": args.prompts,
        "failed_clients": len(failures),
        "failures": failures[:3],
        "wall_s": round(wall, 2),
        "prompt_phase_s": round(phase.seconds, 2),
        "prompts_per_s": round(len(prompt_ns) / phase.seconds, 1),
        "prompt_p50_ms": round(percentile(prompt_ns, 50) / 1e6, 2),
        "prompt_p99_ms": round(percentile(prompt_ns, 99) / 1e6, 2),
        "setup_p50_ms": round(percentile(setup_ns, 50) / 1e6, 1),
        "setup_p99_ms": round(percentile(setup_ns, 99) / 1e6, 1),
        "clients_per_worker": dict(sorted(spread.items())),
        "prompt_phase_cpu_s": phase.cpu_used,
        "prompt_phase_cores": {k: round(v / phase.seconds, 2) for k, v in phase.cpu_used.items()},
        "cpu_us_per_prompt": {
            k: round(v / len(prompt_ns) * 1e6) for k, v in phase.cpu_used.items()
        },
        "load_1m_start": round(load, 2),
        "load_1m_end": round(os.getloadavg()[0], 2),
    }


def summarize(runs: list[dict[str, Any]], counts: list[int]) -> dict[str, Any]:
    """Per transport and agent work: the median prompts/s and prompt p50/p99 of each
    worker count over the rounds, and the last count's rate over the first's."""
    rows: dict[str, Any] = {}
    for transport, work_ms in dict.fromkeys((r["transport"], r["work_ms"]) for r in runs):
        row: dict[str, Any] = {}
        for n in counts:
            mine = [
                r
                for r in runs
                if (r["transport"], r["work_ms"], r["workers"]) == (transport, work_ms, n)
            ]
            row[f"{n}_workers"] = {
                key: statistics.median(r[key] for r in mine)
                for key in ("prompts_per_s", "prompt_p50_ms", "prompt_p99_ms", "wall_s")
            }
        first, last = row[f"{counts[0]}_workers"], row[f"{counts[-1]}_workers"]
        row["prompts_per_s_ratio"] = round(last["prompts_per_s"] / first["prompts_per_s"], 2)
        rows[f"{transport} work {work_ms} ms"] = row
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--clients", type=int, default=100)
    parser.add_argument("--prompts", type=int, default=10, help="prompts per client")
    parser.add_argument("--workers", default="1,4", help="worker counts to compare")
    parser.add_argument("--transport", default="http,ws", help="http and/or ws")
    parser.add_argument("--work-ms", default="0,5", help="agent CPU per prompt, ms")
    parser.add_argument("--rounds", type=int, default=1, help="each run this many times")
    parser.add_argument(
        "--own-sessions",
        action="store_true",
        help="each worker and HAProxy in a session of its own (see CFS autogroup)",
    )
    args = parser.parse_args(argv)
    haproxy = haproxy_executable()
    if haproxy is None:
        print("haproxy is not installed (`make haproxy`)", file=sys.stderr)
        return 2
    counts = [int(n) for n in args.workers.split(",")]
    runs: list[dict[str, Any]] = []
    started = time.monotonic()
    for round_ in range(args.rounds):
        for transport in args.transport.split(","):
            for work_ms in [int(w) for w in args.work_ms.split(",")]:
                # the order alternates, so a load that drifts hits both counts alike
                for workers in counts if round_ % 2 == 0 else counts[::-1]:
                    record = measure(transport, workers, work_ms, args, haproxy)
                    runs.append(record)
                    print(json.dumps(record), flush=True)
    summary = {
        "kind": "summary",
        "haproxy": haproxy_version(haproxy),
        "cpus": os.cpu_count(),
        "sched_autogroup": autogroup(),
        "own_sessions": args.own_sessions,
        "rounds": args.rounds,
        "medians": summarize(runs, counts),
        "duration_s": round(time.monotonic() - started, 1),
    }
    print(json.dumps(summary), flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
