"""Hostile peers against real processes: memory and latency when the peer stops reading,
floods bad lines or sends one huge bad line; this SDK beside the TypeScript SDK agent.

    .venv/bin/python -m tests.reliability.hostile_peers           # full sizes (minutes)
    .venv/bin/python -m tests.reliability.hostile_peers --quick   # small sizes (seconds)
    .venv/bin/python -m tests.reliability.hostile_peers --python-src /tmp/old/src \
        --examples /tmp/old/examples                               # an older runtime
    .venv/bin/python -m tests.reliability.hostile_peers --baseline /tmp/old \
        --json figures.jsonl                                       # this one and an older one

The peer is this process, with plain blocking I/O on the pipes and no SDK, so the
process under test sees exactly the bytes written. Processes under test: the Python
echo agent (``examples/echo_agent.py``), its TypeScript SDK twin
(``tests/interop/peers/agent.mjs``, SDK from ``tests/interop/node_modules``) and, for
the client side, ``tests/reliability/echo_client.py``. Peak memory is the kernel's high-water
mark of the process's resident set (``VmHWM``), read before the process is stopped.

Prints one JSON object per measurement, then a Markdown table. ``test_hostile_peers.py``
runs the same scenarios with assertions.
"""

from __future__ import annotations

import argparse
import json
import os
import select
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]
ECHO_AGENT = REPO / "examples" / "echo_agent.py"
ECHO_CLIENT = Path(__file__).with_name("echo_client.py")
TS_AGENT = REPO / "tests" / "interop" / "peers" / "agent.mjs"
MIB = 1024 * 1024
PING_PAD = "p" * 1000
"""Params of a 1 KB ping."""
WRITE_BYTES = 64 * 1024
READ_TIMEOUT = 30.0
"""Longest wait for one message: a process that stops answering fails the measurement."""


@dataclass(frozen=True)
class Target:
    """A program under test and how to start it."""

    name: str
    argv: tuple[str, ...]
    env: dict[str, str] | None = None
    side: str = "agent"

    def start(self, *extra: str, stderr: Any = subprocess.DEVNULL) -> Process:
        popen = subprocess.Popen(
            [*self.argv, *extra],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=stderr,
            env=self.env,
            bufsize=0,
        )
        return Process(popen)


def python_agent(python_src: Path | None = None, examples: Path | None = None) -> Target:
    env = None if python_src is None else {**os.environ, "PYTHONPATH": str(python_src)}
    agent = (examples or ECHO_AGENT.parent) / "echo_agent.py"
    return Target("python", (sys.executable, str(agent)), env)


def ts_agent() -> Target | None:
    node = shutil.which("node")
    sdk = REPO / "tests" / "interop" / "node_modules" / "@agentclientprotocol" / "sdk"
    if node is None or not sdk.is_dir():
        return None
    return Target("typescript", (node, str(TS_AGENT)))


def python_client(python_src: Path | None = None) -> Target:
    env = None if python_src is None else {**os.environ, "PYTHONPATH": str(python_src)}
    return Target("python client", (sys.executable, str(ECHO_CLIENT)), env, side="client")


class Process:
    """The process under test, seen from the raw peer: write bytes, read messages."""

    def __init__(self, popen: subprocess.Popen[bytes]) -> None:
        assert popen.stdin is not None and popen.stdout is not None
        self.popen = popen
        self._in = popen.stdin.fileno()
        self._out = popen.stdout.fileno()
        self._buffer = bytearray()
        self._writing = threading.Lock()
        self._stopped = False
        self.written = 0
        """Lines fully written so far (see :meth:`write_lines`)."""

    def write(self, data: bytes) -> None:
        """Write all of ``data``; :class:`BrokenPipeError` once the process is stopped.

        Each ``write(2)`` holds a lock that :meth:`stop` takes before closing the pipe:
        a writer thread still running after its process was killed must never write to
        the descriptor's number once the next process has been given it."""
        view = memoryview(data)
        while view:
            with self._writing:
                if self._stopped:
                    raise BrokenPipeError("the process was stopped")
                written = os.write(self._in, view)
            view = view[written:]

    def send(self, message: dict[str, Any]) -> None:
        self.write(json.dumps(message).encode() + b"\n")

    def write_lines(self, lines: Iterable[bytes]) -> None:
        """Write lines in 64 KiB batches, counting those fully written; stops quietly
        when the process goes away."""
        batch: list[bytes] = []
        size = 0
        try:
            for line in lines:
                batch.append(line)
                size += len(line)
                if size >= WRITE_BYTES:
                    self.write(b"".join(batch))
                    self.written += len(batch)
                    batch, size = [], 0
            if batch:
                self.write(b"".join(batch))
                self.written += len(batch)
        except OSError:
            pass

    def read(self, timeout: float = READ_TIMEOUT) -> dict[str, Any]:
        """The next message; :class:`TimeoutError` if none comes within ``timeout``."""
        buffer = self._buffer
        deadline = time.monotonic() + timeout
        while (newline := buffer.find(b"\n")) < 0:
            ready, _, _ = select.select([self._out], [], [], max(0.0, deadline - time.monotonic()))
            if not ready:
                raise TimeoutError(f"no message within {timeout} s")
            if not (chunk := os.read(self._out, 1 << 16)):
                raise EOFError("the process closed its output")
            buffer += chunk
        line = bytes(buffer[:newline])
        del buffer[: newline + 1]
        return json.loads(line)

    def read_until(self, done: Callable[[dict[str, Any]], bool]) -> tuple[dict[str, Any], int]:
        """Read until a message ``done`` accepts; returns it and how many came before."""
        skipped = 0
        while not done(message := self.read()):
            skipped += 1
        return message, skipped

    def status(self, key: str) -> float:
        """A ``/proc/<pid>/status`` figure in MiB (``VmHWM``: peak resident set)."""
        for line in Path(f"/proc/{self.popen.pid}/status").read_text().splitlines():
            if line.startswith(key + ":"):
                return int(line.split()[1]) / 1024
        raise KeyError(key)

    def stop(self) -> None:
        if self.popen.poll() is None:
            self.popen.send_signal(signal.SIGKILL)
        self.popen.wait()
        with self._writing:  # a blocked write(2) has failed or returned: the reader is gone
            self._stopped = True
        for pipe in (self.popen.stdin, self.popen.stdout, self.popen.stderr):
            if pipe is not None:
                pipe.close()


def initialize(process: Process) -> str:
    """The handshake of an agent under test; returns a new session's id."""
    process.send(
        {
            "jsonrpc": "2.0",
            "id": "init",
            "method": "initialize",
            "params": {"protocolVersion": 1, "clientCapabilities": {}},
        }
    )
    process.read_until(lambda m: m.get("id") == "init")
    process.send(
        {
            "jsonrpc": "2.0",
            "id": "new",
            "method": "session/new",
            "params": {"cwd": "/", "mcpServers": []},
        }
    )
    answer, _ = process.read_until(lambda m: m.get("id") == "new")
    return str(answer["result"]["sessionId"])


def answer_client_initialize(process: Process) -> None:
    """The client under test starts with ``initialize``: answer it."""
    request, _ = process.read_until(lambda m: m.get("method") == "initialize")
    process.send(
        {
            "jsonrpc": "2.0",
            "id": request["id"],
            "result": {"protocolVersion": 1, "agentCapabilities": {}},
        }
    )


def pings(count: int) -> Iterator[bytes]:
    for n in range(count):
        yield b'{"jsonrpc":"2.0","id":%d,"method":"_echo/ping","params":{"pad":"%s"}}\n' % (
            n,
            PING_PAD.encode(),
        )


def bad_lines(count: int) -> Iterator[bytes]:
    for n in range(count):
        yield b"not json %d\n" % n


def prompt(session: str, text: str, request_id: str = "turn") -> dict[str, Any]:
    return {
        "jsonrpc": "2.0",
        "id": request_id,
        "method": "session/prompt",
        "params": {"sessionId": session, "prompt": [{"type": "text", "text": text}]},
    }


@dataclass
class Writer:
    """Writes lines from a thread; :meth:`wait` returns once all are written or the
    process has stopped taking them for ``stall`` seconds."""

    process: Process
    lines: Iterable[bytes]
    after: Sequence[bytes] = ()
    """Lines written after ``lines``, each timed (``after_times``)."""
    after_times: list[float] = field(default_factory=list[float])
    thread: threading.Thread | None = None

    def start(self) -> Writer:
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()
        return self

    def _run(self) -> None:
        self.process.write_lines(self.lines)
        for line in self.after:
            try:
                self.process.write(line)
            except OSError:
                return
            self.after_times.append(time.perf_counter())

    def wait(self, stall: float) -> bool:
        """True when the process stopped reading (no progress for ``stall`` s)."""
        assert self.thread is not None
        last, since = -1, time.monotonic()
        while self.thread.is_alive():
            if self.process.written != last:
                last, since = self.process.written, time.monotonic()
            elif time.monotonic() - since > stall:
                return True
            time.sleep(0.05)
        return False


def flood_unread(
    target: Target, lines: Callable[[], Iterable[bytes]], *extra: str
) -> dict[str, Any]:
    """The peer writes ``lines`` and never reads: how many does the process take, and
    what does that cost it?"""
    process = target.start("--quiet", *extra) if target.side == "agent" else target.start(*extra)
    try:
        if target.side == "agent":
            initialize(process)
        else:
            answer_client_initialize(process)
        base = process.status("VmRSS")
        writer = Writer(process, lines()).start()
        stopped = writer.wait(stall=2.0)
        time.sleep(0.5)  # let it take what is already in the pipe
        return {
            "taken": process.written,
            "stopped_reading": stopped,
            "base_rss_mib": round(base, 1),
            "peak_rss_mib": round(process.status("VmHWM"), 1),
        }
    finally:
        process.stop()


def cancel_under_load(target: Target, count: int, *extra: str) -> dict[str, Any]:
    """A prompt waits; the peer writes ``count`` pings without reading, then
    ``$/cancel_request`` for the prompt (it is written once the process reads again), and
    starts reading once the pings are written or stuck: the time from then to the cancel's
    answer, from the cancel's write to its answer, and the messages that came first."""
    process = target.start("--quiet", *extra)
    try:
        session = initialize(process)
        process.send(prompt(session, "sleep 600000"))
        cancel = {"jsonrpc": "2.0", "method": "$/cancel_request", "params": {"requestId": "turn"}}
        writer = Writer(process, pings(count), [json.dumps(cancel).encode() + b"\n"]).start()
        writer.wait(stall=1.0)
        reading = time.perf_counter()  # the peer has issued its cancel and reads from now on
        answer, before = process.read_until(lambda m: m.get("id") == "turn")
        answered = time.perf_counter()
        assert writer.after_times, "the cancel was never written"
        return {
            "read_to_answer_ms": round((answered - reading) * 1000, 1),
            "cancel_to_answer_ms": round((answered - writer.after_times[0]) * 1000, 1),
            "messages_before_answer": before,
            "answer_code": answer.get("error", {}).get("code"),
            "peak_rss_mib": round(process.status("VmHWM"), 1),
        }
    finally:
        process.stop()


def bad_line(target: Target, size: int, *extra: str) -> dict[str, Any]:
    """One invalid line of ``size`` bytes (under the limit): the peak it costs."""
    process = target.start("--quiet", "--max-message-bytes", str(64 * MIB), *extra)
    try:
        initialize(process)
        before = process.status("VmHWM")
        head = b'{"jsonrpc":"2.0","id":1,"method":"_echo/ping","params":["'
        writer = Writer(process, [head + b"x" * (size - len(head) - 1) + b"\n"]).start()
        reply = process.read()
        writer.wait(stall=5.0)
        return {
            "reply_code": reply.get("error", {}).get("code"),
            "peak_before_mib": round(before, 1),
            "peak_rss_mib": round(process.status("VmHWM"), 1),
            "cost_mib": round(process.status("VmHWM") - before, 1),
        }
    finally:
        process.stop()


def chunks_then_cancel(target: Target, count: int, *extra: str) -> dict[str, Any]:
    """``chunks <count>``: how long a ping waits meanwhile, and how long ``session/cancel``
    takes to end the turn."""
    process = target.start("--quiet", *extra)
    try:
        session = initialize(process)
        process.send(prompt(session, f"chunks {count}"))
        process.read_until(lambda m: m.get("method") == "session/update")
        started = time.perf_counter()
        process.send({"jsonrpc": "2.0", "id": "ping", "method": "_echo/ping", "params": {}})
        first, chunks = process.read_until(lambda m: m.get("id") in ("ping", "turn"))
        ping_ms = (time.perf_counter() - started) * 1000
        if first.get("id") == "turn":  # the whole stream went out before the ping's answer
            process.read_until(lambda m: m.get("id") == "ping")
            ping_ms = (time.perf_counter() - started) * 1000
            return {
                "ping_ms": round(ping_ms, 1),
                "cancel_ms": None,
                "stop_reason": first.get("result", {}).get("stopReason"),
                "chunks_received": 1 + chunks,
            }
        started = time.perf_counter()
        process.send(
            {"jsonrpc": "2.0", "method": "session/cancel", "params": {"sessionId": session}}
        )
        answer, more = process.read_until(lambda m: m.get("id") == "turn")
        return {
            "ping_ms": round(ping_ms, 1),
            "cancel_ms": round((time.perf_counter() - started) * 1000, 1),
            "stop_reason": answer.get("result", {}).get("stopReason"),
            "chunks_received": 1 + chunks + more,
        }
    finally:
        process.stop()


def stderr_unread(target: Target, count: int, *extra: str) -> dict[str, Any]:
    """Logging on (no ``--quiet``), stderr a pipe nobody reads: ``count`` bad lines with
    their replies read, then a ping. Does the process still answer, and how fast?"""
    process = target.start(*extra, stderr=subprocess.PIPE)
    try:
        initialize(process)
        replies: list[int] = []
        reader = threading.Thread(
            target=lambda: replies.append(read_replies(process, count + 1, until="ping")),
            daemon=True,
        )
        reader.start()
        Writer(process, bad_lines(count)).start().wait(stall=2.0)
        sent = time.perf_counter()
        pinger = Writer(process, [b'{"jsonrpc":"2.0","id":"ping","method":"_echo/ping"}\n'])
        pinger.start()
        reader.join(timeout=20)
        answered = not reader.is_alive()
        return {
            "lines_taken": process.written - answered,
            "ping_answered_ms": round((time.perf_counter() - sent) * 1000, 1) if answered else None,
        }
    finally:
        process.stop()


def quiet_stderr_bytes(target: Target, count: int, *extra: str) -> dict[str, Any]:
    """``--quiet`` with ``count`` bad lines: how much reaches stderr."""
    with tempfile.TemporaryFile() as sink:
        process = target.start("--quiet", *extra, stderr=sink)
        try:
            initialize(process)
            reader = threading.Thread(target=read_replies, args=(process, count), daemon=True)
            reader.start()
            process.write_lines(bad_lines(count))
            reader.join(timeout=60)
        finally:
            process.stop()
        return {"stderr_bytes": sink.seek(0, os.SEEK_END)}


def read_replies(process: Process, count: int, until: str | None = None) -> int:
    """Read ``count`` messages, or until one with id ``until``; how many were read."""
    read = 0
    try:
        while read < count:
            message = process.read()
            read += 1
            if until is not None and message.get("id") == until:
                break
    except (EOFError, OSError, ValueError):
        pass
    return read


def scenarios(quick: bool) -> list[tuple[str, str, Callable[[Target], dict[str, Any]]]]:
    """(key, description, run) per measurement; sizes as in issue #16 unless quick."""
    scale = 10 if quick else 1
    big = 6 * MIB if quick else 60 * MIB
    n50, n200, n300 = 50_000 // scale, 200_000 // scale, 300_000 // scale
    return [
        ("pings_50k", f"{n50:,} unread 1 KB pings", lambda t: flood_unread(t, lambda: pings(n50))),
        (
            "pings_200k",
            f"{n200:,} unread 1 KB pings",
            lambda t: flood_unread(t, lambda: pings(n200)),
        ),
        (
            "bad_300k",
            f"{n300:,} unread bad lines",
            lambda t: flood_unread(t, lambda: bad_lines(n300)),
        ),
        ("cancel_50k", f"cancel behind {n50:,} unread pings", lambda t: cancel_under_load(t, n50)),
        ("bad_line", f"one bad {big // MIB} MiB line", lambda t: bad_line(t, big)),
        (
            "chunks",
            f"chunks {n300:,}, then a ping and session/cancel",
            lambda t: chunks_then_cancel(t, n300),
        ),
        ("stderr_unread", f"{n300:,} bad lines, stderr unread", lambda t: stderr_unread(t, n300)),
        ("quiet", f"{n300:,} bad lines with --quiet", lambda t: quiet_stderr_bytes(t, n300)),
    ]


CLIENT_SCENARIOS = {"pings_50k", "pings_200k", "bad_300k"}


def build_targets(
    wanted: set[str], python_src: Path | None, examples: Path | None, baseline: Path | None
) -> list[Target]:
    """The processes to measure, the baseline checkout's Python ones next to their twins."""
    targets: list[Target] = []
    if "python" in wanted:
        targets.append(python_agent(python_src, examples))
        if baseline is not None:
            old = python_agent(baseline / "src", baseline / "examples")
            targets.append(replace(old, name="python (baseline)"))
    if "typescript" in wanted and (ts := ts_agent()) is not None:
        targets.append(ts)
    if "client" in wanted:
        targets.append(python_client(python_src))
        if baseline is not None:
            old = python_client(baseline / "src")
            targets.append(replace(old, name="python client (baseline)"))
    return targets


def measure(
    key: str, what: str, target: Target, run: Callable[[Target], dict[str, Any]]
) -> dict[str, Any]:
    """One measurement; a process that fails it (stops answering, exits) is a figure too."""
    started = time.monotonic()
    record: dict[str, Any] = {"scenario": key, "what": what, "target": target.name}
    try:
        record.update(run(target))
    except (TimeoutError, EOFError, OSError, KeyError, AssertionError) as error:
        record["error"] = f"{type(error).__name__}: {error}"
    record["seconds"] = round(time.monotonic() - started, 1)
    return record


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="a tenth of the sizes")
    parser.add_argument("--python-src", type=Path, help="run the Python peers on this src/")
    parser.add_argument("--examples", type=Path, help="the echo agent's directory for --python-src")
    parser.add_argument(
        "--baseline",
        type=Path,
        help="a checkout (src/, examples/) whose Python peers run too, each after its twin",
    )
    parser.add_argument("--only", action="append", help="scenario keys to run")
    parser.add_argument(
        "--target", action="append", choices=["python", "typescript", "client"], help="default: all"
    )
    parser.add_argument("--json", type=Path, help="also write the records to this file")
    args = parser.parse_args(argv)
    wanted = set(args.target or ["python", "typescript", "client"])
    targets = build_targets(wanted, args.python_src, args.examples, args.baseline)
    rows: list[dict[str, Any]] = []
    for key, what, run in scenarios(args.quick):
        if args.only and key not in args.only:
            continue
        for target in targets:
            if target.side == "client" and key not in CLIENT_SCENARIOS:
                continue
            record = measure(key, what, target, run)
            print(json.dumps(record), flush=True)
            rows.append(record)
    if args.json is not None:
        args.json.parent.mkdir(parents=True, exist_ok=True)  # e.g. the git-ignored .bench/
        args.json.write_text("".join(json.dumps(record) + "\n" for record in rows))
    print()
    for record in rows:
        figures = ", ".join(
            f"{k}={v}" for k, v in record.items() if k not in ("scenario", "what", "target")
        )
        print(f"| {record['what']} | {record['target']} | {figures} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
