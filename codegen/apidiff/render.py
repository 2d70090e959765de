"""Text and JSON renderings of a :class:`DiffReport`."""

from __future__ import annotations

import json
from dataclasses import asdict
from typing import Any

from .model import Category, Change, DiffReport, SchemaDiff

_MARK = {"added": "+", "removed": "-"}
_FOLD_AFTER = 8
"""Description-only and annotation-only changes are folded into a name list past this many."""
_ADVICE = {
    "major": "breaking changes: bump the MAJOR version",
    "minor": "additions only: bump the MINOR version",
    "patch": "docs/annotations only: bump the PATCH version",
    "none": "no API change",
}


def to_json(report: DiffReport) -> dict[str, Any]:
    """A JSON-ready dict: summary per file and category, then every change."""
    return {
        "bump": report.bump.value,
        "only_old": report.only_old,
        "only_new": report.only_new,
        "schemas": [_schema_json(s) for s in report.schemas],
    }


def _schema_json(diff: SchemaDiff) -> dict[str, Any]:
    return {
        "label": diff.label,
        "old_path": diff.old_path,
        "new_path": diff.new_path,
        "bump": diff.bump.value,
        "methods": {"old": diff.methods_old, "new": diff.methods_new},
        "defs": {"old": diff.defs_old, "new": diff.defs_new},
        "counts": {c.value: diff.count(c) for c in Category},
        "url_only_descriptions": diff.url_only_descriptions,
        "changes": [{**asdict(c), "category": c.category.value} for c in diff.changes],
        "lenient_parsing": [_lenient_line(c) for c in lenient_changes(diff)],
    }


def to_text(report: DiffReport, *, verbose: bool = False) -> str:
    lines: list[str] = []
    for path in report.only_old:
        lines.append(f"- schema file removed: {path} (wire-breaking)")
    for path in report.only_new:
        lines.append(f"+ schema file added: {path} (wire-additive)")
    for diff in report.schemas:
        lines.extend(_schema_text(diff, verbose))
    lines.append("")
    lines.append(f"Suggested bump: {report.bump.value.upper()} ({_ADVICE[report.bump.value]})")
    return "\n".join(lines)


def _schema_text(diff: SchemaDiff, verbose: bool) -> list[str]:
    counts = ", ".join(f"{diff.count(c)} {c.value}" for c in Category if diff.count(c))
    lines = [
        "",
        f"== {diff.label}: {diff.old_path} -> {diff.new_path}",
        f"   methods {diff.methods_old} -> {diff.methods_new}, "
        f"defs {diff.defs_old} -> {diff.defs_new}; "
        f"{counts or 'no changes'}; bump {diff.bump.value}",
    ]
    if diff.url_only_descriptions:
        lines.append(
            f"   ({diff.url_only_descriptions} descriptions differed only in doc URLs: ignored)"
        )
    for category in Category:
        changes = [c for c in diff.changes if c.category is category]
        if not changes:
            continue
        lines.append(f"  {category.value} ({len(changes)}):")
        foldable = category in (Category.DESCRIPTION_ONLY, Category.ANNOTATION_ONLY)
        if foldable and not verbose and len(changes) > _FOLD_AFTER:
            lines.extend(_folded(changes))
        else:
            lines.extend(f"    {_line(c)}" for c in changes)
    lenient = lenient_changes(diff)
    if lenient:
        lines.append(
            f"  lenient parsing, x-deserialize-* ({len(lenient)}): what the models salvage"
        )
        lines.extend(f"    {_lenient_line(c)}" for c in lenient)
    return lines


_LENIENT = "x-deserialize-"


def lenient_changes(diff: SchemaDiff) -> list[Change]:
    """The ``x-deserialize-*`` annotation changes: annotation-only for the wire, but they
    change what the generated models salvage (``acp_runtime._lenient``), so they are always
    listed, never folded."""
    return [c for c in diff.changes if c.subject == "annotation" and c.detail.startswith(_LENIENT)]


def _lenient_line(change: Change) -> str:
    """``+ default-on-null NewSessionRequest.mcpServers`` (``-`` when a rule went away)."""
    rule, _, values = change.detail.removeprefix(_LENIENT).partition(": ")
    mark = "+" if values.endswith("-> true") else "-" if values.startswith("true ->") else "~"
    return f"{mark} {rule} {change.path}"


def _line(change: Change) -> str:
    mark = _MARK.get(change.action, "~")
    action = "" if change.action in _MARK else f" {change.action}"
    detail = f": {change.detail}" if change.detail else ""
    return f"{mark} {change.subject}{action} {change.path}{detail}"


def _folded(changes: list[Change]) -> list[str]:
    """One line per def touched (``Foo (3)``), wrapped; ``--verbose`` lists them all."""
    per_def: dict[str, int] = {}
    for change in changes:
        root = change.path.split(".", 1)[0].split("[", 1)[0]
        per_def[root] = per_def.get(root, 0) + 1
    words = [f"{name} ({n})" if n > 1 else name for name, n in per_def.items()]
    lines: list[str] = []
    current = "   "
    for word in words:
        if len(current) + len(word) > 100:
            lines.append(current.rstrip(","))
            current = "   "
        current += f" {word},"
    lines.append(current.rstrip(","))
    lines.append("    (pass --verbose to list each change)")
    return lines


def dumps(report: DiffReport) -> str:
    return json.dumps(to_json(report), indent=2)
