"""Locate the locked schemas and generated packages the codegen tests run against."""

from __future__ import annotations

import importlib
import json
from dataclasses import dataclass
from functools import cache
from types import ModuleType
from typing import Any

import pytest

from codegen.lock import VARIANTS, load_lock


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
    current, releases = load_lock()
    locked = releases[current].files[key]
    if not locked.cache_path.exists():
        pytest.skip(
            f"{locked.cache_path} missing: run `python -m codegen fetch` (make fetch-schemas)"
        )
    return json.loads(locked.cache_path.read_text(encoding="utf-8"))


PACKAGES = [Package(key, package) for key, package, _ in VARIANTS]
IDS = [p.key for p in PACKAGES]
