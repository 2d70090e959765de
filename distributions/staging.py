"""Lay out one distribution's source tree: its packages, a pyproject.toml and a README.

The tree is built in a scratch directory outside the repository, so the build backend sees
exactly these files and nothing the repository's ``.gitignore`` or other packages add.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from string import Template

from distributions.catalog import Distribution
from distributions.resolve import Resolved

SRC = Path(__file__).resolve().parent.parent / "src"
TEMPLATES = Path(__file__).with_name("templates")
_BYTECODE = shutil.ignore_patterns("__pycache__", "*.pyc", "*.pyo")


class StagingError(Exception):
    """The sources do not have the shape a distribution promises."""


def check_sources(dist: Distribution, src: Path = SRC) -> None:
    """Refuse to build a package tree that lacks ``py.typed`` or breaks the namespace."""
    for package in dist.packages:
        root = src / package
        if not (root / "__init__.py").is_file():
            raise StagingError(f"{root} is not a package (no __init__.py)")
        if not (root / "py.typed").is_file():
            raise StagingError(f"{root} has no py.typed marker (PEP 561)")
        parent = root.parent
        if parent != src and (parent / "__init__.py").exists():
            raise StagingError(
                f"{parent}/__init__.py exists: {parent.name} must stay a namespace package "
                "so per-version distributions install side by side"
            )


def stage(resolved: Resolved, into: Path, src: Path = SRC) -> Path:
    """Write the distribution's source tree under ``into`` and return its root."""
    dist = resolved.dist
    check_sources(dist, src)
    root = into / dist.name
    for package in dist.packages:
        shutil.copytree(src / package, root / "src" / package, ignore=_BYTECODE)
    source_dirs = [f"src/{package}" for package in dist.packages]
    fields = {
        "name": dist.name,
        "version": resolved.version,
        "summary": dist.summary,
        "requires_python": resolved.requires_python,
        "dependencies": json.dumps(resolved.dependencies),
        "source_dirs": json.dumps(source_dirs),
        "sdist_include": json.dumps([*source_dirs, "pyproject.toml", "README.md"]),
        "protocol": dist.protocol or "",
        "schema_release": resolved.schema_release,
        "schema_origin": resolved.schema_origin,
        "runtime_range": resolved.runtime_range,
        "optional_dependencies": _optional_dependencies(resolved.extras),
    }
    readme = "README.generated.md" if dist.is_generated else "README.runtime.md"
    for template, target in (("pyproject.toml.template", "pyproject.toml"), (readme, "README.md")):
        text = Template((TEMPLATES / template).read_text(encoding="utf-8")).substitute(fields)
        (root / target).write_text(text, encoding="utf-8")
    return root


def _optional_dependencies(extras: dict[str, list[str]]) -> str:
    """The ``[project.optional-dependencies]`` table, or nothing when there are no extras."""
    if not extras:
        return ""
    lines = [f"{name} = {json.dumps(requirements)}" for name, requirements in extras.items()]
    return "\n[project.optional-dependencies]\n" + "\n".join(lines) + "\n"
