"""The wire form of a schema node: what validates, with every ``$ref`` inlined.

Two nodes with the same wire form accept the same JSON, whatever their names,
descriptions or ``$ref`` structure. The diff uses this to tell a Python-only
change (a string hoisted into a named newtype, a type renamed) from a wire change.
"""

from __future__ import annotations

import json
from typing import Any

from .keywords import (
    DESCRIPTION_KEYS,
    SKIPPED_KEYS,
    UNION_KEYS,
    JsonObject,
    arr,
    as_union,
    is_annotation,
    obj,
    ref_name,
    type_set,
    unwrap,
)

_SCHEMA_LIST_KEYS = frozenset({"allOf", "prefixItems", *UNION_KEYS})
_SCHEMA_VALUE_KEYS = frozenset({"items", "additionalProperties", "contains", "propertyNames"})
_SET_KEYS = frozenset({"required", "enum"})


class WireForms:
    """Computes wire forms against one schema's ``$defs``, caching per def."""

    def __init__(self, defs: JsonObject) -> None:
        self.defs = defs
        self._cache: dict[str, Any] = {}

    def of(self, node: Any) -> Any:
        """The wire form of ``node`` (a schema object or boolean schema)."""
        return self._form(node, ())

    def same(self, old: Any, other: WireForms, new: Any) -> bool:
        """True when ``old`` (in this schema) and ``new`` (in ``other``) accept the same JSON."""
        return _canonical(self.of(old)) == _canonical(other.of(new))

    def _def_form(self, name: str, stack: tuple[str, ...]) -> Any:
        if name in stack:
            return {"$recursive": name}
        if not stack and name in self._cache:
            return self._cache[name]
        target = self.defs.get(name)
        form = {"$missing": name} if target is None else self._form(target, (*stack, name))
        if not stack:
            self._cache[name] = form
        return form

    def _form(self, value: Any, stack: tuple[str, ...]) -> Any:
        node = obj(value)
        if node is None:
            return value
        node = unwrap(node)
        if len(type_set(node)) > 1:
            node = as_union(node)
        out: JsonObject = {}
        for key, item in node.items():
            if (
                key in DESCRIPTION_KEYS
                or key in SKIPPED_KEYS
                or is_annotation(key)
                or key == "$ref"
            ):
                continue
            as_object, as_list = obj(item), arr(item)
            if key == "properties" and as_object is not None:
                out[key] = {name: self._form(sub, stack) for name, sub in as_object.items()}
            elif key in _SCHEMA_LIST_KEYS and as_list is not None:
                # oneOf and anyOf over the disjoint ACP variants accept the same JSON
                target = "anyOf" if key in UNION_KEYS else key
                forms = [self._form(sub, stack) for sub in as_list]
                out[target] = sorted(forms, key=_canonical) if target == "anyOf" else forms
            elif key in _SCHEMA_VALUE_KEYS:
                out[key] = self._form(item, stack)
            elif key in _SET_KEYS and as_list is not None:
                out[key] = sorted(as_list, key=_canonical)
            else:
                out[key] = item
        if out.get("additionalProperties") is True:
            del out["additionalProperties"]  # the JSON Schema default
        ref = node.get("$ref")
        if isinstance(ref, str):
            target_form = self._def_form(ref_name(ref), stack)
            if not out:
                return target_form
            out = {"allOf": [target_form, out]}
        return _flatten_union(out)


def _flatten_union(form: JsonObject) -> Any:
    """``{anyOf: [A, {anyOf: [B, C]}]}`` -> ``{anyOf: [A, B, C]}``; one branch -> that branch."""
    members = arr(form.get("anyOf"))
    if members is None:
        return form
    flat: list[Any] = []
    for member in members:
        nested = obj(member)
        if nested is not None and set(nested) == {"anyOf"}:
            flat.extend(arr(nested["anyOf"]) or ())
        else:
            flat.append(member)
    if len(form) == 1 and len(flat) == 1:
        return flat[0]
    return {**form, "anyOf": sorted(flat, key=_canonical)}


def _canonical(form: Any) -> str:
    return json.dumps(form, sort_keys=True, separators=(",", ":"))
