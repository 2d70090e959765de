"""Locate the locked schemas and generated packages the codegen tests run against."""

from __future__ import annotations

import importlib
import json
import shutil
from dataclasses import dataclass
from functools import cache
from types import ModuleType
from typing import Any

import pytest

from codegen.fetch import fetch, is_cached
from codegen.lock import VARIANTS, LockError, load_lock


def require_schemas(version: str | None = None) -> None:
    """Have the locked schema files of ``version`` (the current release if None, every
    locked release if "all") in schema/cache/, or skip the calling test saying why.

    A fresh clone has none: they are fetched here as ``make fetch-schemas`` does (``npm
    pack`` of the locked release, every byte checked against schema/lock.json), so that
    ``make test`` checks the generated code against its schemas without another command.
    Without npm, or if the fetch fails, the tests that need them skip instead."""
    current, releases = load_lock()
    wanted = list(releases) if version == "all" else [version or current]
    for name in wanted:
        why = _fetched(name)
        if why:
            pytest.skip(why)


@cache
def _fetched(version: str) -> str:
    """Empty once ``version`` is in the cache; else why it is not (asked once a session)."""
    release = load_lock()[1][version]
    if is_cached(release):
        return ""
    if shutil.which("npm") is None:
        return f"schemas {release.version} not fetched and npm not found: run `make fetch-schemas`"
    try:
        fetch(release)
    except LockError as error:
        return f"schemas {release.version} could not be fetched: {error}"
    return ""


@dataclass(frozen=True)
class Package:
    key: str  # "v1/unstable"
    package: str  # "acp_generated.v1.unstable"

    @property
    def models(self) -> ModuleType:
        return importlib.import_module(f"{self.package}.models")

    @property
    def methods(self) -> ModuleType:
        return importlib.import_module(f"{self.package}.methods")

    @property
    def raw_schema(self) -> dict[str, Any]:
        return _raw_schema(self.key)


@cache
def _raw_schema(key: str) -> dict[str, Any]:
    require_schemas()
    current, releases = load_lock()
    locked = releases[current].files[key]
    return json.loads(locked.cache_path.read_text(encoding="utf-8"))


PACKAGES = [Package(key, package) for key, package, _ in VARIANTS]
IDS = [p.key for p in PACKAGES]
