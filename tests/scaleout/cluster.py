"""Workers and HAProxy on loopback, started and stopped together (tests and benchmark).

Each listening socket is opened here, on a free port, and handed to its process
(``uvicorn --fd``, HAProxy's ``bind fd@N``), so no port is ever guessed; this process then
closes its copy, so a killed worker's port refuses connections as a dead server's does.
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import IO

from .haproxy import Backend, answers_per_server, check_config, render_config
from .worker import worker_name

REPO_ROOT = Path(__file__).resolve().parents[2]
START_TIMEOUT_S = 30.0


@dataclass
class Worker:
    """One worker process and its name in HAProxy's configuration (``w1``, ``w2``...)."""

    backend: Backend
    process: subprocess.Popen[bytes]

    @property
    def name(self) -> str:
        return self.backend.name

    @property
    def pid(self) -> int:
        return self.process.pid


@dataclass
class Cluster:
    """The running workers and the HAProxy in front of them."""

    workers: list[Worker]
    haproxy: subprocess.Popen[bytes]
    port: int
    """HAProxy's port on 127.0.0.1."""
    stats_socket: Path

    @property
    def http_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/acp"

    @property
    def ws_url(self) -> str:
        return f"ws://127.0.0.1:{self.port}/acp"

    def worker_named(self, agent_name: str) -> Worker:
        """The worker whose agent answered ``initialize`` with ``agent_name``."""
        return next(w for w in self.workers if agent_name == worker_name(w.pid))

    def answers_per_worker(self) -> dict[str, int]:
        """Answers each worker gave through HAProxy so far (its counters)."""
        return answers_per_server(self.stats_socket)

    def kill(self, worker: Worker) -> None:
        """SIGKILL: the process ends with no chance to close anything."""
        worker.process.send_signal(signal.SIGKILL)
        worker.process.wait(timeout=10)


def _listener() -> socket.socket:
    """A listening socket on a free loopback port, for a child process to inherit.

    ``TCP_NODELAY`` is set here because uvicorn serving an inherited socket (``--fd``, and
    also ``--workers``) never sets it: asyncio sets it only on sockets it knows as TCP
    (``proto == IPPROTO_TCP``). Without it, an answer written right after a notification
    waits for the client's delayed ACK: 40 ms per prompt over WebSocket. Linux passes the
    option on to every accepted socket."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    sock.bind(("127.0.0.1", 0))
    sock.listen(1024)
    sock.set_inheritable(True)
    return sock


def worker_command(fd: int) -> list[str]:
    """uvicorn serving :data:`tests.scaleout.worker.app` on the inherited socket ``fd``."""
    return [
        sys.executable, "-m", "uvicorn", "tests.scaleout.worker:app",
        "--fd", str(fd),
        "--http", "httptools",
        "--ws", "websockets-sansio",
        "--ws-max-size", str(64 * 1024 * 1024),  # the app's own WebSocket limit
        "--log-level", "warning",
        "--no-access-log",
        "--timeout-graceful-shutdown", "1",
    ]  # fmt: skip


def _wait_serving(worker: Worker, log: Path, deadline: float) -> None:
    """Until the app answers a plain GET (406: no ``Accept: text/event-stream``)."""
    host, port = worker.backend.address.rsplit(":", 1)
    request = f"GET /acp HTTP/1.1\r\nHost: {host}:{port}\r\nConnection: close\r\n\r\n".encode()
    while True:
        if worker.process.poll() is not None:
            raise RuntimeError(f"worker {worker.name} exited:\n{log.read_text()}")
        try:
            with socket.create_connection((host, int(port)), timeout=2) as sock:
                sock.sendall(request)
                if sock.recv(64).startswith(b"HTTP/1.1 "):
                    return
        except OSError:
            pass
        if time.monotonic() > deadline:
            raise TimeoutError(f"worker {worker.name} did not serve within {START_TIMEOUT_S} s")
        time.sleep(0.05)


def _answers(stats_socket: Path) -> bool:
    """Whether HAProxy is up: its stats socket answers."""
    try:
        answers_per_server(stats_socket)
    except OSError:
        return False
    return True


def _stop_all(processes: list[subprocess.Popen[bytes]]) -> None:
    """SIGTERM to all at once (each may take its graceful second), SIGKILL past 5 s."""
    for process in processes:
        if process.poll() is None:
            process.terminate()
    for process in processes:
        try:
            process.wait(timeout=5)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


@contextmanager
def running_cluster(
    workers: int, workdir: Path, *, haproxy: str, own_sessions: bool = False
) -> Iterator[Cluster]:
    """``workers`` uvicorn processes behind one HAProxy (the executable ``haproxy``),
    logs and configuration in ``workdir``; all stopped on leaving the block.

    ``own_sessions`` starts each in a session of its own (the benchmark's choice): where
    the kernel shares CPU time out by session (CFS autogroup), the processes of one
    session share one session's slice however many they are, as a deployment's do not."""
    workdir.mkdir(parents=True, exist_ok=True)
    deadline = time.monotonic() + START_TIMEOUT_S
    with ExitStack() as stack:
        processes: list[subprocess.Popen[bytes]] = []
        stack.callback(_stop_all, processes)
        started: list[tuple[Worker, Path]] = []
        for n in range(1, workers + 1):
            with _listener() as sock:
                backend = Backend(f"w{n}", f"127.0.0.1:{sock.getsockname()[1]}")
                log = workdir / f"{backend.name}.log"
                out: IO[bytes] = stack.enter_context(log.open("wb"))
                process = subprocess.Popen(
                    worker_command(sock.fileno()),
                    cwd=REPO_ROOT,
                    stdout=out,
                    stderr=subprocess.STDOUT,
                    pass_fds=[sock.fileno()],
                    env={**os.environ, "PYTHONPATH": str(REPO_ROOT)},
                    start_new_session=own_sessions,
                )
            processes.append(process)
            started.append((Worker(backend, process), log))
        for worker, log in started:
            _wait_serving(worker, log, deadline)
        stats_socket = workdir / "haproxy.sock"
        stats_socket.unlink(missing_ok=True)  # a previous run's
        with _listener() as front:
            config = workdir / "haproxy.cfg"
            config.write_text(
                render_config(
                    f"fd@{front.fileno()}",
                    [w.backend for w, _ in started],
                    stats_socket=stats_socket,
                    served_by_header=True,
                )
            )
            check_config(haproxy, config, pass_fds=[front.fileno()])
            log = workdir / "haproxy.log"
            out = stack.enter_context(log.open("wb"))
            proxy = subprocess.Popen(
                [haproxy, "-db", "-f", str(config)],
                stdout=out,
                stderr=subprocess.STDOUT,
                pass_fds=[front.fileno()],
                start_new_session=own_sessions,
            )
            port = front.getsockname()[1]
        processes.append(proxy)
        while not _answers(stats_socket):
            if proxy.poll() is not None:
                raise RuntimeError(f"haproxy exited:\n{log.read_text()}")
            if time.monotonic() > deadline:
                raise TimeoutError("haproxy did not start")
            time.sleep(0.02)
        yield Cluster([w for w, _ in started], proxy, port, stats_socket)
