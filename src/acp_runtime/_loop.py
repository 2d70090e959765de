"""Schedule a callback on the running event loop from anywhere, including a GC finalizer.

Finalizers (``weakref.finalize``) run wherever the garbage collector happens to run:
possibly in the middle of the event loop's own bookkeeping, possibly in another thread.
They must not touch loop state directly, so they hand their work to the loop's
thread-safe "call soon" entry point and return.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable

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
