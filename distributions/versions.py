"""Version numbers and requirement ranges, all derived from files already in the repository.

- The runtime's version is the root ``pyproject.toml``'s ``[project] version``.
- A generated package's version is the ACP schema release it was generated from, read from
  the codegen lock (``schema/lock.json``): the locked file's ``schema_release``, or else the
  version in the spec release tag whose file has exactly the locked sha256
  (``github_asset.tag``, ``schema-v1.25.0`` → ``1.25.0``, found by ``distributions.schema_tags``;
  the protocol's unstable file must match the same tag, since the package ships both), or
  else, where no tag matches (``tag: null``, ``tag_search`` says what was compared), the
  version of the npm bundle the files were taken from: the one release we can vouch for.
  PEP 440 normalizes ``2.0.0-alpha.3`` to ``2.0.0a3``.
- A generated package requires the runtime it was built with, up to the next breaking
  release (``>=0.1.0,<0.2`` while the runtime is 0.x, ``>=1.2.0,<2`` from 1.0 on).
- Third-party requirements are the root project's, picked by name, so each range is
  written once.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from pathlib import Path
from typing import Any, NamedTuple

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name
from packaging.version import Version

from distributions.catalog import read_toml

REPO_ROOT = Path(__file__).resolve().parent.parent
ROOT_PYPROJECT = REPO_ROOT / "pyproject.toml"
SCHEMA_LOCK = REPO_ROOT / "schema" / "lock.json"

_TAG = re.compile(r"^schema-v(?P<release>\d.*)$")


class VersionSourceError(Exception):
    """A version cannot be derived: the file it comes from lacks the fact."""


def root_project(pyproject: Path = ROOT_PYPROJECT) -> dict[str, Any]:
    """The ``[project]`` table of the repository's own ``pyproject.toml``."""
    project: dict[str, Any] = read_toml(pyproject)["project"]
    return project


def runtime_version(project: dict[str, Any]) -> Version:
    return Version(project["version"])


def compatible_range(version: Version) -> str:
    """From ``version`` up to, not including, the next release allowed to break the API."""
    if version.major == 0:
        upper = f"0.{version.minor + 1}"
    else:
        upper = str(version.major + 1)
    return f">={version.base_version},<{upper}"


def root_requirements(project: dict[str, Any], names: Iterable[str]) -> list[str]:
    """The root project's requirement strings for ``names``, in the order given."""
    by_name = {
        canonicalize_name(Requirement(spec).name): spec for spec in project.get("dependencies", [])
    }
    found: list[str] = []
    for name in names:
        spec = by_name.get(canonicalize_name(name))
        if spec is None:
            raise VersionSourceError(f"{name!r} is not a dependency of the root pyproject.toml")
        found.append(spec)
    return found


def root_extras(project: dict[str, Any], names: Iterable[str]) -> dict[str, list[str]]:
    """The root project's optional-dependency groups ``names``, requirement strings as written."""
    groups: dict[str, list[str]] = project.get("optional-dependencies", {})
    missing = [name for name in names if name not in groups]
    if missing:
        raise VersionSourceError(
            f"no optional-dependencies group {missing} in the root pyproject.toml"
        )
    return {name: list(groups[name]) for name in names}


class SchemaRelease(NamedTuple):
    """The schema release a generated package follows, and where that fact comes from."""

    release: str
    """As upstream spells it: ``1.25.0``, ``2.0.0-alpha.3``."""
    origin: str
    """For people: ``schema 1.25.0 (tag schema-v1.25.0)``, ``npm bundle 2.4.0 (...)``."""


def locked_schema_release(protocol: str, lock_path: Path = SCHEMA_LOCK) -> SchemaRelease:
    """The schema release ``protocol``'s package is generated from, with its origin."""
    lock: dict[str, Any] = json.loads(lock_path.read_text(encoding="utf-8"))
    current: str = lock["current"]
    files: dict[str, Any] = lock["releases"][current]["files"]
    try:
        locked: dict[str, Any] = files[protocol]
    except KeyError:
        raise VersionSourceError(
            f"{lock_path}: release {current!r} locks no schema file for {protocol!r}"
        ) from None
    if locked.get("schema_release"):
        release = str(locked["schema_release"])
        return SchemaRelease(release, f"schema {release}")
    tag = _tag(locked)
    match = _TAG.match(tag)
    if match:
        unstable = files.get(f"{protocol}/unstable")
        if unstable is not None and _tag(unstable) != tag:
            raise VersionSourceError(
                f"{lock_path}: {protocol!r} matches {tag} but {protocol}/unstable matches "
                f"{_tag(unstable) or 'no tag'}; the package ships both files, so it cannot be "
                "numbered after either: lock files from one release"
            )
        return SchemaRelease(match["release"], f"schema {match['release']} (tag {tag})")
    # No spec tag holds these exact files, so the npm bundle they were taken from is the one
    # release we can vouch for (the lock's tag_search says which tags were compared).
    npm: dict[str, Any] = lock["releases"][current].get("npm") or {}
    bundle: str = npm.get("version") or ""
    if bundle:
        return SchemaRelease(bundle, f"npm bundle {bundle}, no schema tag matches")
    raise VersionSourceError(
        f"{lock_path}: the {protocol!r} file of release {current!r} names no schema release "
        "(no `schema_release`, no `github_asset.tag` like `schema-v1.25.0`, no npm version); "
        "a generated package is versioned after its schema release, so record it there"
    )


def _tag(locked: dict[str, Any]) -> str:
    asset: dict[str, Any] = locked.get("github_asset") or {}
    tag: str = asset.get("tag") or ""
    return tag


def schema_release(protocol: str, lock_path: Path = SCHEMA_LOCK) -> str:
    """The schema release (as upstream spells it) that ``protocol``'s package is generated from."""
    return locked_schema_release(protocol, lock_path).release


def generated_version(release: str, post: int) -> Version:
    """The package version for a schema release; ``post`` > 0 marks a generator-only rebuild."""
    version = Version(release)
    if post:
        version = Version(f"{version.public}.post{post}")
    return version
