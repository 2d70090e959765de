"""The agent's stderr log (REL-3): never blocks on a stderr nobody reads, stays bounded,
says what it dropped, and ``log_nothing`` writes nothing at all."""

from __future__ import annotations

import logging
import os
import subprocess
import sys
import time
from collections.abc import Iterator

import pytest

from acp_runtime._stderr_log import FLUSH_TIMEOUT, WRITE_BYTES
from acp_runtime.tracing import StderrLogHandler

logger = logging.getLogger("acp_runtime.test_stderr_log")


@pytest.fixture
def pipe() -> Iterator[tuple[int, int]]:
    read_fd, write_fd = os.pipe()
    yield read_fd, write_fd
    for fd in (read_fd, write_fd):
        try:
            os.close(fd)
        except OSError:
            pass


def fill(fd: int) -> None:
    """Fill a pipe until a write would block: its reader has stopped reading."""
    os.set_blocking(fd, False)
    try:
        while True:
            os.write(fd, b"." * 65536)
    except BlockingIOError:
        pass
    finally:
        os.set_blocking(fd, True)


def read_all(fd: int) -> bytes:
    os.set_blocking(fd, False)
    data = b""
    try:
        while chunk := os.read(fd, 1 << 20):
            data += chunk
    except BlockingIOError:
        pass
    return data


def read_until(fd: int, end: bytes) -> bytes:
    """Read as the editor would, until ``end`` arrives (at most 5 s)."""
    data = b""
    deadline = time.monotonic() + 5
    while not data.endswith(end):
        assert time.monotonic() < deadline, data[-200:]
        data += read_all(fd)
        time.sleep(0.01)
    return data


def handler_dropped(lines: list[str]) -> int:
    return int(lines[-1].split()[0].lstrip("["))


def attached(handler: StderrLogHandler) -> logging.Logger:
    handler.setFormatter(logging.Formatter("%(message)s"))
    logger.addHandler(handler)
    logger.setLevel(logging.INFO)
    logger.propagate = False
    return logger


def detach(handler: StderrLogHandler) -> None:
    logger.removeHandler(handler)
    logger.propagate = True
    handler.close()


def test_rel3_records_reach_the_descriptor_in_order(pipe: tuple[int, int]) -> None:
    read_fd, write_fd = pipe
    handler = StderrLogHandler(fd=write_fd)
    log = attached(handler)
    try:
        for n in range(100):
            log.info("record %d", n)
        handler.flush()
        assert read_all(read_fd).decode().splitlines() == [f"record {n}" for n in range(100)]
    finally:
        detach(handler)


def test_rel3_a_stderr_nobody_reads_never_blocks_and_the_loss_is_reported(
    pipe: tuple[int, int],
) -> None:
    read_fd, write_fd = pipe
    fill(write_fd)
    handler = StderrLogHandler(fd=write_fd, max_queued_bytes=64 * 1024)
    log = attached(handler)
    try:
        started = time.monotonic()
        # 10,000 records (about 500 KB) overflow the 64 KiB queue eight times over; 50,000
        # took 6.7 s of a 5.5 s bound on a 2-core machine at load average 8, without blocking
        for n in range(10_000):
            log.info("record %d with some padding to make it longer", n)
        handler.flush()  # bounded: stderr does not move
        assert time.monotonic() - started < 5 + FLUSH_TIMEOUT
        # At most 64 KiB queued, one write of WRITE_BYTES blocked in the writer and what room
        # the full pipe still had (under a page) got through; CI saw 7,930 dropped
        shortest = len(b"record 0 with some padding to make it longer\n")
        assert handler.dropped >= 10_000 - (64 * 1024 + WRITE_BYTES + 4096) // shortest
        assert handler._queued <= 64 * 1024  # pyright: ignore[reportPrivateUsage]
        log.info("after")  # dropped too: the queue is full
        text = read_until(read_fd, b"stderr was not being read]\n").lstrip(b".").decode()
        lines = text.splitlines()
        assert lines[0] == "record 0 with some padding to make it longer"
        dropped = handler_dropped(lines)
        assert lines[-1] == f"[{dropped} log records dropped: stderr was not being read]"
        assert len(lines) - 1 + dropped == 10_001  # every record written or counted
        log.info("later")  # stderr is read again: records flow
        assert read_until(read_fd, b"later\n") == b"later\n"
    finally:
        detach(handler)


def test_rel3_a_closed_stderr_drops_records_quietly(pipe: tuple[int, int]) -> None:
    read_fd, write_fd = pipe
    os.close(read_fd)  # writes now fail (EPIPE; Python ignores SIGPIPE)
    handler = StderrLogHandler(fd=write_fd)
    log = attached(handler)
    try:
        for n in range(10):
            log.info("record %d", n)
        handler.flush()
        log.info("after")  # dropped, no error
    finally:
        detach(handler)


AGENT = """
import logging, sys, warnings
from acp_runtime.tracing import log_nothing, log_to_stderr
if sys.argv[1] == "quiet":
    log_nothing()
else:
    log_to_stderr(logging.INFO, fmt="[test] %(message)s")
logging.getLogger("x").warning("a warning")
logging.getLogger("x").info("some info")
warnings.warn("a python warning")
"""


@pytest.mark.parametrize("mode", ["quiet", "loud"])
def test_rel3_log_nothing_writes_nothing_and_log_to_stderr_writes_through_the_handler(
    mode: str,
) -> None:
    done = subprocess.run(
        [sys.executable, "-c", AGENT, mode], capture_output=True, text=True, timeout=30
    )
    assert done.returncode == 0
    if mode == "quiet":
        assert done.stderr == ""
    else:
        lines = done.stderr.splitlines()
        assert lines[:2] == ["[test] a warning", "[test] some info"]
        assert "a python warning" in lines[2]
