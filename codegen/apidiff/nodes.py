"""Recursive diff of two schema nodes, classifying each difference.

Rules (from the research notes, §4.7), from the point of view of a peer built
against the old schema:

- wire-additive: a new optional field, a new union variant or enum value, a new
  accepted ``type``, a loosened constraint.
- wire-breaking: a removal, a new required field, optional -> required and
  required -> optional (readers can no longer rely on it), a type, format or
  constant change, a tightened constraint, a union turning open or closed, an
  object turning into a union.
- python-api: the wire form is identical but the generated name differs (a
  ``$ref`` to a renamed def, a string hoisted into a newtype).
- annotation-only: ``title``, ``default``, ``x-*`` and friends.
- description-only: doc text, after doc-URL normalization.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from .keywords import (
    DESCRIPTION_KEYS,
    EXACT_CONSTRAINTS,
    LOWER_BOUNDS,
    SKIPPED_KEYS,
    UNION_KEYS,
    UPPER_BOUNDS,
    JsonObject,
    arr,
    as_union,
    collapse_whitespace,
    is_annotation,
    is_pure_union,
    normalize_description,
    obj,
    ref_name,
    type_set,
    union_members,
    unwrap,
)
from .model import Category, Change
from .variants import CATCH_ALL, Variant, is_open, keyed_variants
from .wire import WireForms

_HANDLED = frozenset(
    {
        "type",
        "format",
        "const",
        "enum",
        "$ref",
        "properties",
        "required",
        "items",
        "additionalProperties",
        "allOf",
        *UNION_KEYS,
        *LOWER_BOUNDS,
        *UPPER_BOUNDS,
        *EXACT_CONSTRAINTS,
        *SKIPPED_KEYS,
        *DESCRIPTION_KEYS,
    }
)


def short(value: Any, limit: int = 60) -> str:
    """A compact JSON rendering for change details."""
    text = json.dumps(value, sort_keys=True)
    return text if len(text) <= limit else text[: limit - 3] + "..."


@dataclass
class NodeDiffer:
    """Diffs nodes of an old and a new schema; collects :class:`Change` records."""

    old_wire: WireForms
    new_wire: WireForms
    renames: Mapping[str, str]
    changes: list[Change] = field(default_factory=list[Change])
    url_only_descriptions: int = 0

    def add(
        self, category: Category, subject: str, action: str, path: str, detail: str = ""
    ) -> None:
        self.changes.append(Change(category, subject, action, path, detail))

    # -- entry point -------------------------------------------------------

    def diff(self, old: Any, new: Any, path: str) -> None:
        old_node, new_node = obj(old), obj(new)
        if old_node is None or new_node is None:
            if old != new:  # boolean schemas
                self.add(
                    Category.WIRE_BREAKING, "type", "changed", path, f"{short(old)} -> {short(new)}"
                )
            return
        o, n = unwrap(old_node), unwrap(new_node)
        self._descriptions(o, n, path)
        self._annotations(o, n, path)
        o, n = _align(o, n, self.renames)
        if self._refs(o, n, path):
            return
        self._types(o, n, path)
        self._values(o, n, path)
        self._constraints(o, n, path)
        o, n = self._bases(o, n, path)
        self._properties(o, n, path)
        if "items" in o and "items" in n:
            self.diff(o["items"], n["items"], f"{path}[]")
        self._additional(o, n, path)
        self._all_of(o, n, path)
        self._unions(o, n, path)
        self._unknown_keywords(o, n, path)

    # -- text and annotations ---------------------------------------------

    def _descriptions(self, o: JsonObject, n: JsonObject, path: str) -> None:
        before, after = o.get("description"), n.get("description")
        if before == after:
            return
        if isinstance(before, str) and isinstance(after, str):
            if normalize_description(before) == normalize_description(after):
                if collapse_whitespace(before) != collapse_whitespace(after):
                    self.url_only_descriptions += 1
                return
        action = "added" if before is None else "removed" if after is None else "changed"
        self.add(Category.DESCRIPTION_ONLY, "description", action, path)

    def _annotations(self, o: JsonObject, n: JsonObject, path: str) -> None:
        for key in sorted(k for k in set(o) | set(n) if is_annotation(k)):
            before, after = o.get(key), n.get(key)
            if before != after:
                detail = f"{key}: {short(before)} -> {short(after)}"
                self.add(Category.ANNOTATION_ONLY, "annotation", "changed", path, detail)

    # -- references ----------------------------------------------------------

    def _refs(self, o: JsonObject, n: JsonObject, path: str) -> bool:
        """Compare ``$ref`` targets; True when the nodes need no further structural diff."""
        before, after = o.get("$ref"), n.get("$ref")
        if before is None and after is None:
            return False
        if isinstance(before, str) and isinstance(after, str):
            old_name, new_name = ref_name(before), ref_name(after)
            if self.renames.get(old_name, old_name) == new_name:
                return self._ref_siblings(o, n, path)
            detail = f"{old_name} -> {new_name}"
        else:
            detail = f"{_describe(o)} -> {_describe(n)}"
        if self.old_wire.same(o, self.new_wire, n):
            self.add(Category.PYTHON_API, "type", "changed", path, f"{detail} (same wire shape)")
        else:
            self.add(Category.WIRE_BREAKING, "type", "changed", path, detail)
        return True

    def _ref_siblings(self, o: JsonObject, n: JsonObject, path: str) -> bool:
        """A ``$ref`` with the same target may still carry sibling keywords worth diffing."""
        structural = {k for k in set(o) | set(n) if k != "$ref" and k in _HANDLED}
        structural -= DESCRIPTION_KEYS
        return not structural

    # -- scalars -------------------------------------------------------------

    def _types(self, o: JsonObject, n: JsonObject, path: str) -> None:
        before, after = type_set(o), type_set(n)
        if before and after and not before & after:
            self.add(
                Category.WIRE_BREAKING,
                "type",
                "changed",
                path,
                f"type {'|'.join(sorted(before))} -> {'|'.join(sorted(after))}",
            )
        elif before and after and before != after:
            for added in sorted(after - before):
                self.add(Category.WIRE_ADDITIVE, "type", "added", path, f"now also accepts {added}")
            for removed in sorted(before - after):
                self.add(
                    Category.WIRE_BREAKING, "type", "removed", path, f"no longer accepts {removed}"
                )
        elif bool(before) != bool(after):
            self.add(
                Category.WIRE_BREAKING,
                "type",
                "changed",
                path,
                f"type {sorted(before) or 'any'} -> {sorted(after) or 'any'}",
            )
        before_format, after_format = o.get("format"), n.get("format")
        if before_format != after_format:
            detail = f"format {before_format} -> {after_format}"
            if after_format is None:
                self.add(Category.WIRE_ADDITIVE, "type", "loosened", path, detail)
            else:
                self.add(Category.WIRE_BREAKING, "type", "changed", path, detail)

    def _values(self, o: JsonObject, n: JsonObject, path: str) -> None:
        if o.get("const") != n.get("const") or ("const" in o) != ("const" in n):
            self.add(
                Category.WIRE_BREAKING,
                "type",
                "changed",
                path,
                f"const {short(o.get('const'))} -> {short(n.get('const'))}",
            )
        old_values, new_values = arr(o.get("enum")), arr(n.get("enum"))
        if old_values is None and new_values is None:
            return
        if old_values is None or new_values is None:
            self.add(Category.WIRE_BREAKING, "type", "changed", path, "enum added or dropped")
            return
        for value in new_values:
            if value not in old_values:
                self.add(Category.WIRE_ADDITIVE, "enum-value", "added", f"{path}[{short(value)}]")
        for value in old_values:
            if value not in new_values:
                self.add(Category.WIRE_BREAKING, "enum-value", "removed", f"{path}[{short(value)}]")

    def _constraints(self, o: JsonObject, n: JsonObject, path: str) -> None:
        for key in sorted((set(o) | set(n)) & (LOWER_BOUNDS | UPPER_BOUNDS | EXACT_CONSTRAINTS)):
            before, after = o.get(key), n.get(key)
            if before == after:
                continue
            detail = f"{key}: {short(before)} -> {short(after)}"
            if key in EXACT_CONSTRAINTS or before is None:
                tighter = after is not None
            elif after is None:
                tighter = False
            elif key in LOWER_BOUNDS:
                tighter = after > before
            else:
                tighter = after < before
            if tighter:
                self.add(Category.WIRE_BREAKING, "constraint", "tightened", path, detail)
            else:
                self.add(Category.WIRE_ADDITIVE, "constraint", "loosened", path, detail)

    # -- objects -------------------------------------------------------------

    def _properties(self, o: JsonObject, n: JsonObject, path: str) -> None:
        before: JsonObject = o.get("properties", {})
        after: JsonObject = n.get("properties", {})
        old_required = set(o.get("required", []))
        new_required = set(n.get("required", []))
        for name in after:
            if name in before:
                continue
            if name in new_required:
                self.add(Category.WIRE_BREAKING, "field", "added", f"{path}.{name}", "required")
            else:
                self.add(Category.WIRE_ADDITIVE, "field", "added", f"{path}.{name}", "optional")
        for name in before:
            if name not in after:
                self.add(Category.WIRE_BREAKING, "field", "removed", f"{path}.{name}")
        for name in before:
            if name not in after:
                continue
            sub = f"{path}.{name}"
            if name in new_required and name not in old_required:
                self.add(Category.WIRE_BREAKING, "field", "now-required", sub)
            elif name in old_required and name not in new_required:
                self.add(
                    Category.WIRE_BREAKING,
                    "field",
                    "now-optional",
                    sub,
                    "readers can no longer rely on it",
                )
            self.diff(before[name], after[name], sub)

    def _additional(self, o: JsonObject, n: JsonObject, path: str) -> None:
        before = o.get("additionalProperties", True)
        after = n.get("additionalProperties", True)
        if before == after:
            return
        if isinstance(before, dict) and isinstance(after, dict):
            self.diff(before, after, f"{path}{{*}}")
        elif after is True:
            self.add(
                Category.WIRE_ADDITIVE, "constraint", "loosened", path, "extra keys now allowed"
            )
        else:
            self.add(
                Category.WIRE_BREAKING,
                "constraint",
                "tightened",
                path,
                f"additionalProperties: {short(before)} -> {short(after)}",
            )

    def _bases(self, o: JsonObject, n: JsonObject, path: str) -> tuple[JsonObject, JsonObject]:
        """When the ``allOf`` bases differ, compare fields with the bases' fields merged in.

        schemars hoists inline variants into named defs between releases
        (``{outcome: cancelled}`` -> ``allOf: [CancelledPermissionOutcome]``); the
        merged view reports the fields that really changed.
        """
        before = set(_members_by_ref(o.get("allOf", []), self.renames))
        after = set(_members_by_ref(n.get("allOf", []), {}))
        if before == after:
            return o, n
        same = " (same wire shape)" if self.old_wire.same(o, self.new_wire, n) else ""
        gone = ", ".join(sorted(before - after)) or "nothing"
        new = ", ".join(sorted(after - before)) or "nothing"
        self.add(Category.PYTHON_API, "type", "changed", path, f"built on {gone} -> {new}{same}")
        return _merge_bases(o, self.old_wire.defs), _merge_bases(n, self.new_wire.defs)

    def _all_of(self, o: JsonObject, n: JsonObject, path: str) -> None:
        before = _members_by_ref(o.get("allOf", []), self.renames)
        after = _members_by_ref(n.get("allOf", []), {})
        for key, node in after.items():
            if key in before:
                self.diff(before[key], node, path)
            else:
                self.add(
                    Category.WIRE_BREAKING, "type", "changed", path, f"now also requires {key}"
                )
        for key in before:
            if key not in after:
                self.add(
                    Category.WIRE_BREAKING, "type", "changed", path, f"no longer requires {key}"
                )

    # -- unions --------------------------------------------------------------

    def _unions(self, o: JsonObject, n: JsonObject, path: str) -> None:
        old_members, new_members = union_members(o), union_members(n)
        if old_members is None and new_members is None:
            return
        if old_members is None or new_members is None:
            self.add(
                Category.WIRE_BREAKING,
                "union",
                "changed",
                path,
                "became a union" if old_members is None else "no longer a union",
            )
            return
        before = keyed_variants(old_members, self.renames)
        after = keyed_variants(new_members, {})
        if is_open(before) != is_open(after):
            self.add(
                Category.WIRE_BREAKING,
                "union",
                "changed",
                path,
                "closed -> open (unknown values now accepted)"
                if is_open(after)
                else "open -> closed (unknown values now rejected)",
            )
        added = [v for k, v in after.items() if k not in before]
        removed = [v for k, v in before.items() if k not in after]
        swapped = _swapped(removed, added)
        if swapped is not None:
            old_variant, new_variant = swapped
            self.diff(old_variant.node, new_variant.node, f"{path}[{new_variant.key}]")
            added.remove(new_variant)
            removed.remove(old_variant)
        for variant in added:
            self._variant(Category.WIRE_ADDITIVE, "added", path, variant)
        for variant in removed:
            self._variant(Category.WIRE_BREAKING, "removed", path, variant)
        for key, variant in before.items():
            if key in after:
                self.diff(variant.node, after[key].node, f"{path}[{key}]")

    def _variant(self, category: Category, action: str, path: str, variant: Variant) -> None:
        subject = "enum-value" if variant.is_value else "variant"
        detail = "catch-all" if variant.key.endswith(CATCH_ALL) else ""
        self.add(category, subject, action, f"{path}[{variant.key}]", detail)

    # -- fallbacks -------------------------------------------------------------

    def _unknown_keywords(self, o: JsonObject, n: JsonObject, path: str) -> None:
        for key in sorted(k for k in set(o) | set(n) if k not in _HANDLED and not is_annotation(k)):
            if o.get(key) != n.get(key):
                self.add(
                    Category.WIRE_BREAKING,
                    "constraint",
                    "changed",
                    path,
                    f"{key}: {short(o.get(key))} -> {short(n.get(key))}",
                )


def _swapped(removed: list[Variant], added: list[Variant]) -> tuple[Variant, Variant] | None:
    """One untagged branch swapped for another (``str | None`` -> ``Path | None``)."""
    old = [v for v in removed if not v.is_value and "=" not in v.key]
    new = [v for v in added if not v.is_value and "=" not in v.key]
    if len(old) == 1 and len(new) == 1:
        return old[0], new[0]
    return None


def _align(
    o: JsonObject, n: JsonObject, renames: Mapping[str, str]
) -> tuple[JsonObject, JsonObject]:
    """Rewrite one side so both use the same spelling where the schema allows two.

    A union on one side only: the other side becomes a union too, so a field
    going from ``X`` to ``X | None`` is "null variant added", not "shape changed".
    A bare ``$ref X`` against ``allOf: [X, ...]``: the ref becomes ``allOf: [X]``,
    so the extra fields of the other side are what gets reported.
    """
    if is_pure_union(o) and union_members(n) is None:
        n = as_union(n)
    elif is_pure_union(n) and union_members(o) is None:
        o = as_union(o)
    o_ref, n_ref = o.get("$ref"), n.get("$ref")
    if isinstance(o_ref, str) and n_ref is None and "allOf" in n:
        bases = _members_by_ref(n["allOf"], {})
        if renames.get(ref_name(o_ref), ref_name(o_ref)) in bases:
            o = {**{k: v for k, v in o.items() if k != "$ref"}, "allOf": [{"$ref": o_ref}]}
    elif isinstance(n_ref, str) and o_ref is None and "allOf" in o:
        if ref_name(n_ref) in _members_by_ref(o["allOf"], renames):
            n = {**{k: v for k, v in n.items() if k != "$ref"}, "allOf": [{"$ref": n_ref}]}
    return o, n


def _describe(node: JsonObject) -> str:
    ref = node.get("$ref")
    if isinstance(ref, str):
        return ref_name(ref)
    types = sorted(type_set(node))
    return "|".join(types) if types else "inline schema"


def _merge_bases(node: JsonObject, defs: JsonObject) -> JsonObject:
    """``node`` with the fields of its plain-object ``allOf`` bases merged in."""
    members = arr(node.get("allOf"))
    if members is None:
        return node
    merged = dict(node)
    props: JsonObject = dict(obj(node.get("properties")) or {})
    required: list[Any] = list(arr(node.get("required")) or ())
    kept: list[Any] = []
    for member in members:
        ref = (obj(member) or {}).get("$ref")
        base = obj(defs.get(ref_name(ref))) if isinstance(ref, str) else None
        if base is None or union_members(base) is not None or "allOf" in base:
            kept.append(member)
            continue
        for name, sub in (obj(base.get("properties")) or {}).items():
            props.setdefault(name, sub)
        required.extend(r for r in arr(base.get("required")) or () if r not in required)
    merged["properties"] = props
    merged["required"] = required
    if kept:
        merged["allOf"] = kept
    else:
        merged.pop("allOf", None)
    return merged


def _members_by_ref(members: Any, renames: Mapping[str, str]) -> dict[str, JsonObject]:
    out: dict[str, JsonObject] = {}
    for index, value in enumerate(arr(members) or ()):
        member = obj(value)
        if member is None:
            continue
        ref = member.get("$ref")
        name = ref_name(ref) if isinstance(ref, str) else f"#{index}"
        out[renames.get(name, name)] = member
    return out
