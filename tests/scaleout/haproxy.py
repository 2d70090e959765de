"""HAProxy in front of the workers: its configuration, its process, its counters.

:func:`render_config` writes the configuration ``docs/deploying.md`` shows (a test checks
the page holds it verbatim); the tests add a stats socket, to read how many answers each
worker gave, and an ``X-Served-By`` header, to see which worker answered each request.
"""

from __future__ import annotations

import shutil
import socket
import subprocess
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

BACKEND = "acp_workers"


@dataclass(frozen=True)
class Backend:
    """One worker as HAProxy names it: ``name`` is also its affinity cookie's value."""

    name: str
    address: str
    """``host:port``"""


def render_config(
    bind: str,
    backends: Sequence[Backend],
    *,
    stats_socket: Path | None = None,
    served_by_header: bool = False,
) -> str:
    """The HAProxy configuration: ``bind`` (``127.0.0.1:8000``, or ``fd@3`` for a socket
    the parent opened) in front of ``backends``, round robin with cookie affinity."""
    stats = [f"    stats socket {stats_socket} mode 600 level admin"] if stats_socket else []
    served_by = ["    http-response set-header X-Served-By %[srv_name]"] if served_by_header else []
    servers = [
        f"    server {b.name} {b.address} cookie {b.name} check inter 1s fall 2 rise 2"
        for b in backends
    ]
    lines = [
        "global",
        "    maxconn 4096                 # connections in all; each needs two sockets",
        *stats,
        "",
        "defaults",
        "    mode http",
        "    timeout connect 5s",
        "    timeout client 60s           # idle HTTP; an SSE stream gets a comment every 15 s",
        "    timeout server 60s",
        "    timeout tunnel 1h            # WebSocket once upgraded; our client pings every 20 s",
        "    timeout http-request 10s     # the whole request head",
        "    timeout http-keep-alive 10s",
        "    timeout queue 10s",
        "    retries 2",
        "    option redispatch            # a worker that refuses: try another",
        "    option http-no-delay         # SSE and WebSocket: forward each event at once",
        "",
        "frontend acp",
        f"    bind {bind}",
        "    maxconn 4000",
        f"    default_backend {BACKEND}",
        "",
        f"backend {BACKEND}",
        "    balance roundrobin",
        "    cookie SERVERID insert indirect nocache httponly",
        *served_by,
        *servers,
    ]
    return "\n".join(lines) + "\n"


def haproxy_executable() -> str | None:
    """Path of ``haproxy`` (Debian puts it in /usr/sbin, not on every user's PATH)."""
    found = shutil.which("haproxy")
    if found is None and Path("/usr/sbin/haproxy").exists():
        found = "/usr/sbin/haproxy"
    return found


def haproxy_version(executable: str) -> str:
    """The first line of ``haproxy -v``."""
    out = subprocess.run([executable, "-v"], capture_output=True, text=True, check=True)
    return out.stdout.splitlines()[0]


def check_config(executable: str, config: Path, *, pass_fds: Sequence[int] = ()) -> None:
    """``haproxy -c``: a bad configuration fails here, with HAProxy's own message
    (``pass_fds``: the sockets its ``bind fd@N`` lines name)."""
    result = subprocess.run(
        [executable, "-c", "-f", str(config)], capture_output=True, text=True, pass_fds=pass_fds
    )
    if result.returncode != 0:
        raise RuntimeError(f"haproxy -c failed:\n{result.stdout}{result.stderr}")


def answers_per_server(stats_socket: Path) -> dict[str, int]:
    """How many answers (any status) each server of the backend gave so far, from
    ``show stat`` on the stats socket."""
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
        sock.settimeout(5)
        sock.connect(str(stats_socket))
        sock.sendall(b"show stat\n")
        chunks = []
        while chunk := sock.recv(65536):
            chunks.append(chunk)
    lines = b"".join(chunks).decode().splitlines()
    columns = lines[0].lstrip("# ").split(",")
    counters = [i for i, name in enumerate(columns) if name.startswith("hrsp_")]
    answers: dict[str, int] = {}
    for line in lines[1:]:
        fields = line.split(",")
        if len(fields) < len(columns) or fields[0] != BACKEND or fields[1] == "BACKEND":
            continue
        answers[fields[1]] = sum(int(fields[i] or 0) for i in counters)
    return answers
