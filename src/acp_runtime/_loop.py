"""Schedule a callback on the running event loop from anywhere, including a GC finalizer.

Finalizers (``weakref.finalize``) run wherever the garbage collector happens to run:
possibly in the middle of the event loop's own bookkeeping, possibly in another thread.
They must not touch loop state directly, so they hand their work to the loop's
thread-safe "call soon" entry point and return.
"""

from __future__ import annotations

import asyncio
import functools
import logging
from collections.abc import Callable, Generator
from types import FunctionType
from typing import Any, Protocol, cast

import anyio

log = logging.getLogger(__name__)

SoonCaller = Callable[[Callable[[], None]], None]


def current_soon_caller() -> SoonCaller:
    """A function that runs a callback soon on the current loop (asyncio or trio).

    The returned function never raises: if the loop is gone, the callback is dropped
    (there is no connection left to act on).
    """
    try:
        loop = asyncio.get_running_loop()
    except RuntimeError:
        return _trio_soon_caller()

    def call_soon(callback: Callable[[], None]) -> None:
        try:
            loop.call_soon_threadsafe(callback)
        except RuntimeError:
            log.debug("event loop closed; dropping %r", callback)

    return call_soon


def _trio_soon_caller() -> SoonCaller:
    import trio

    token = trio.lowlevel.current_trio_token()

    def call_soon(callback: Callable[[], None]) -> None:
        try:
            token.run_sync_soon(callback)
        except trio.RunFinishedError:
            log.debug("trio run finished; dropping %r", callback)

    return call_soon


class Waiter(Protocol):
    """A one-shot wake-up for one awaiting task: ``await waiter`` until :meth:`wake`."""

    def wake(self) -> None: ...

    def __await__(self) -> Generator[Any, None, None]: ...


class _FutureWaiter(asyncio.Future[None]):
    """On asyncio a bare future: awaiting it costs no coroutine frames, and waking it
    no lock or event bookkeeping (an awaited request settles through one of these)."""

    def wake(self) -> None:
        if not self.done():  # cancelled with its awaiting task
            self.set_result(None)


class _EventWaiter:
    __slots__ = ("_event",)

    def __init__(self) -> None:
        self._event = anyio.Event()

    def wake(self) -> None:
        self._event.set()

    def __await__(self) -> Generator[Any, None, None]:
        return self._event.wait().__await__()


def in_asyncio_task() -> bool:
    """Whether the caller runs in an asyncio task, where asyncio's own loop APIs apply.

    False under trio, including trio hosted on an asyncio loop (guest mode), where a loop is
    running but asyncio knows no current task. Asked of asyncio itself, so the remote
    transports need no package of their own (sniffio) to tell the backends apart."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return False
    return asyncio.current_task() is not None


def current_waiter_factory() -> Callable[[], Waiter]:
    """How to make :class:`Waiter` s for tasks of the current backend: futures in an
    asyncio task, anyio events elsewhere (trio, or trio hosted on an asyncio loop)."""
    try:
        loop = asyncio.get_running_loop()
    except RuntimeError:
        return _EventWaiter
    if asyncio.current_task() is None:
        return _EventWaiter
    return lambda: _FutureWaiter(loop=loop)


def current_task_getter() -> Callable[[], object]:
    """A cheap function returning the running task (compared by identity): asyncio's or
    trio's own, without building anyio's ``TaskInfo`` each time.

    On Python 3.10 and 3.11 ``asyncio.current_task`` is Python code that reads one dict;
    reading that dict directly (bound to this loop) saves a Python frame per call, which
    every awaited request pays (the deadlock check)."""
    try:
        loop = asyncio.get_running_loop()
    except RuntimeError:
        return _trio_current_task()
    if asyncio.current_task() is None:  # trio hosted on an asyncio loop
        return _trio_current_task()
    current_task = asyncio.current_task
    if isinstance(current_task, FunctionType):
        tasks = current_task.__globals__.get("_current_tasks")  # what it reads
        if isinstance(tasks, dict):
            return functools.partial(cast("dict[object, object]", tasks).get, loop)
    return current_task


def _trio_current_task() -> Callable[[], object]:
    import trio

    return trio.lowlevel.current_task
