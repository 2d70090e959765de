"""Agent subprocesses: talking over pipes and bounded, leak-free shutdown."""

from __future__ import annotations

import json
import os
import random
import signal
import sys
import time
from pathlib import Path

import anyio
import pytest

from acp_runtime import AgentProcess, spawn_agent

FAKE_AGENT = str(Path(__file__).with_name("fake_agent.py"))
posix_only = pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals and /proc")


def fake_agent(*args: str) -> list[str]:
    return [sys.executable, FAKE_AGENT, *args]


def open_fds() -> set[str]:
    return set(os.listdir("/proc/self/fd"))


@pytest.mark.anyio
async def test_echo_agent_round_trip_and_clean_exit_leak_no_fds(anyio_backend: str) -> None:
    before = open_fds()
    with anyio.fail_after(10):
        async with spawn_agent(fake_agent("echo", anyio_backend, "4096")) as agent:
            for i in range(20):
                await agent.send(b'{"n":%d}' % i)
            assert [await agent.receive() for _ in range(20)] == [
                b'{"n":%d}' % i for i in range(20)
            ]
    assert agent.returncode == 0  # exited by itself at stdin EOF
    assert open_fds() == before


@pytest.mark.anyio
async def test_agent_reports_an_over_limit_line_and_keeps_going(anyio_backend: str) -> None:
    with anyio.fail_after(10):
        async with spawn_agent(fake_agent("echo", anyio_backend, "100")) as agent:
            await agent.send(b'{"big":"' + b"x" * 5000 + b'"}')
            await agent.send(b'{"small":1}')
            assert json.loads(await agent.receive()) == {"too_large": 100}
            assert await agent.receive() == b'{"small":1}'


@pytest.mark.anyio
async def test_large_messages_cross_the_pipes_intact(anyio_backend: str) -> None:
    payload = b'{"data":"' + os.urandom(3 * 1024 * 1024).hex().encode() + b'"}'
    with anyio.fail_after(20):
        async with spawn_agent(fake_agent("echo", anyio_backend, str(len(payload)))) as agent:
            async with anyio.create_task_group() as tg:
                tg.start_soon(agent.send, payload)  # larger than a pipe: both sides must stream
                assert await agent.receive() == payload
    assert agent.returncode == 0


@pytest.mark.anyio
async def test_send_eof_lets_the_agent_finish_while_output_is_still_read(
    anyio_backend: str,
) -> None:
    with anyio.fail_after(10):
        async with spawn_agent(fake_agent("echo", anyio_backend, "4096")) as agent:
            await agent.send(b'{"last":true}')
            await agent.send_eof()
            assert await agent.receive() == b'{"last":true}'
            with pytest.raises(anyio.EndOfStream):
                await agent.receive()
            assert await agent.process.wait() == 0


@pytest.mark.anyio
async def test_stdio_isolation_keeps_prints_and_child_processes_off_the_protocol(
    anyio_backend: str,
) -> None:
    stderr: list[bytes] = []
    with anyio.fail_after(10):
        async with spawn_agent(
            fake_agent("echo-stray", anyio_backend), stderr=stderr.append
        ) as agent:
            assert await agent.receive() == b'{"ready":true}'
            await agent.send(b'{"not":"for the child"}')
            assert await agent.receive() == b'{"not":"for the child"}'
            with pytest.raises(anyio.EndOfStream):
                await agent.receive()
    assert agent.returncode == 0
    assert stderr == [b"stray print", b"child read b''"]


@pytest.mark.anyio
async def test_transport_closed_inside_the_block_still_shuts_down_cleanly(
    anyio_backend: str,
) -> None:
    before = open_fds()
    with anyio.fail_after(10):
        async with spawn_agent(fake_agent("echo", anyio_backend, "4096")) as agent:
            await agent.send(b"{}")
            assert await agent.receive() == b"{}"
            await agent.aclose()  # what a connection does when its block ends
            await agent.aclose()
    assert agent.returncode == 0
    assert open_fds() == before


@posix_only
@pytest.mark.anyio
async def test_agent_that_ignores_stdin_eof_is_terminated_in_bounded_time() -> None:
    before = open_fds()
    started = time.monotonic()
    with anyio.fail_after(10):
        async with spawn_agent(fake_agent("ignore-eof"), exit_timeout=0.3) as agent:
            assert json.loads(await agent.receive()) == {"ready": True}
    assert agent.returncode == -signal.SIGTERM
    assert time.monotonic() - started < 5
    assert open_fds() == before


@posix_only
@pytest.mark.anyio
async def test_shutdown_is_bounded_while_a_send_is_stuck_on_an_agent_that_does_not_read() -> None:
    outcome: list[type[Exception]] = []

    async def send_forever(agent: AgentProcess) -> None:
        try:
            await agent.send(b'{"big":"' + b"x" * (8 * 1024 * 1024) + b'"}')
        except (anyio.BrokenResourceError, anyio.ClosedResourceError) as exc:
            outcome.append(type(exc))

    agent = spawn_agent(fake_agent("ignore-eof"), exit_timeout=0.3)
    started = time.monotonic()
    with anyio.fail_after(10):
        async with anyio.create_task_group() as tg:
            async with agent:
                assert json.loads(await agent.receive()) == {"ready": True}
                tg.start_soon(send_forever, agent)  # the agent never reads: this send blocks
                await anyio.wait_all_tasks_blocked()
    assert agent.returncode == -signal.SIGTERM
    assert len(outcome) == 1  # the stuck send failed instead of hanging
    assert time.monotonic() - started < 5


@posix_only
@pytest.mark.anyio
async def test_agent_that_ignores_sigterm_is_killed_in_bounded_time() -> None:
    before = open_fds()
    started = time.monotonic()
    with anyio.fail_after(10):
        async with spawn_agent(
            fake_agent("ignore-term"), exit_timeout=0.2, terminate_timeout=0.3
        ) as agent:
            assert json.loads(await agent.receive()) == {"ready": True}
    assert agent.returncode == -signal.SIGKILL
    assert time.monotonic() - started < 5
    assert open_fds() == before


@posix_only
@pytest.mark.anyio
async def test_shutdown_signals_the_whole_process_group() -> None:
    with anyio.fail_after(10):
        async with spawn_agent(fake_agent("grandchild"), exit_timeout=0.2) as agent:
            grandchild = json.loads(await agent.receive())["grandchild"]
            pidfd = os.pidfd_open(grandchild)  # readable once that process has exited
    try:
        with anyio.fail_after(5):
            await anyio.wait_readable(pidfd)
    finally:
        os.close(pidfd)
        try:
            os.kill(grandchild, signal.SIGKILL)  # no-op when the test passed
        except ProcessLookupError:
            pass


@pytest.mark.anyio
async def test_stderr_lines_reach_the_callback() -> None:
    lines: list[bytes] = []
    with anyio.fail_after(10):
        async with spawn_agent(fake_agent("stderr"), stderr=lines.append) as agent:
            pass
    assert agent.returncode == 0
    assert lines == [b"first line", b"second line"]


@pytest.mark.anyio
async def test_stderr_can_be_discarded() -> None:
    with anyio.fail_after(10):
        async with spawn_agent(fake_agent("stderr"), stderr="discard") as agent:
            pass
    assert agent.returncode == 0


@pytest.mark.anyio
async def test_env_and_cwd_are_passed_to_the_agent(tmp_path: Path) -> None:
    env = {**os.environ, "ACP_TEST_VALUE": "from-test"}
    with anyio.fail_after(10):
        async with spawn_agent(fake_agent("env"), cwd=tmp_path, env=env) as agent:
            seen = json.loads(await agent.receive())
    assert seen == {"cwd": str(tmp_path), "value": "from-test"}


@pytest.mark.anyio
async def test_an_error_in_the_block_propagates_unwrapped_and_the_agent_is_reaped() -> None:
    agent = spawn_agent(fake_agent("ignore-eof"), exit_timeout=0.2)
    with anyio.fail_after(10):
        with pytest.raises(LookupError):
            async with agent:
                await agent.receive()
                raise LookupError("from the block")
    assert agent.returncode is not None


@pytest.mark.anyio
async def test_a_cancelled_block_still_reaps_the_agent() -> None:
    agent = spawn_agent(fake_agent("ignore-eof"), exit_timeout=0.2)
    running = anyio.Event()

    async def run() -> None:
        async with agent:
            await agent.receive()
            running.set()
            await anyio.sleep_forever()

    async with anyio.create_task_group() as tg:
        tg.start_soon(run)
        with anyio.fail_after(10):
            await running.wait()
        assert agent.returncode is None
        tg.cancel_scope.cancel()
    assert agent.returncode == -signal.SIGTERM


@pytest.mark.anyio
async def test_transport_methods_outside_the_block_raise() -> None:
    agent = spawn_agent(fake_agent("echo", "asyncio", "10"))
    with pytest.raises(RuntimeError):
        await agent.send(b"{}")


@pytest.mark.slow
@pytest.mark.anyio
async def test_soak_many_messages_of_mixed_sizes_round_trip_intact(anyio_backend: str) -> None:
    rng = random.Random(7)
    messages = [
        b'{"n":%d,"pad":"%s"}' % (i, b"z" * rng.choice((0, 10, 200, 5000, 70000)))
        for i in range(50_000)
    ]
    before = open_fds()
    with anyio.fail_after(300):
        async with spawn_agent(fake_agent("echo", anyio_backend, "100000")) as agent:

            async def send_all() -> None:
                for message in messages:
                    await agent.send(message)

            async with anyio.create_task_group() as tg:
                tg.start_soon(send_all)
                for expected in messages:
                    assert await agent.receive() == expected
    assert agent.returncode == 0
    assert open_fds() == before


@pytest.mark.anyio
async def test_an_agent_process_runs_only_once() -> None:
    agent = spawn_agent(fake_agent("echo", "asyncio", "10"))
    with anyio.fail_after(10):
        async with agent:
            pass
        with pytest.raises(RuntimeError):
            async with agent:
                pass


@posix_only
@pytest.mark.anyio
async def test_a_single_string_is_an_executable_path_never_a_shell_line(tmp_path: Path) -> None:
    script = tmp_path / "agent with space"
    script.write_text(f'#!/bin/sh\nexec "{sys.executable}" "{FAKE_AGENT}" env\n')
    script.chmod(0o755)
    with anyio.fail_after(10):
        async with spawn_agent(str(script)) as agent:
            assert json.loads(await agent.receive())["value"] is None
        with pytest.raises(FileNotFoundError):
            async with spawn_agent(f"{script}; echo injected"):
                pass
