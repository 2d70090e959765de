"""Find and pair the schema files of two schema sets (single files or directories)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from .keywords import obj
from .model import DiffReport
from .schemas import diff_schemas

SCHEMA_GLOB = "schema*.json"
"""``schema.json`` and ``schema.unstable.json``; ``meta*.json`` is not read."""


class InputError(Exception):
    """An input path is missing, empty or not a JSON schema."""


def schema_files(root: Path) -> dict[str, Path]:
    """Schema files under ``root`` keyed by their path relative to it (``v1/schema.json``)."""
    if root.is_file():
        return {root.name: root}
    if not root.is_dir():
        raise InputError(f"{root}: no such file or directory")
    found = {
        p.relative_to(root).as_posix(): p for p in sorted(root.rglob(SCHEMA_GLOB)) if p.is_file()
    }
    if not found:
        raise InputError(f"{root}: no {SCHEMA_GLOB} files inside")
    return found


def load_schema(path: Path) -> dict[str, Any]:
    try:
        data: Any = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise InputError(f"{path}: {exc}") from exc
    schema = obj(data)
    if schema is None or "$defs" not in schema:
        raise InputError(f"{path}: not a JSON schema with $defs")
    return schema


def diff_paths(old: Path, new: Path) -> DiffReport:
    """Diff two schema files, or every same-named schema file of two directories.

    Two files are always compared with each other, whatever their names.
    """
    if old.is_file() != new.is_file() and old.exists() and new.exists():
        raise InputError(f"{old} and {new}: give two files or two directories")
    if old.is_file() and new.is_file():
        pairs = {new.name: (old, new)}
        only_old: list[str] = []
        only_new: list[str] = []
    else:
        before, after = schema_files(old), schema_files(new)
        pairs = {key: (before[key], after[key]) for key in sorted(before) if key in after}
        only_old = sorted(set(before) - set(after))
        only_new = sorted(set(after) - set(before))
    report = DiffReport(only_old=only_old, only_new=only_new)
    for label, (old_file, new_file) in pairs.items():
        report.schemas.append(
            diff_schemas(
                load_schema(old_file),
                load_schema(new_file),
                label=label,
                old_path=str(old_file),
                new_path=str(new_file),
            )
        )
    return report
