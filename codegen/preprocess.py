"""Schema -> schema rewrites that make datamodel-code-generator emit good Python.

* drop the JSON-RPC envelopes (the method table replaces them) and all ``title``s;
* name every tagged union variant ``<Tag><Union>`` (``TextContentBlock``,
  ``AgentMessageChunkSessionUpdate``) and a catch-all ``Other<Union>``, as the Rust SDK does,
  so names are stable across releases instead of dcg's numbered collisions;
* name titled untagged variants ``<Title><Union>`` (``ResultMessageMcpResponse``);
* move an object's shared properties into each variant of its union, and hoist a union
  nested in a tagged variant into a named union of complete variants (v2 ``state_update``),
  instead of dcg's numbered multiple-inheritance cross products;
* split an open union (tagged variants + untagged defaults + catch-all) into a natively
  discriminated ``<Union>Known`` tried first, then the defaults, then the catch-all; the
  catch-all later gets a guard rejecting known tags (what the schema's ``not`` says);
* mark every ``format: uri`` property (``x-acp-uri``), which dcg types a plain ``str``, so
  that the field gets the runtime's URL check (``acp_runtime.codegen_support``).

Names are carried to dcg as ``title`` (it runs with ``--use-title-as-name``); every other
title is dropped first, since the schema's own titles ("other", "Request") collide.
"""

from __future__ import annotations

import copy
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from .method_table import envelope_defs

_EXT_DEFS = ("ExtRequest", "ExtResponse", "ExtNotification")
_DATA_KEYS = frozenset({"default", "const", "enum", "examples"})  # JSON values, not schemas


@dataclass
class OpenUnion:
    """A union whose catch-all must refuse the known tags."""

    union: str
    tag: str
    known: tuple[str, ...]
    other: str
    guarded: tuple[str, ...] = ()  # classes whose tag is checked; default: just ``other``

    @property
    def classes(self) -> tuple[str, ...]:
        return self.guarded or (self.other,)


@dataclass
class Prepared:
    """The rewritten schema plus what the post-processing needs to know."""

    schema: dict[str, Any]
    open_unions: list[OpenUnion] = field(default_factory=list)
    ordered_unions: list[str] = field(default_factory=list)  # aliases that need left_to_right


def pascal(value: str) -> str:
    """``agent_message_chunk`` / ``resource-link`` / ``_zed`` -> ``AgentMessageChunk``."""
    return "".join(
        part[:1].upper() + part[1:] for part in re.split(r"[^0-9A-Za-z]+", value) if part
    )


def _tag_of(variant: dict[str, Any], fixed: frozenset[str] = frozenset()) -> tuple[str, str] | None:
    """``(tag property, value)`` if ``variant`` is an object pinned by one required const
    (``fixed`` names outer tags a hoisted variant carries, which are not this union's tag)."""
    if "x-acp-tag" in variant:
        tag, value = variant["x-acp-tag"]
        return str(tag), str(value)
    props = variant.get("properties")
    if not isinstance(props, dict):
        return None
    consts = [
        (k, v["const"])
        for k, v in props.items()
        if isinstance(v, dict) and "const" in v and k not in fixed
    ]
    if len(consts) != 1 or consts[0][0] not in variant.get("required", []):
        return None
    return consts[0][0], str(consts[0][1])


def _is_catch_all(variant: dict[str, Any]) -> bool:
    return variant.get("title") in ("other", "Other") and variant.get("type") == "object"


def _bare_ref(variant: dict[str, Any]) -> dict[str, Any] | None:
    """``{"title": "stdio", "allOf": [{"$ref": X}]}`` -> ``{"$ref": X}``."""
    all_of = variant.get("allOf")
    rest = set(variant) - {"title", "description", "allOf"}
    if not rest and isinstance(all_of, list) and len(all_of) == 1 and set(all_of[0]) == {"$ref"}:
        return {"$ref": all_of[0]["$ref"]}
    return None


def _named_object(variant: dict[str, Any], parent: str, taken: set[str]) -> dict[str, Any]:
    """``{"title": "Result", "type": "object", ...}`` in ``X`` is named ``ResultX`` (arrays too)."""
    title = variant.get("title")
    named_kinds = ("object", "array")  # scalars (RequestId's Null/Number/Str) stay inline
    if (
        not isinstance(title, str)
        or variant.get("type") not in named_kinds
        or "x-acp-name" in variant
    ):
        return variant
    return {**variant, "x-acp-name": _unique(pascal(title) + parent, taken)}


def _unique(name: str, taken: set[str]) -> str:
    while name in taken:
        name += "Variant"
    taken.add(name)
    return name


def _null_only(schema: dict[str, Any]) -> bool:
    """``{type: null}`` (or ``[null]``): a variant for an omitted or ``null`` value."""
    kind = schema.get("type")
    return (
        kind == "null"
        or kind == ["null"]
        or ("const" not in schema and "anyOf" not in schema and schema.get("enum") == [None])
    )


def _distribute(name: str, d: dict[str, Any], key: str, taken: set[str]) -> None:
    """Move an object's shared properties into each variant of its union.

    ``{properties: P, anyOf: [A, B]}`` becomes ``{anyOf: [A+P, B+P]}`` so that every
    variant is one complete class instead of dcg's cross product that loses the tag.
    Titled untagged variants (``Session``, ``Request``) are named ``<Title><Def>``.
    """
    shared = d.pop("properties", None)
    required = d.pop("required", [])
    if not isinstance(shared, dict):
        return
    d.pop("type", None)
    merged = []
    for v in d[key]:
        ref = _bare_ref(v)
        title = v.get("title")
        if ref is not None:
            v = {"allOf": [ref]}
        v = dict(v)
        v["type"] = "object"
        own = v.get("properties", {})
        v["properties"] = {**shared, **own}  # the variant's const tag wins
        for prop, schema in own.items():  # ...but a variant that only says "null" keeps
            base = shared.get(prop)  # the shared field's leniency (v2 stopReason)
            if isinstance(base, dict) and isinstance(schema, dict) and _null_only(schema):
                lenient = {k: x for k, x in base.items() if k.startswith("x-deserialize-")}
                v["properties"][prop] = {**schema, **lenient}
        v["required"] = [
            *v.get("required", []),
            *(r for r in required if r not in v.get("required", [])),
        ]
        if isinstance(title, str) and _tag_of(v) is None and title not in ("other", "Other"):
            v["x-acp-name"] = _unique(pascal(title) + name, taken)
        merged.append(v)
    d[key] = merged


def _rewrite_union(name: str, d: dict[str, Any], defs: dict[str, Any], out: Prepared) -> None:
    """Name the variants of union def ``name`` and, if it is open, split it (see module doc)."""
    key = "oneOf" if "oneOf" in d else "anyOf"
    if "properties" in d:
        _distribute(name, d, key, set(defs))
    variants: list[dict[str, Any]] = d[key]
    fixed = frozenset(d.pop("x-acp-fixed", ()))
    tags = [_tag_of(v, fixed) for v in variants]
    tag_names = {t[0] for t in tags if t}
    if len(tag_names) != 1:
        # not a tagged union: unwrap titled allOf variants, name titled inline objects
        d[key] = [_bare_ref(v) or _named_object(v, name, set(defs)) for v in variants]
        return
    tag = next(iter(tag_names))
    taken = set(defs)
    tagged, defaults, catch_all = [], [], None
    for v, t in zip(variants, tags, strict=True):
        if t and "x-acp-tag" in v:
            tagged.append({"$ref": v["$ref"]})  # a hoisted nested union, named already
        elif t:
            v = {k: x for k, x in v.items() if k != "title"}
            v["x-acp-name"] = _unique(pascal(t[1]) + name, taken)
            tagged.append(v)
        elif _is_catch_all(v):
            catch_all = v
        else:
            defaults.append(_bare_ref(v) or v)
    if catch_all is None and not defaults:
        d.pop("anyOf", None)
        d["oneOf"] = tagged
        if len(tagged) > 1:
            d["discriminator"] = {"propertyName": tag}
        return
    members: list[dict[str, Any]] = []
    if len(tagged) > 1:
        known = _unique(name + "Known", taken)
        defs[known] = {"oneOf": tagged, "discriminator": {"propertyName": tag}}
        members.append({"$ref": f"#/$defs/{known}"})
    else:
        members.extend(tagged)
    members.extend(defaults)
    if catch_all is not None:
        other = _unique("Other" + name, taken)
        body = {
            k: v for k, v in catch_all.items() if k not in ("title", "not", "unevaluatedProperties")
        }
        guarded: tuple[str, ...] = ()
        inner_key = _union_key(body)
        if inner_key is not None:  # the catch-all is itself a union (elicitation scopes)
            _distribute(other, body, inner_key, taken)
            for branch in body[inner_key]:
                branch.setdefault("additionalProperties", True)
            guarded = tuple(str(b["x-acp-name"]) for b in body[inner_key])
        else:
            body.setdefault("additionalProperties", True)
        defs[other] = body
        members.append({"$ref": f"#/$defs/{other}"})
        known_tags = tuple(sorted(t[1] for t in tags if t))
        out.open_unions.append(OpenUnion(name, tag, known_tags, other, guarded))
    d.pop("oneOf", None)
    d.pop("discriminator", None)
    d["anyOf"] = members
    out.ordered_unions.append(name)


def _union_key(d: dict[str, Any]) -> str | None:
    return next((k for k in ("oneOf", "anyOf") if k in d), None)


def _hoist_nested_unions(defs: dict[str, Any]) -> None:
    """``{tag: "state_update", allOf: [StateUpdate]}`` where StateUpdate is itself a tagged
    union becomes a ref to a new union ``StateUpdateSessionUpdate`` whose variants carry
    both tags, instead of dcg's numbered cross product that loses the inner fields.
    Repeats for deeper nesting (``state: idle`` -> ``IdleStateUpdate`` by ``stopReason``).
    A branch hoisted already (the inner union came first in ``defs``) is copied as it was
    before hoisting, so it is hoisted again under the outer tag too; reusing the inner
    hoisted union would leave it without the outer tag and the outer union undiscriminated.
    """
    originals: dict[str, dict[str, Any]] = {}  # hoisted def -> the variant it replaced
    work = list(defs)
    while work:
        name = work.pop(0)
        d = defs[name]
        key = _union_key(d) if isinstance(d, dict) else None
        if key is None:
            continue
        fixed = frozenset(d.get("x-acp-fixed", ()))
        if "properties" in d:  # give shared fields to the variants before hoisting them
            _distribute(name, d, key, set(defs))
        for i, v in enumerate(d[key]):
            outer = _tag_of(v, fixed)
            all_of = v.get("allOf", [])
            if outer is None or "x-acp-tag" in v or len(all_of) != 1 or "$ref" not in all_of[0]:
                continue
            inner = defs.get(all_of[0]["$ref"].rsplit("/", 1)[-1], {})
            inner_key = _union_key(inner)
            if inner_key is None:
                continue
            if "properties" in inner:  # shared fields of an object+union: give them to each branch
                _distribute(all_of[0]["$ref"].rsplit("/", 1)[-1], inner, inner_key, set(defs))
            branches = inner[inner_key]
            if not all(_tag_of(b) or "x-acp-name" in b or _is_catch_all(b) for b in branches):
                continue  # unnamed branches would come out numbered anyway
            tag, value = outer
            hoisted = _unique(pascal(value) + name, set(defs))
            carried: dict[str, Any] = v.get("properties", {})  # outer tag and shared fields
            carried_required: list[str] = v.get("required", [])
            members = []
            inner_name = all_of[0]["$ref"].rsplit("/", 1)[-1]
            for branch in inner[inner_key]:
                branch = dict(branch)
                if "x-acp-tag" in branch:  # hoisted already: start again from the original
                    branch = copy.deepcopy(originals[branch["$ref"].rsplit("/", 1)[-1]])
                if "x-acp-name" in branch:  # an untagged default variant keeps its prefix
                    prefix = str(branch["x-acp-name"]).removesuffix(inner_name)
                    branch["x-acp-name"] = _unique(prefix + hoisted, set(defs))
                branch["properties"] = {**carried, **branch.get("properties", {})}
                own = branch.get("required", [])
                branch["required"] = [
                    *carried_required,
                    *(r for r in own if r not in carried_required),
                ]
                branch.setdefault("type", "object")
                members.append(branch)
            defs[hoisted] = {
                "description": v.get("description", inner.get("description", "")),
                inner_key: members,
                "x-acp-fixed": sorted(k for k, p in carried.items() if "const" in p),
            }
            originals[hoisted] = copy.deepcopy(v)
            d[key][i] = {"$ref": f"#/$defs/{hoisted}", "x-acp-tag": [tag, value]}
            work.append(hoisted)


def preprocess(raw: dict[str, Any]) -> Prepared:
    """Rewrite a raw ACP schema (left untouched) into the generator's input."""
    schema = copy.deepcopy(raw)
    defs: dict[str, Any] = schema["$defs"]
    for env in envelope_defs(schema) | set(_EXT_DEFS):
        defs.pop(env, None)
    out = Prepared({"$schema": schema.get("$schema"), "$defs": defs})
    _hoist_nested_unions(defs)
    for name in list(defs):
        d = defs[name]
        if isinstance(d, dict) and ("oneOf" in d or "anyOf" in d):
            _rewrite_union(name, d, defs, out)
    # titles: keep only the ones we assigned to tagged variants
    for name in list(defs):
        defs[name] = _retitle(defs[name])
    _mark_not_null(defs)
    _mark_uri(defs)
    _split_nullable_maps(defs)
    out.schema = {"$schema": schema.get("$schema"), "$defs": defs}
    return out


NOT_NULL = "x-acp-not-null"
"""Marks an optional array or map the schema does not let be ``null``; dcg types it
``X | None`` all the same. The field then refuses ``null`` (the runtime's ``NotNull``), as
the schema and the TypeScript SDK do, and a default-on-error fallback is the empty value,
as in the Rust and TypeScript SDKs."""


def _schema_nodes(node: Any) -> Iterator[dict[str, Any]]:
    """Every object under ``node``, each before what it holds, leaving out the JSON values
    under ``_DATA_KEYS`` (not schemas). A caller may rewrite the node it was just given."""
    if isinstance(node, list):
        for item in node:
            yield from _schema_nodes(item)
    elif isinstance(node, dict):
        yield node
        for key, value in node.items():
            if key not in _DATA_KEYS:
                yield from _schema_nodes(value)


def _mark_not_null(defs: dict[str, Any]) -> None:
    for node in _schema_nodes(defs):
        props = node.get("properties")
        if not isinstance(props, dict):
            continue
        required = set(node.get("required", ()))
        for key, prop in props.items():
            if (
                isinstance(prop, dict)
                and key not in required
                and prop.get("type") in ("array", "object")
            ):
                prop[NOT_NULL] = True


URI = "x-acp-uri"
"""Marks a ``format: uri`` string property: the field gets ``UriFormat``, which checks the
value with the WHATWG URL parser as the TypeScript SDK's ``z.url()`` does."""


def _mark_uri(defs: dict[str, Any]) -> None:
    """Mark ``format: uri`` string property schemas; refuse one anywhere else (an array
    item, a union member), which the generated models could not check."""
    nodes = list(_schema_nodes(defs))
    for node in nodes:
        props = node.get("properties")
        for prop in props.values() if isinstance(props, dict) else ():
            if (
                isinstance(prop, dict)
                and prop.get("format") == "uri"
                and prop.get("type") in ("string", ["string", "null"])
            ):
                prop[URI] = True
    for node in nodes:
        if node.get("format") == "uri" and URI not in node:
            raise ValueError(f"format: uri outside a string property: {node}")


def _split_nullable_maps(defs: dict[str, Any]) -> None:
    """``{"type": ["object", "null"], "additionalProperties": X}`` -> ``anyOf`` of the map
    and ``null``: dcg types the list form ``dict[str, Any]``, so the values went unchecked
    (v1 ``ElicitationAcceptAction.content`` took ``{"key": null}``, which the schema and
    the TypeScript SDK refuse)."""
    for node in _schema_nodes(defs):
        values = node.get("additionalProperties")
        if node.get("type") == ["object", "null"] and isinstance(values, dict) and values:
            del node["type"], node["additionalProperties"]
            node["anyOf"] = [{"type": "object", "additionalProperties": values}, {"type": "null"}]


def _retitle(node: Any) -> Any:
    """Drop every schema title except the variant names assigned above."""
    if isinstance(node, dict):
        keep = False
        if "x-acp-name" in node:
            assigned = node["x-acp-name"]
            node = {k: v for k, v in node.items() if k not in ("x-acp-name", "title")}
            node["title"], keep = assigned, True
        return {
            k: v if k in _DATA_KEYS else _retitle(v)
            for k, v in node.items()
            if not (k == "title" and isinstance(v, str) and not keep)
        }
    if isinstance(node, list):
        return [_retitle(v) for v in node]
    return node
