"""ACP code generator: locked JSON Schemas -> ``acp_generated`` packages.

Callable from Python (``codegen.generate()``, ``codegen.check()``) and from the shell
(``python -m codegen generate|check|diff|fetch``).
"""

from __future__ import annotations

from .pipeline import differences, generate_all, write


def generate(release: str | None = None) -> list[str]:
    """Regenerate every package from the locked schemas; returns the changed paths."""
    return write(generate_all(release))


def check(release: str | None = None) -> list[str]:
    """Paths whose committed content differs from a fresh generation (empty = up to date)."""
    return differences(generate_all(release))


__all__ = ["check", "generate"]
