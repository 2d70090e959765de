"""Keyword plumbing for the generated builders and remote facades.

A model dumps only the fields that were set (``exclude_unset``), so passing ``meta=None``
would send ``"_meta": null``. The generated helpers pass their optional arguments through
:func:`given`, which leaves out the ones that are ``None``: a helper call puts on the wire
exactly what the model built with only the given arguments would.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, TypeVar

T = TypeVar("T")


def given(**fields: object) -> dict[str, Any]:
    """The keyword arguments that are not ``None``."""
    return {name: value for name, value in fields.items() if value is not None}


def listed(items: Sequence[T] | None) -> list[T] | None:
    """``list(items)``, keeping ``None`` (an optional list field left unset)."""
    return None if items is None else list(items)
