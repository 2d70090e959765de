"""Await a coroutine in the current task and learn when it first suspends.

The dispatch loop runs a request handler as a plain ``await`` in its own task (no new
task, nothing to pay for a handler that answers at once) and hands the reading over to
a new task only when the handler first suspends. Driving the coroutine step by step
here, in the same task, keeps everything a backend ties to a task (cancel scopes, trio's
wake-ups, context variables) exactly as a plain ``await`` would.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Generator
from typing import Any, Generic, TypeVar

T = TypeVar("T")


class UntilSuspended(Generic[T]):
    """``await UntilSuspended(coro, on_suspend)`` is ``await coro``, except that
    ``on_suspend()`` runs (once, synchronously) the first time ``coro`` suspends."""

    __slots__ = ("_coro", "_on_suspend")

    def __init__(self, coro: Awaitable[T], on_suspend: Callable[[], None]) -> None:
        self._coro = coro
        self._on_suspend = on_suspend

    def __await__(self) -> Generator[Any, Any, T]:
        coro = self._coro.__await__()
        try:
            yielded = coro.send(None)
        except StopIteration as stop:
            return stop.value  # type: ignore[no-any-return]
        self._on_suspend()
        return (yield from _forward(coro, yielded))


def _forward(coro: Generator[Any, Any, T], yielded: Any) -> Generator[Any, Any, T]:
    """What ``yield from coro`` does, from a coroutine already past its first step."""
    while True:
        try:
            value = yield yielded
        except GeneratorExit:
            coro.close()
            raise
        except BaseException as exc:  # the loop throws cancellation in: pass it on
            try:
                yielded = coro.throw(exc)
            except StopIteration as stop:
                return stop.value  # type: ignore[no-any-return]
        else:
            try:
                yielded = coro.send(value)
            except StopIteration as stop:
                return stop.value  # type: ignore[no-any-return]
