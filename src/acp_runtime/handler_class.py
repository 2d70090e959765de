"""Checks on the generated handler classes' subclasses, run when they are attached.

A handler method is registered by its name (``session_prompt``), so a misspelt one
(``session_promt``) would be silently skipped and the peer would get -32601. Refusing
the class at ``attach`` turns that into an error at start-up that names the method meant.
"""

from __future__ import annotations

import difflib
import inspect

_CHECKED: set[type] = set()


def refuse_unknown_methods(cls: type, base: type, side: str) -> None:
    """Raise ``TypeError`` if ``cls`` has a public async method that ``base`` does not declare.

    ``side`` ("agent" or "client") words the message. Helpers meant for the handler's own
    use are fine with a leading underscore.
    """
    if cls in _CHECKED:
        return
    known = sorted(name for name in dir(base) if not name.startswith("_"))
    unknown = [
        f"{owner.__name__}.{name}"
        + (
            f" (did you mean {close[0]!r}?)"
            if (close := difflib.get_close_matches(name, known, n=1))
            else ""
        )
        for owner in cls.__mro__[: cls.__mro__.index(base)]
        for name, value in vars(owner).items()
        if not name.startswith("_") and name not in known and inspect.iscoroutinefunction(value)
    ]
    if unknown:
        raise TypeError(
            f"{', '.join(unknown)}: no ACP method the {side} handles has this name, so it would "
            f"never be called; rename it, or start a helper's name with '_'"
        )
    _CHECKED.add(cls)
