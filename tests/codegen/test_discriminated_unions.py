"""Unions of many models validate through a native discriminator (pydantic ``tagged-union``).

A plain union of N models makes pydantic try the variants one by one: v2/unstable's
``SessionUpdate`` once did, about ten times slower than v2's, because the hoisted
``state_update`` variants reused an inner union that lacked the ``sessionUpdate`` tag.
"""

from __future__ import annotations

import importlib
from collections.abc import Iterator
from types import ModuleType
from typing import Any, cast

import pytest
from pydantic import BaseModel, TypeAdapter, ValidationError

from acp_generated.v2.unstable import models as v2_unstable

PACKAGES = ("v1", "v1.unstable", "v2", "v2.unstable")
WRAPPERS = frozenset(
    {"nullable", "default", "function-after", "function-before", "function-wrap", "definitions"}
)
STRUCTURED = frozenset({"model", "union", "tagged-union"})
MAX_PLAIN_CHOICES = 4  # more structured variants than this must be discriminated
V2_UNSTABLE_UPDATE = TypeAdapter[Any](v2_unstable.SessionUpdate)


def _models(package: str) -> ModuleType:
    return importlib.import_module(f"acp_generated.{package}.models")


def _nodes(node: object) -> Iterator[dict[str, Any]]:
    """Every schema dict in a core schema tree (definitions are part of the tree)."""
    children: list[object]
    if isinstance(node, dict):
        schema = cast(dict[str, Any], node)
        yield schema
        children = list(schema.values())
    elif isinstance(node, list | tuple):
        children = list(cast(list[object], node))
    else:
        return
    for child in children:
        yield from _nodes(child)


class Schema:
    """A core schema with its ``definition-ref``s resolvable."""

    def __init__(self, root: Any) -> None:
        self.root = root
        self.refs = {n["ref"]: n for n in _nodes(root) if isinstance(n.get("ref"), str)}

    def peel(self, node: dict[str, Any]) -> dict[str, Any]:
        """The schema that decides validation, under refs, defaults, nullables, validators."""
        while True:
            if node.get("type") == "definition-ref":
                node = self.refs[node["schema_ref"]]
            elif node.get("type") in WRAPPERS and isinstance(node.get("schema"), dict):
                node = node["schema"]
            else:
                return node

    def choices(self, union: dict[str, Any]) -> list[dict[str, Any]]:
        """A union's choices (a tagged union's are keyed by tag; a choice may be labelled)."""
        raw: Any = union["choices"]
        items = cast(
            list[Any], list(cast(dict[str, Any], raw).values()) if isinstance(raw, dict) else raw
        )
        return [self.peel(cast(dict[str, Any], c[0] if isinstance(c, tuple) else c)) for c in items]


def _alias_schema(package: str, name: str) -> Schema:
    alias: Any = getattr(_models(package), name)
    return Schema(TypeAdapter[Any](alias).core_schema)


def _known_part(schema: Schema, node: dict[str, Any]) -> dict[str, Any]:
    """``Known | defaults | Other`` (tried left to right): the discriminated ``Known``."""
    node = schema.peel(node)
    if node["type"] == "union":
        node = schema.choices(node)[0]
    assert node["type"] == "tagged-union", node["type"]
    return node


def _keys(tagged: dict[str, Any]) -> set[str]:
    """A tagged union's discriminator: one key, or alternative paths (field name, alias)."""
    found = tagged["discriminator"]
    return {found} if isinstance(found, str) else {str(path[0]) for path in found}


@pytest.mark.parametrize("package", PACKAGES)
def test_session_update_known_part_is_a_tagged_union(package: str) -> None:
    schema = _alias_schema(package, "SessionUpdate")
    known = _known_part(schema, schema.root)
    assert "sessionUpdate" in _keys(known)
    assert "agent_message_chunk" in known["choices"]


@pytest.mark.parametrize("package", ["v2", "v2.unstable"])
def test_state_update_variants_are_discriminated_down_to_the_stop_reason(package: str) -> None:
    schema = _alias_schema(package, "SessionUpdate")
    by_session_update = _known_part(schema, schema.root)
    by_state = _known_part(schema, by_session_update["choices"]["state_update"])
    assert "state" in _keys(by_state)
    by_stop_reason = _known_part(schema, by_state["choices"]["idle"])
    assert "stopReason" in _keys(by_stop_reason)
    assert "end_turn" in by_stop_reason["choices"]


def _plain_unions_of_many_models(package: str) -> list[str]:
    found: set[str] = set()
    for cls in vars(_models(package)).values():
        if not (isinstance(cls, type) and issubclass(cls, BaseModel)):
            continue
        schema = Schema(cls.__pydantic_core_schema__)
        for node in _nodes(schema.root):
            if node.get("type") != "union":
                continue
            kinds = [c["type"] for c in schema.choices(node)]
            if sum(k in STRUCTURED for k in kinds) > MAX_PLAIN_CHOICES:
                found.add(f"{node.get('ref', cls.__name__)}: {kinds}")
    return sorted(found)


@pytest.mark.parametrize("package", PACKAGES)
def test_no_plain_union_tries_many_models_one_by_one(package: str) -> None:
    assert _plain_unions_of_many_models(package) == []


@pytest.mark.parametrize(
    ("payload", "expected"),
    [
        (
            {"sessionUpdate": "state_update", "state": "idle", "stopReason": "end_turn"},
            "EndTurnIdleStateUpdateSessionUpdate",
        ),
        ({"sessionUpdate": "state_update", "state": "idle"}, "NoneIdleStateUpdateSessionUpdate"),
        (
            {"sessionUpdate": "state_update", "state": "idle", "stopReason": "later"},
            "OtherIdleStateUpdateSessionUpdate",
        ),
        ({"sessionUpdate": "state_update", "state": "later"}, "OtherStateUpdateSessionUpdate"),
        ({"sessionUpdate": "later", "x": 1}, "OtherSessionUpdate"),
    ],
)
def test_v2_unstable_state_updates_keep_their_outer_tag(
    payload: dict[str, Any], expected: str
) -> None:
    parsed = V2_UNSTABLE_UPDATE.validate_python(payload)
    assert type(parsed).__name__ == expected
    assert parsed.model_dump(mode="json", by_alias=True, exclude_unset=True) == payload


@pytest.mark.parametrize(
    "payload",
    [{"sessionUpdate": "agent_message_chunk"}, {"sessionUpdate": "state_update"}],
)
def test_v2_unstable_malformed_known_tags_are_rejected(payload: dict[str, Any]) -> None:
    with pytest.raises(ValidationError):
        V2_UNSTABLE_UPDATE.validate_python(payload)
