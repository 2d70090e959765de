"""Stable identities for union branches, so variants can be matched across releases.

Branch order and titles change between releases; what identifies a branch is
its tag (``sessionUpdate=agent_message_chunk``), its constant (an enum value),
its ``$ref`` target, or its role (the ``*`` catch-all of an open union).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from .keywords import DESCRIPTION_KEYS, JsonObject, arr, is_annotation, obj, ref_name, type_set

CATCH_ALL = "*"


@dataclass(frozen=True)
class Variant:
    key: str
    node: JsonObject
    is_value: bool
    """True for a constant branch (an enum value), False for a shape branch."""


def _const_of(node: JsonObject) -> tuple[bool, Any]:
    if "const" in node:
        return True, node["const"]
    enum = arr(node.get("enum"))
    if enum is not None and len(enum) == 1:
        return True, enum[0]
    return False, None


def _tag_of(node: JsonObject) -> tuple[str, Any] | None:
    """(property, value) of a required property pinned to a constant."""
    props = obj(node.get("properties"))
    required = arr(node.get("required")) or []
    if props is None:
        return None
    for name in sorted(props):
        sub = obj(props[name])
        if name in required and sub is not None:
            found, value = _const_of(sub)
            if found:
                return name, value
    return None


def _text(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value)


def union_tag(members: list[JsonObject]) -> str | None:
    """The property most branches are tagged by (``type``, ``sessionUpdate``, ...), if any."""
    counts: dict[str, int] = {}
    for member in members:
        tag = _tag_of(member)
        if tag is not None:
            counts[tag[0]] = counts.get(tag[0], 0) + 1
    return max(sorted(counts), key=lambda k: counts[k]) if counts else None


def _is_catch_all(member: JsonObject, tag: str) -> bool:
    sub = obj((obj(member.get("properties")) or {}).get(tag))
    return sub is not None and "string" in type_set(sub) and not _const_of(sub)[0]


def variant_key(
    member: JsonObject, tag: str | None, index: int, renames: Mapping[str, str]
) -> Variant:
    """The identity of one branch; ``renames`` maps old def names to new ones."""
    found, value = _const_of(member)
    if found:
        return Variant(json.dumps(value), member, True)
    if all(k in DESCRIPTION_KEYS or is_annotation(k) for k in member):
        return Variant("any", member, False)  # the empty schema: any JSON value
    if tag is not None:
        pinned = _tag_of(member)
        if pinned is not None and pinned[0] == tag:
            return Variant(f"{tag}={_text(pinned[1])}", member, False)
        if _is_catch_all(member, tag):
            return Variant(f"{tag}={CATCH_ALL}", member, False)
        if "title" in member:  # an untagged default branch, named by its would-be tag
            return Variant(f"{tag}={member['title']}", member, False)
    ref = member.get("$ref")
    if isinstance(ref, str):
        name = ref_name(ref)
        return Variant(renames.get(name, name), member, False)
    types = type_set(member)
    if len(types) == 1 and not ({"properties", "items", "anyOf", "oneOf", "allOf"} & set(member)):
        return Variant(next(iter(types)), member, False)
    if "title" in member:
        return Variant(f"title:{member['title']}", member, False)
    if len(types) == 1:
        return Variant(next(iter(types)), member, False)
    return Variant(f"#{index}", member, False)


def keyed_variants(members: list[JsonObject], renames: Mapping[str, str]) -> dict[str, Variant]:
    """Branches by identity; a repeated identity gets a ``#n`` suffix."""
    tag = union_tag(members)
    out: dict[str, Variant] = {}
    for index, member in enumerate(members):
        variant = variant_key(member, tag, index, renames)
        key = variant.key
        n = 2
        while key in out:
            key = f"{variant.key}#{n}"
            n += 1
        out[key] = Variant(key, variant.node, variant.is_value)
    return out


def is_open(variants: Mapping[str, Variant]) -> bool:
    """An open union has a catch-all branch next to its known tags or values.

    v2 writes every enum and tagged union that way (unknown values are reserved
    for extensions and future versions); v1 mostly closes them.
    """
    has_values = any(v.is_value for v in variants.values())
    for key in variants:
        if key.endswith(f"={CATCH_ALL}"):
            return True
        if has_values and key in ("string", "integer", "number"):
            return True
    return False
