"""Diff of one old and one new schema: message branches, methods, then every def."""

from __future__ import annotations

from .keywords import JsonObject
from .methods import MethodTable, read_method_table
from .model import Category, MethodEntry, SchemaDiff
from .nodes import NodeDiffer
from .renames import renamed_defs
from .wire import WireForms


def diff_schemas(
    old: JsonObject, new: JsonObject, *, label: str = "", old_path: str = "", new_path: str = ""
) -> SchemaDiff:
    """Compare two parsed ACP JSON schemas."""
    old_defs: JsonObject = old.get("$defs", {})
    new_defs: JsonObject = new.get("$defs", {})
    old_table, new_table = read_method_table(old), read_method_table(new)
    renames = renamed_defs(old_table, new_table, old_defs, new_defs)
    differ = NodeDiffer(WireForms(old_defs), WireForms(new_defs), renames)
    _diff_branches(differ, old_table, new_table)
    _diff_methods(differ, old_table, new_table)
    envelopes = old_table.envelope_defs | new_table.envelope_defs
    _diff_defs(differ, old_defs, new_defs, renames, envelopes)
    return SchemaDiff(
        label=label,
        old_path=old_path,
        new_path=new_path,
        changes=differ.changes,
        methods_old=len(old_table.entries),
        methods_new=len(new_table.entries),
        defs_old=len(old_defs),
        defs_new=len(new_defs),
        url_only_descriptions=differ.url_only_descriptions,
    )


def _diff_branches(differ: NodeDiffer, old: MethodTable, new: MethodTable) -> None:
    for branch in new.branches:
        if branch not in old.branches:
            differ.add(Category.WIRE_ADDITIVE, "envelope", "added", branch, "root message branch")
    for branch in old.branches:
        if branch not in new.branches:
            differ.add(Category.WIRE_BREAKING, "envelope", "removed", branch, "root message branch")


def _signature(entry: MethodEntry) -> str:
    if entry.result is None:
        return entry.params
    return f"{entry.params} -> {entry.result}"


def _method_path(entry: MethodEntry) -> str:
    return f"{entry.method} ({entry.kind}, handled by {entry.handler})"


def _diff_methods(differ: NodeDiffer, old: MethodTable, new: MethodTable) -> None:
    added = [k for k in sorted(new.entries) if k not in old.entries]
    removed = [k for k in sorted(old.entries) if k not in new.entries]
    for method, kind, handler in list(removed):
        moved = [k for k in added if k[:2] == (method, kind)]
        if moved:  # e.g. mcp/message: x-side "both" split into one side per kind
            sides = ", ".join(k[2] for k in moved)
            differ.add(
                Category.WIRE_BREAKING,
                "method",
                "changed",
                f"{method} ({kind})",
                f"handled by {handler} -> {sides}",
            )
            removed.remove((method, kind, handler))
            added = [k for k in added if k not in moved]
    for key in added:
        entry = new.entries[key]
        differ.add(
            Category.WIRE_ADDITIVE, "method", "added", _method_path(entry), _signature(entry)
        )
    for key in removed:
        entry = old.entries[key]
        differ.add(
            Category.WIRE_BREAKING, "method", "removed", _method_path(entry), _signature(entry)
        )
    for key in sorted(old.entries):
        after = new.entries.get(key)
        before = old.entries[key]
        if after is not None and _signature(before) != _signature(after):
            differ.add(
                Category.PYTHON_API,
                "method",
                "changed",
                _method_path(after),
                f"{_signature(before)}  =>  {_signature(after)}",
            )


def _diff_defs(
    differ: NodeDiffer,
    old_defs: JsonObject,
    new_defs: JsonObject,
    renames: dict[str, str],
    envelopes: frozenset[str],
) -> None:
    """Diff every def except the envelopes (their content is the method table)."""
    renamed_to = set(renames.values())
    for name in sorted(new_defs):
        if name not in old_defs and name not in renamed_to and name not in envelopes:
            differ.add(Category.WIRE_ADDITIVE, "def", "added", name)
    for name in sorted(old_defs):
        if name in envelopes:
            continue
        if name in renames:
            target = renames[name]
            same = differ.old_wire.same(old_defs[name], differ.new_wire, new_defs[target])
            note = " (same wire shape)" if same else ""
            differ.add(Category.PYTHON_API, "def", "renamed", name, f"-> {target}{note}")
            differ.diff(old_defs[name], new_defs[target], target)
        elif name not in new_defs:
            differ.add(
                Category.PYTHON_API,
                "def",
                "removed",
                name,
                "generated name disappears; wire effect shows where it was referenced",
            )
        else:
            differ.diff(old_defs[name], new_defs[name], name)
