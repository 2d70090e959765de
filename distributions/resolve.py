"""Fill in what a distribution's metadata needs: version, dependencies, Python range."""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass, field
from pathlib import Path

from distributions import versions
from distributions.catalog import Distribution, runtime_of


@dataclass(frozen=True)
class Resolved:
    """A distribution with every derived fact filled in."""

    dist: Distribution
    version: str
    dependencies: list[str]
    requires_python: str
    runtime_range: str
    """What generated packages require of the runtime (also set on the runtime, for show)."""
    schema_release: str = ""
    """Upstream spelling of the schema release a generated package follows (runtime: empty)."""
    schema_origin: str = ""
    """Where that release comes from, for people (runtime: empty)."""
    extras: dict[str, list[str]] = field(default_factory=dict[str, list[str]])
    """Optional-dependency groups, by extra name."""


def resolve_all(
    dists: list[Distribution],
    only: Collection[str] = (),
    pyproject: Path = versions.ROOT_PYPROJECT,
    lock: Path = versions.SCHEMA_LOCK,
) -> list[Resolved]:
    """Resolve the distributions keyed in ``only`` (default: all), in catalog order.

    Generated packages depend on the runtime's compatible range.
    """
    project = versions.root_project(pyproject)
    runtime = runtime_of(dists)
    runtime_version = versions.runtime_version(project)
    runtime_range = versions.compatible_range(runtime_version)
    requires_python = str(project["requires-python"])
    resolved: list[Resolved] = []
    for dist in dists:
        if only and dist.key not in only:
            continue
        third_party = versions.root_requirements(project, dist.requires)
        if dist.protocol is None:
            extras = versions.root_extras(project, dist.extras)
            resolved.append(
                Resolved(
                    dist,
                    str(runtime_version),
                    third_party,
                    requires_python,
                    runtime_range,
                    extras=extras,
                )
            )
            continue
        release, origin = versions.locked_schema_release(dist.protocol, lock)
        resolved.append(
            Resolved(
                dist,
                str(versions.generated_version(release, dist.post)),
                [f"{runtime.name}{runtime_range}", *third_party],
                requires_python,
                runtime_range,
                release,
                origin,
            )
        )
    return resolved
