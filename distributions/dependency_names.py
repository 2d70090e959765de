"""Refuse a dependency on a name this repository neither builds nor declares.

A requirement on a distribution name is a promise that whatever the package index serves under
that name is ours or one we chose. This project's former names are unsafe: the index serves
unrelated projects as ``acp-runtime`` and ``acp-sdk``, so a generated package requiring
``acp-runtime`` made pip install someone else's code (dependency confusion), and
``acp-generated-v1``/``-v2`` were never published, so anyone could register them. Every
requirement of a built distribution must therefore name either a distribution built from this
repository (``distributions.toml``, or the root project itself) or a third-party package the
root ``pyproject.toml`` declares, and never a former name.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

from distributions.catalog import Distribution

TAKEN_NAMES = frozenset({"acp-runtime", "acp-sdk"})
"""Former names of this project that the package index serves for other projects."""
RETIRED_NAMES = TAKEN_NAMES | {"acp-generated-v1", "acp-generated-v2"}
"""Every former name: no distribution may be called so or depend on one."""


@dataclass(frozen=True)
class KnownNames:
    """The names a requirement may use: ours, and the third-party ones the root declares."""

    own: frozenset[str]
    third_party: frozenset[str]

    def problem(self, requirement: str) -> str | None:
        """Why ``requirement`` may not be a dependency, or ``None`` when it may."""
        name = canonicalize_name(Requirement(requirement).name)
        if name in TAKEN_NAMES:
            return f"{requirement!r} names {name}, which another project holds on the index"
        if name in RETIRED_NAMES:
            return f"{requirement!r} names {name}, a retired name anyone could register"
        if name in self.own or name in self.third_party:
            return None
        return (
            f"{requirement!r} names {name}, which this repository does not build and the root "
            "pyproject.toml does not declare"
        )


def known_names(dists: Iterable[Distribution], project: dict[str, Any]) -> KnownNames:
    """Our distribution names (catalog and root project) and the root's third-party names."""
    own = {canonicalize_name(d.name) for d in dists} | {canonicalize_name(project["name"])}
    declared: list[str] = list(project.get("dependencies", []))
    for group in project.get("optional-dependencies", {}).values():
        declared.extend(group)
    third_party = {canonicalize_name(Requirement(spec).name) for spec in declared} - own
    return KnownNames(frozenset(own), frozenset(third_party))


def problems(names: KnownNames, requirements: Iterable[str]) -> list[str]:
    """Every refused requirement among ``requirements``, with the reason."""
    return [p for p in (names.problem(r) for r in requirements) if p is not None]
