"""Checks on the generated handler classes' subclasses, run when they are attached.

A handler method is registered by its name (``session_prompt``), so a misspelt one
(``session_promt``) would be silently skipped and the peer would get -32601. Refusing
the class at ``attach`` turns that into an error at start-up that names the method meant.
A public async method that is the class's own API, not a handler, says so with
:func:`not_a_handler`.
"""

from __future__ import annotations

import difflib
import inspect
from collections.abc import Callable
from typing import TypeVar

F = TypeVar("F", bound=Callable[..., object])

_CHECKED: set[type] = set()
_NOT_A_HANDLER = "__acp_not_a_handler__"


def not_a_handler(method: F) -> F:
    """Mark a public async method of a handler class as its own API (``wait_idle``), so
    ``attach`` does not take its name for a misspelt ACP method."""
    setattr(method, _NOT_A_HANDLER, True)
    return method


def refuse_unknown_methods(cls: type, base: type, side: str, *others: type) -> None:
    """Raise ``TypeError`` if ``cls`` has a public async method that ``base`` does not
    declare and that is not marked :func:`not_a_handler`.

    The message names the closest method of ``base``, or says the name is a method of
    another side (``others``); ``side`` ("agent" or "client") words it.
    """
    if cls in _CHECKED:
        return
    known = _public(base)
    foreign = {name for other in others for name in _public(other)} - known
    unknown: list[str] = []
    for owner in cls.__mro__[: cls.__mro__.index(base)]:
        for name, value in vars(owner).items():
            if (
                name.startswith("_")
                or name in known
                or not inspect.iscoroutinefunction(value)
                or getattr(value, _NOT_A_HANDLER, False)
            ):
                continue
            close = difflib.get_close_matches(name, sorted(known), n=1, cutoff=0.6)
            if name in foreign:
                unknown.append(f"{owner.__name__}.{name} (a method the other side handles)")
            elif close:
                unknown.append(f"{owner.__name__}.{name} (did you mean {close[0]!r}?)")
            else:
                unknown.append(f"{owner.__name__}.{name}")
    if unknown:
        raise TypeError(
            f"{', '.join(unknown)}: no ACP method the {side} handles has this name, so it "
            "would never be called; rename it, start a helper's name with '_', or mark the "
            "class's own API with @acp_runtime.not_a_handler"
        )
    _CHECKED.add(cls)


def _public(cls: type) -> set[str]:
    return {name for name in dir(cls) if not name.startswith("_")}
