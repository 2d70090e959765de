"""Run a coroutine in the current task and learn whether it suspended.

The dispatch loop runs a request handler's coroutine one step itself, in its own task:
``next(coro.__await__(), FINISHED)`` is what the coroutine yielded to the event loop the
first time it suspended, or :data:`FINISHED` if it returned instead. A handler that
answers at once so costs no task, no wrapper around it and no exception: ``next`` with a
default steps it in C, and a coroutine that returns ``None`` ends the step without
raising ``StopIteration`` (``coro.send(None)`` would raise one, with its traceback, for
every such handler). Only a coroutine that suspended is then awaited on, through
:class:`Resumed`, after the loop handed the reading over to a new task. Driving it by
hand in the same task keeps everything a backend ties to a task (cancel scopes, trio's
wake-ups, context variables) exactly as a plain ``await`` would.
"""

from __future__ import annotations

from collections.abc import Coroutine, Generator
from typing import Any

FINISHED: Any = object()
"""The first step's outcome for a coroutine that returned without suspending (no event
loop yields this object)."""


class Resumed:
    """``await Resumed(coro, yielded)`` is the rest of ``await coro`` for a coroutine
    whose first step suspended it at ``yielded``."""

    __slots__ = ("_coro", "_yielded")

    def __init__(self, coro: Coroutine[Any, Any, None], yielded: Any) -> None:
        self._coro = coro
        self._yielded = yielded

    def __await__(self) -> Generator[Any, Any, None]:
        return _forward(self._coro, self._yielded)


def _forward(coro: Coroutine[Any, Any, None], yielded: Any) -> Generator[Any, Any, None]:
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
            except StopIteration:
                return
        else:
            try:
                yielded = coro.send(value)
            except StopIteration:
                return
