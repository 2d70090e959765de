"""File-descriptor streams behind the stdio transport.

The stdio transport itself runs in a child process (``fake_agent.py echo``) in
``test_process.py`` over real pipes; here the streams are tested in-process over
``os.pipe()`` and regular files, plus a child whose stdio are regular files.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import anyio
import pytest

from acp_runtime._stdio import FdReceiveStream, FdSendStream, is_pollable

FAKE_AGENT = str(Path(__file__).with_name("fake_agent.py"))
pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="POSIX pipes")


@pytest.fixture
def pipe() -> Iterator[tuple[int, int]]:
    read_fd, write_fd = os.pipe()
    yield read_fd, write_fd
    for fd in (read_fd, write_fd):
        try:
            os.close(fd)
        except OSError:
            pass  # closed by the test


@pytest.mark.anyio
async def test_pipe_carries_more_than_its_buffer_with_partial_writes(
    pipe: tuple[int, int],
) -> None:
    read_fd, write_fd = pipe
    payload = os.urandom(2 * 1024 * 1024)  # Linux pipes buffer 64 KiB: writes must wait
    receiver, sender = FdReceiveStream(read_fd), FdSendStream(write_fd)
    received = bytearray()

    async def read_all() -> None:
        while len(received) < len(payload):
            received.extend(await receiver.receive())

    with anyio.fail_after(10):
        async with anyio.create_task_group() as tg:
            tg.start_soon(read_all)
            await sender.send(payload)
    assert received == payload
    await sender.aclose()
    await receiver.aclose()


@pytest.mark.anyio
async def test_eof_after_the_writer_closes(pipe: tuple[int, int]) -> None:
    read_fd, write_fd = pipe
    receiver = FdReceiveStream(read_fd)
    os.write(write_fd, b"tail")
    os.close(write_fd)
    with anyio.fail_after(5):
        assert await receiver.receive() == b"tail"
        with pytest.raises(anyio.EndOfStream):
            await receiver.receive()


@pytest.mark.anyio
async def test_aclose_wakes_a_parked_receive_and_restores_blocking_mode(
    pipe: tuple[int, int],
) -> None:
    read_fd, _ = pipe
    receiver = FdReceiveStream(read_fd)
    assert not os.get_blocking(read_fd)
    outcome: list[type[BaseException]] = []

    async def receive() -> None:
        try:
            await receiver.receive()
        except anyio.ClosedResourceError as exc:
            outcome.append(type(exc))

    with anyio.fail_after(5):
        async with anyio.create_task_group() as tg:
            tg.start_soon(receive)
            await anyio.wait_all_tasks_blocked()
            await receiver.aclose()
    assert outcome == [anyio.ClosedResourceError]
    assert os.get_blocking(read_fd)  # fd 0 must not stay non-blocking for later users
    with pytest.raises(anyio.ClosedResourceError):
        await receiver.receive()


@pytest.mark.anyio
async def test_writing_to_a_pipe_without_reader_is_a_broken_resource(
    pipe: tuple[int, int],
) -> None:
    read_fd, write_fd = pipe
    os.close(read_fd)
    sender = FdSendStream(write_fd)
    with pytest.raises(anyio.BrokenResourceError):
        await sender.send(b"{}\n")


@pytest.mark.anyio
async def test_close_fd_option_closes_the_descriptor(pipe: tuple[int, int]) -> None:
    read_fd, _ = pipe
    await FdReceiveStream(read_fd, close_fd=True).aclose()
    with pytest.raises(OSError):
        os.fstat(read_fd)


@pytest.mark.anyio
async def test_regular_files_use_the_thread_fallback(tmp_path: Path) -> None:
    source, target = tmp_path / "in", tmp_path / "out"
    source.write_bytes(b"line one\nline two\n")
    receiver = FdReceiveStream(os.open(source, os.O_RDONLY), close_fd=True)
    sender = FdSendStream(os.open(target, os.O_WRONLY | os.O_CREAT), close_fd=True)
    assert not is_pollable(receiver.fd)
    with anyio.fail_after(5):
        data = await receiver.receive()
        with pytest.raises(anyio.EndOfStream):
            await receiver.receive()
        await sender.send(data)
    await receiver.aclose()
    await sender.aclose()
    assert target.read_bytes() == b"line one\nline two\n"


def test_pipes_are_pollable_and_regular_files_are_not(
    pipe: tuple[int, int], tmp_path: Path
) -> None:
    assert is_pollable(pipe[0]) and is_pollable(pipe[1])
    with open(tmp_path / "f", "wb") as file:
        assert not is_pollable(file.fileno())


@pytest.mark.anyio
async def test_stdio_agent_runs_with_regular_files_as_stdin_and_stdout(
    anyio_backend: str, tmp_path: Path
) -> None:
    (tmp_path / "in").write_bytes(b'{"a":1}\r\n\n{"b":2}\n' + b"x" * 100 + b'\n{"c":3}')
    stdin = os.open(tmp_path / "in", os.O_RDONLY)
    stdout = os.open(tmp_path / "out", os.O_WRONLY | os.O_CREAT)
    try:
        with anyio.fail_after(10):
            await anyio.run_process(
                [sys.executable, FAKE_AGENT, "echo", anyio_backend, "50"],
                stdin=stdin,
                stdout=stdout,
                stderr=subprocess.DEVNULL,
            )
    finally:
        os.close(stdin)
        os.close(stdout)
    lines = (tmp_path / "out").read_bytes().split(b"\n")
    assert lines[-1] == b""
    assert [json.loads(line) for line in lines[:-1]] == [
        {"a": 1},
        {"b": 2},
        {"too_large": 50},
        {"c": 3},
    ]


@pytest.mark.anyio
async def test_a_send_cancelled_midway_breaks_the_stream(pipe: tuple[int, int]) -> None:
    read_fd, write_fd = pipe
    sender = FdSendStream(write_fd)
    with anyio.fail_after(5):
        with anyio.CancelScope() as scope:
            async with anyio.create_task_group() as tg:
                tg.start_soon(sender.send, b"x" * (4 * 1024 * 1024))  # more than the pipe holds
                await (
                    anyio.wait_all_tasks_blocked()
                )  # parked in wait_writable after a partial write
                scope.cancel()
    assert 0 < len(os.read(read_fd, 8 * 1024 * 1024)) < 4 * 1024 * 1024
    with pytest.raises(anyio.BrokenResourceError):
        await sender.send(b"{}\n")
    await sender.aclose()


@pytest.mark.anyio
async def test_a_send_cancelled_before_writing_leaves_the_stream_usable(
    pipe: tuple[int, int],
) -> None:
    read_fd, write_fd = pipe
    sender = FdSendStream(write_fd)
    with anyio.CancelScope() as scope:
        scope.cancel()
        await sender.send(b"never\n")
    await sender.send(b"{}\n")
    assert os.read(read_fd, 100) == b"{}\n"
    await sender.aclose()
