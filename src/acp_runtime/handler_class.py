"""Checks on the generated handler classes' subclasses, run when they are attached.

A handler method is registered by its name (``session_prompt``), so a misspelt one
(``session_promt``) would be silently skipped and the peer would get -32601. Refusing
the class at ``attach`` turns that into an error at start-up that names the method meant.
"""

from __future__ import annotations

import difflib
import inspect

_CHECKED: set[type] = set()


def refuse_unknown_methods(cls: type, base: type, side: str, *others: type) -> None:
    """Raise ``TypeError`` if ``cls`` has a public async method that looks meant as a
    handler of ``base`` but names none.

    Looks meant: it is close to one of ``base``'s names, it is a method of another side
    (``others``), or it starts like a method family (``session_``, ``fs_``, ...). Other
    public async methods (``wait_idle``) are the class's own API and are left alone.
    ``side`` ("agent" or "client") words the message.
    """
    if cls in _CHECKED:
        return
    known = _public(base)
    foreign = {name for other in others for name in _public(other)} - known
    families = tuple(f"{name.split('_')[0]}_" for name in known | foreign if "_" in name)
    unknown: list[str] = []
    for owner in cls.__mro__[: cls.__mro__.index(base)]:
        for name, value in vars(owner).items():
            if name.startswith("_") or name in known or not inspect.iscoroutinefunction(value):
                continue
            close = difflib.get_close_matches(name, sorted(known), n=1, cutoff=0.85)
            if name in foreign:
                unknown.append(f"{owner.__name__}.{name} (a method the other side handles)")
            elif close:
                unknown.append(f"{owner.__name__}.{name} (did you mean {close[0]!r}?)")
            elif name.startswith(families):
                unknown.append(f"{owner.__name__}.{name}")
    if unknown:
        raise TypeError(
            f"{', '.join(unknown)}: no ACP method the {side} handles has this name, so it "
            f"would never be called; rename it, or start a helper's name with '_'"
        )
    _CHECKED.add(cls)


def _public(cls: type) -> set[str]:
    return {name for name in dir(cls) if not name.startswith("_")}
