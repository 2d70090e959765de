"""Spawn an agent subprocess and talk to it over its stdin/stdout.

Leaving the ``async with`` block shuts the agent down in escalating steps, each
bounded in time, so a stuck agent can never hang its client:

1. close its stdin (a well-behaved agent exits at EOF), keep reading and
   discarding its stdout so it is never blocked flushing, wait ``exit_timeout``;
2. SIGTERM, wait ``terminate_timeout``;
3. SIGKILL, wait.

On POSIX the agent runs in a new process group (``new_process_group=True``) and
steps 2-3 signal the whole group, so launchers such as ``npx`` or ``uv run`` do not
leave their real agent behind. Shutdown runs shielded from cancellation.
"""

from __future__ import annotations

import os
import signal
import subprocess
from collections.abc import Callable, Iterable, Mapping, Sequence
from types import TracebackType
from typing import IO, Any, Literal

import anyio
from anyio.abc import ByteReceiveStream, ByteSendStream, Process, TaskGroup

from ._framing import DEFAULT_MAX_MESSAGE_BYTES, EagerReceiver, LineReader, LineTransport
from ._stdio import FdReceiveStream, FdSendStream
from ._transport import MessageTooLarge

StderrHandling = Literal["inherit", "discard"] | Callable[[bytes], object] | int | IO[Any]
"""``"inherit"`` (the agent writes to our stderr), ``"discard"``, a callable that gets
each stderr line (without line ending; blank lines skipped), or a file descriptor /
file object passed to the child as is."""

STDERR_LINE_LIMIT = 1024 * 1024
"""Longer stderr lines reach the callable cut to their first KiB."""

Command = str | os.PathLike[str] | Sequence[str | os.PathLike[str]]


def spawn_agent(
    command: Command,
    *,
    cwd: str | os.PathLike[str] | None = None,
    env: Mapping[str, str] | None = None,
    stderr: StderrHandling = "inherit",
    max_message_bytes: int = DEFAULT_MAX_MESSAGE_BYTES,
    exit_timeout: float = 2.0,
    terminate_timeout: float = 2.0,
    new_process_group: bool = True,
) -> AgentProcess:
    """Describe an agent process; ``async with`` starts it and yields its transport.

    Args:
        command: an argument list, or a single executable path; never run through a
            shell (pass ``["sh", "-c", line]`` for that).
        cwd: working directory of the agent; ours when None.
        env: the agent's whole environment; ours when None.
        stderr: what happens to the agent's stderr (see :data:`StderrHandling`).
        max_message_bytes: per-line limit for messages from the agent.
        exit_timeout: how long to wait for the agent to exit after its stdin closed.
        terminate_timeout: how long to wait after SIGTERM before SIGKILL.
        new_process_group: POSIX only; run the agent in its own process group and
            signal the whole group on shutdown.
    """
    return AgentProcess(
        command,
        cwd=cwd,
        env=env,
        stderr=stderr,
        max_message_bytes=max_message_bytes,
        exit_timeout=exit_timeout,
        terminate_timeout=terminate_timeout,
        new_process_group=new_process_group and os.name == "posix",
    )


class AgentProcess:
    """A running agent: a :class:`~acp_runtime._transport.Transport` plus its process.

    Use through :func:`spawn_agent`; the transport methods work inside the
    ``async with`` block only.
    """

    def __init__(
        self,
        command: Command,
        *,
        cwd: str | os.PathLike[str] | None,
        env: Mapping[str, str] | None,
        stderr: StderrHandling,
        max_message_bytes: int,
        exit_timeout: float,
        terminate_timeout: float,
        new_process_group: bool,
    ) -> None:
        # anyio hands a lone string to the shell; an agent command is never a shell line.
        self._argv: Sequence[str | os.PathLike[str]] = (
            [command] if isinstance(command, (str, os.PathLike)) else command
        )
        self._cwd = cwd
        self._env = env
        self._stderr: StderrHandling = stderr
        self._max_message_bytes = max_message_bytes
        self._exit_timeout = exit_timeout
        self._terminate_timeout = terminate_timeout
        self._new_process_group = new_process_group
        self._process: Process | None = None
        self._transport: LineTransport | None = None
        self._task_group: TaskGroup | None = None
        self._stderr_done: anyio.Event | None = None

    @property
    def process(self) -> Process:
        """The anyio process handle (pid, returncode, signals)."""
        if self._process is None:
            raise RuntimeError("the agent has not been started; use `async with`")
        return self._process

    @property
    def pid(self) -> int:
        return self.process.pid

    @property
    def returncode(self) -> int | None:
        """Exit status once the agent has exited (negative: killed by that signal)."""
        return self.process.returncode

    @property
    def transport(self) -> LineTransport:
        if self._transport is None:
            raise RuntimeError("the agent has not been started; use `async with`")
        return self._transport

    async def receive(self) -> bytes:
        return await self.transport.receive()

    async def send(self, message: bytes) -> None:
        await self.transport.send(message)

    def send_nowait(self, message: bytes) -> bool:
        return self.transport.send_nowait(message)

    def send_burst_nowait(self, messages: Iterable[bytes]) -> int:
        return self.transport.send_burst_nowait(messages)

    def set_eager_receiver(self, receiver: EagerReceiver | None) -> bool:
        return self.transport.set_eager_receiver(receiver)

    async def send_many(self, messages: Sequence[bytes]) -> None:
        await self.transport.send_many(messages)

    async def send_eof(self) -> None:
        """Close the agent's stdin; its remaining output can still be received."""
        await self.transport.send_eof()

    async def aclose(self) -> None:
        """Close both pipes; the process itself is reaped when the block exits."""
        await self.transport.aclose()

    async def __aenter__(self) -> AgentProcess:
        if self._process is not None:
            raise RuntimeError("an AgentProcess runs once; call spawn_agent again")
        stderr_target = _stderr_target(self._stderr)
        stderr_callback = self._stderr if callable(self._stderr) else None
        process, (receive_stream, send_stream) = await _open_with_pipes(
            self._argv,
            stderr=stderr_target,
            cwd=self._cwd,
            env=self._env,
            start_new_session=self._new_process_group,
        )
        self._process = process
        self._transport = LineTransport(
            receive_stream, send_stream, max_message_bytes=self._max_message_bytes
        )
        # The task group never sees the body's exception (see __aexit__), so a
        # user's error is not wrapped in an ExceptionGroup.
        self._task_group = anyio.create_task_group()
        await self._task_group.__aenter__()
        self._stderr_done = anyio.Event()
        if stderr_callback is not None and process.stderr is not None:
            self._task_group.start_soon(
                _forward_lines, process.stderr, stderr_callback, self._stderr_done
            )
        else:
            self._stderr_done.set()
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        assert self._task_group is not None and self._stderr_done is not None
        try:
            with anyio.CancelScope(shield=True):
                await self._shut_down()
                # Grandchildren may hold stderr open: give the forwarder a bounded grace.
                with anyio.move_on_after(self._exit_timeout):
                    await self._stderr_done.wait()
                self._task_group.cancel_scope.cancel()
        finally:
            await self._task_group.__aexit__(None, None, None)

    async def _shut_down(self) -> None:
        process, transport = self.process, self.transport
        if not await self._exited_after_eof():
            self._signal(force=False)
            if not await self._exited_within(self._terminate_timeout):
                self._signal(force=True)
                await process.wait()
        await transport.aclose()
        await process.aclose()  # closes the pipes' event-loop transports; already reaped

    async def _exited_after_eof(self) -> bool:
        """Close the agent's stdin and wait for it to exit, all within ``exit_timeout``.

        Closing stdin waits for a send in progress, which an agent that does not read
        can block forever: the timeout covers that wait too.
        """
        with anyio.move_on_after(self._exit_timeout):
            async with anyio.create_task_group() as tg:
                tg.start_soon(self._discard_incoming)
                try:
                    await self.transport.send_eof()
                except (anyio.BrokenResourceError, anyio.ClosedResourceError):
                    pass
                await self.process.wait()
                tg.cancel_scope.cancel()
            return True
        return False

    async def _exited_within(self, seconds: float) -> bool:
        with anyio.move_on_after(seconds):
            await self.process.wait()
            return True
        return False

    async def _discard_incoming(self) -> None:
        """Keep the agent's stdout flowing during shutdown so its last writes complete."""
        while True:
            try:
                await self.transport.receive()
            except MessageTooLarge:
                continue
            except (
                anyio.EndOfStream,
                anyio.ClosedResourceError,
                anyio.BrokenResourceError,
                anyio.BusyResourceError,
            ):
                return

    def _signal(self, *, force: bool) -> None:
        """SIGTERM, or SIGKILL when ``force``; to the whole group if it has its own."""
        process = self.process
        if process.returncode is not None:
            return
        if self._new_process_group:
            try:
                os.killpg(process.pid, signal.SIGKILL if force else signal.SIGTERM)
            except ProcessLookupError:
                pass
        elif force:
            process.kill()
        else:
            process.terminate()


def _stderr_target(stderr: StderrHandling) -> int | IO[Any] | None:
    if stderr == "inherit":
        return None
    if stderr == "discard":
        return subprocess.DEVNULL
    if callable(stderr):
        return subprocess.PIPE
    return stderr


async def _forward_lines(
    stream: ByteReceiveStream, callback: Callable[[bytes], object], done: anyio.Event
) -> None:
    reader = LineReader(stream, max_line_bytes=STDERR_LINE_LIMIT)
    try:
        while True:
            try:
                callback(await reader.receive())
            except MessageTooLarge as exc:
                callback(exc.prefix)
    except (anyio.EndOfStream, anyio.ClosedResourceError, anyio.BrokenResourceError):
        pass
    finally:
        done.set()


async def _open_with_pipes(
    argv: Sequence[str | os.PathLike[str]], *, stderr: Any, **options: Any
) -> tuple[Process, tuple[ByteReceiveStream, ByteSendStream]]:
    """Start the agent with its stdin and stdout on pipes; returns our ends as streams.

    On POSIX the pipes are made here and read/written with the ``stdio`` fd streams,
    which can write a small message at once from synchronous code and (on asyncio)
    keep the read end registered with the loop; elsewhere anyio's process pipes.
    """
    if os.name != "posix":
        process = await anyio.open_process(
            argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=stderr, **options
        )
        assert process.stdin is not None and process.stdout is not None
        return process, (process.stdout, process.stdin)
    child_stdin, our_stdin = os.pipe()  # non-inheritable; the child gets dup2'd copies
    our_stdout, child_stdout = os.pipe()
    try:
        process = await anyio.open_process(
            argv, stdin=child_stdin, stdout=child_stdout, stderr=stderr, **options
        )
    except BaseException:
        os.close(our_stdin)
        os.close(our_stdout)
        raise
    finally:
        os.close(child_stdin)
        os.close(child_stdout)
    return process, (
        FdReceiveStream(our_stdout, close_fd=True),
        FdSendStream(our_stdin, close_fd=True),
    )
