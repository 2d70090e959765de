"""Which marked point catches each pydantic error, and the repaired input.

An error's ``loc`` is walked through the pydantic core schema and the input together:
model fields and list indexes move into the input, union labels and tags choose a
variant (a lazy union's variant through its class's own schema, ``_lazy_union``). The
points met on the way are the fields marked with a :class:`~.lenient.Lenient` rule and
the items of a ``SkipInvalidItems`` list; the innermost one that applies catches
the error, as nested ``serde_with`` / zod ``catch`` wrappers would. Errors from the
variants of one union are alternatives: the first variant whose errors are all caught
inside it is the one repaired (zod's first match); if none is, the union's errors count
as one error at the union, for an outer point to catch.
"""

from __future__ import annotations

import copy
from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, TypeGuard, cast

from ._lazy_union import LAZY_VARIANT_KEY
from ._lenient import Lenient, NotNull, Salvage

_MISSING: Any = object()
Loc = tuple[str | int, ...]


@dataclass(frozen=True)
class _Point:
    container: Any  # the dict or list holding the value
    key: str | int
    path: Loc
    rules: frozenset[str]
    empty: type[list[Any]] | type[dict[str, Any]] | None  # what a required field falls back to
    required: bool
    depth: int  # loc segments leading here


@dataclass(frozen=True)
class _Union:
    key: tuple[int, Loc]  # (id of the union schema, input path)
    label: str
    order: int


@dataclass
class _Walk:
    steps: list[_Point | _Union]
    depth: int  # loc segments consumed
    loc_len: int
    error_type: str
    value: Any  # the input value where the walk stopped


def repair(
    core_schema: Any, data: Any, errors: Sequence[Mapping[str, Any]]
) -> tuple[Any, list[Salvage]] | None:
    """A repaired deep copy of ``data`` and what was salvaged, or None if an error is not
    caught by any marked point."""
    data = copy.deepcopy(data)
    defs = _definitions(core_schema)
    walks = [_walk(core_schema, defs, data, tuple(e["loc"]), str(e["type"])) for e in errors]
    caught, loose = _resolve([(w, 0) for w in walks])
    if loose or not caught:
        return None
    return data, _apply(caught)


# -- resolution -----------------------------------------------------------------------


def _resolve(
    walks: list[tuple[_Walk, int]],
) -> tuple[dict[tuple[int, str | int], tuple[_Point, _Walk]], list[tuple[_Walk, int]]]:
    """Catching points of errors whose steps from index ``start`` on are still open."""
    caught: dict[tuple[int, str | int], tuple[_Point, _Walk]] = {}
    loose: list[tuple[_Walk, int]] = []
    unions: dict[tuple[int, Loc], list[tuple[_Walk, int, int]]] = defaultdict(list)
    for walk, start in walks:
        at = next(
            (i for i in range(start, len(walk.steps)) if isinstance(walk.steps[i], _Union)), None
        )
        if at is None:
            _catch(walk, start, len(walk.steps), caught, loose)
        else:
            step = walk.steps[at]
            assert isinstance(step, _Union)
            unions[step.key].append((walk, start, at))
    for members in unions.values():
        variants: dict[int, list[tuple[_Walk, int]]] = defaultdict(list)
        for walk, _start, at in members:
            step = walk.steps[at]
            assert isinstance(step, _Union)
            variants[step.order].append((walk, at + 1))
        for order in sorted(variants):
            inner, rest = _resolve(variants[order])
            if not rest:
                caught.update(inner)
                break
        else:  # no variant can be repaired: an error at the union itself
            for walk, start, at in members:
                _catch(walk, start, at, caught, loose)
    return caught, loose


def _catch(
    walk: _Walk,
    start: int,
    stop: int,
    caught: dict[tuple[int, str | int], tuple[_Point, _Walk]],
    loose: list[tuple[_Walk, int]],
) -> None:
    for step in reversed(walk.steps[start:stop]):
        if isinstance(step, _Point) and _applies(step, walk):
            caught.setdefault((id(step.container), step.key), (step, walk))
            return
    loose.append((walk, start))


def _applies(point: _Point, walk: _Walk) -> bool:
    at_point = point.depth == walk.loc_len  # the error is about this very value
    if "skip-invalid-items" in point.rules and isinstance(point.container, list):
        return True
    if "default-on-null" in point.rules and at_point and walk.value is None:
        return point.empty is not None or not point.required
    if "default-on-error" in point.rules:
        if at_point and walk.error_type == "missing":
            return False  # an absent required field is not an invalid value
        return point.empty is not None or not point.required
    return False


def _apply(
    caught: dict[tuple[int, str | int], tuple[_Point, _Walk]],
) -> list[Salvage]:
    records: list[Salvage] = []
    drops: dict[int, tuple[list[Any], list[int]]] = {}
    for point, walk in caught.values():
        c: Any = point.container
        if _is_list(c):
            drops.setdefault(id(c), (c, []))[1].append(int(point.key))
            records.append(Salvage(point.path, walk.error_type, "dropped"))
        elif walk.value is None and "default-on-null" in point.rules:
            if point.empty is not None:
                c[point.key] = point.empty()
            else:
                c.pop(point.key, None)
            records.append(Salvage(point.path, walk.error_type, "null"))
        else:
            if (point.required or "not-null" in point.rules) and point.empty is not None:
                c[point.key] = point.empty()
            else:
                c.pop(point.key, None)
            records.append(Salvage(point.path, walk.error_type, "default"))
    for items, indexes in drops.values():
        for index in sorted(set(indexes), reverse=True):
            if index < len(items):
                del items[index]
    return records


# -- walking --------------------------------------------------------------------------


def _definitions(schema: Any) -> dict[str, Any]:
    """Every schema with a ``ref`` (what ``definition-ref`` nodes point to)."""
    found: dict[str, Any] = {}
    stack: list[Any] = [schema]
    while stack:
        node: Any = stack.pop()
        if _is_dict(node):
            ref = node.get("ref")
            if isinstance(ref, str):
                found.setdefault(ref, node)
            stack.extend(v for v in node.values() if _is_container(v))
        elif _is_container(node):
            stack.extend(v for v in node if _is_container(v))
    return found


def _is_dict(value: Any) -> TypeGuard[dict[str, Any]]:
    return isinstance(value, dict)


def _is_list(value: Any) -> TypeGuard[list[Any]]:
    return isinstance(value, list)


def _is_container(value: Any) -> bool:
    return isinstance(value, (dict, list, tuple))


def _child(parent: Any, key: str | int) -> Any:
    """``parent[key]`` of the input, or ``_MISSING``."""
    if _is_dict(parent) and isinstance(key, str):
        return parent.get(key, _MISSING)
    if _is_list(parent) and isinstance(key, int):
        return parent[key] if 0 <= key < len(parent) else _MISSING
    return _MISSING


def _unwrap(node: Any, defs: dict[str, Any]) -> tuple[Any, Any]:
    """Follow nodes that add no ``loc`` segment; returns the node and the model class met."""
    cls = None
    while True:
        kind = node.get("type")
        if kind == "definitions":
            node = node["schema"]
        elif kind == "definition-ref":
            node = defs[node["schema_ref"]]
        elif kind == "model":
            cls = node["cls"]
            node = node["schema"]
        elif kind in ("default", "nullable", "function-after", "function-before", "function-wrap"):
            node = node["schema"]
        elif kind == "function-plain" and LAZY_VARIANT_KEY in node.get("metadata", {}):
            node = node["metadata"][LAZY_VARIANT_KEY]()
            defs.update(_definitions(node))  # the variant's own schema, as if inlined
        else:
            return node, cls


def _field_rules(cls: Any) -> dict[str, tuple[str, frozenset[str]]]:
    """Wire and Python names of a model's fields -> (field name, rules of its markers)."""
    cached: dict[str, tuple[str, frozenset[str]]] | None = cls.__dict__.get("__acp_lenient_rules__")
    if cached is not None:
        return cached
    out: dict[str, tuple[str, frozenset[str]]] = {}
    for name, info in getattr(cls, "model_fields", {}).items():
        rules: frozenset[str] = frozenset(m.rule for m in info.metadata if isinstance(m, Lenient))
        if rules and NotNull in info.metadata:
            rules |= {"not-null"}  # the fallback is the empty value, not absence
        out[name] = (name, rules)
        alias = info.validation_alias
        if isinstance(alias, str):
            out[alias] = (name, rules)
    type.__setattr__(cls, "__acp_lenient_rules__", out)
    return out


def _name(node: Any, defs: dict[str, Any]) -> str | None:
    """The label pydantic-core gives a union choice in ``loc`` (for the kinds ACP uses)."""
    kind = node.get("type")
    if kind == "definition-ref":
        return _name(defs[node["schema_ref"]], defs)
    if kind == "model":
        return str(node["cls"].__name__)
    if kind == "tagged-union":
        names = [_name(c, defs) for c in node["choices"].values()]
        return f"tagged-union[{','.join(n or '?' for n in names)}]"
    if kind == "union":
        choices: list[Any] = node["choices"]
        names = [_label(c, defs) for c in choices]
        return f"union[{','.join(n or '?' for n in names)}]"
    if kind == "nullable":
        return f"nullable[{_name(node['schema'], defs) or '?'}]"
    if kind == "list":
        return f"list[{_name(node.get('items_schema', {'type': 'any'}), defs) or '?'}]"
    return _SCALARS.get(str(kind))


_SCALARS = {k: k for k in ("str", "int", "float", "bool", "any", "none")}
"""pydantic-core's names of the leaf validators ACP unions use."""


def _label(choice: Any, defs: dict[str, Any]) -> str | None:
    """A union choice's label: its own, if it is a ``(schema, label)`` pair, else its name."""
    if isinstance(choice, tuple):
        return str(cast("tuple[Any, str]", choice)[1])
    return _name(choice, defs)


def _choice(node: Any, label: str | int, defs: dict[str, Any]) -> tuple[int, Any] | None:
    choices: list[Any] = node["choices"]
    for order, choice in enumerate(choices):
        if isinstance(choice, tuple):
            labelled = cast("tuple[Any, str]", choice)
            if labelled[1] == label:
                return order, labelled[0]
        elif _name(choice, defs) == label:
            return order, choice
    return None


def _walk(root: Any, defs: dict[str, Any], data: Any, loc: Loc, error_type: str) -> _Walk:
    steps: list[_Point | _Union] = []
    node, cls = _unwrap(root, defs)
    value: Any = data
    path: Loc = ()
    depth = 0
    skip_items = False
    while depth < len(loc):
        seg, kind = loc[depth], node.get("type")
        if kind == "model-fields" and isinstance(seg, str) and cls is not None:
            entry = _field_rules(cls).get(seg)
            if entry is None or entry[0] not in node["fields"]:
                break
            parent, path, depth = value, (*path, seg), depth + 1
            value = _child(parent, seg)
            field_schema = node["fields"][entry[0]]["schema"]
            required = field_schema.get("type") != "default"
            node, cls = _unwrap(field_schema, defs)
            rules = entry[1]
            if rules and _is_dict(parent):
                steps.append(_Point(parent, seg, path, rules, _empty(node), required, depth))
            skip_items = "skip-invalid-items" in rules
        elif kind == "list" and isinstance(seg, int):
            parent, path, depth = value, (*path, seg), depth + 1
            value = _child(parent, seg)
            if skip_items and value is not _MISSING:
                steps.append(
                    _Point(parent, seg, path, frozenset({"skip-invalid-items"}), None, False, depth)
                )
            node, cls = _unwrap(node.get("items_schema", {"type": "any"}), defs)
            skip_items = False
        elif kind == "dict" and isinstance(seg, str):
            if depth + 1 < len(loc) and loc[depth + 1] == "[key]":
                break
            path, depth = (*path, seg), depth + 1
            value = _child(value, seg)
            node, cls = _unwrap(node.get("values_schema", {"type": "any"}), defs)
            skip_items = False
        elif kind == "tagged-union":
            choices = node["choices"]
            if seg not in choices:
                break
            order = list(choices).index(seg)
            steps.append(_Union((id(node), path), str(seg), order))
            depth += 1
            node, cls = _unwrap(choices[seg], defs)
            skip_items = False
        elif kind == "union":
            found = _choice(node, seg, defs)
            if found is None:
                break
            steps.append(_Union((id(node), path), str(seg), found[0]))
            depth += 1
            node, cls = _unwrap(found[1], defs)
            skip_items = False
        else:
            break
    return _Walk(steps, depth, len(loc), error_type, value)


def _empty(node: Any) -> type[list[Any]] | type[dict[str, Any]] | None:
    kind = node.get("type")
    if kind == "list":
        return list
    if kind == "dict":
        return dict
    return None
