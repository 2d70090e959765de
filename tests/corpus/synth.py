"""Synthesize valid JSON instances of ACP schema defs, for the round-trip corpus.

Deterministic: the same schema always gives the same instances. Three shapes per def:

* ``minimal``: required fields only, first non-null branch of every union;
* ``maximal``: every optional field too, last non-null branch of every union (so inline
  open enums get their catch-all), an extra ``_meta`` entry and integral ``number``s;
* one instance per branch of the def's own union (``variants``), minimal and maximal.

Every instance is checked with ``jsonschema`` by the caller before it is used.
"""

from __future__ import annotations

import re
from typing import Any

EXT = "_ext"  # an extension value: reserved by ACP for implementations, never a known tag
_MAX_DEPTH = 12


class Synth:
    def __init__(self, schema: dict[str, Any]) -> None:
        self.defs: dict[str, Any] = schema["$defs"]

    # -- public -----------------------------------------------------------------------
    def instances(self, def_name: str) -> list[tuple[str, Any]]:
        """``(label, instance)`` pairs covering ``def_name``."""
        node = self.defs[def_name]
        out = [("minimal", self.make(node, full=False)), ("maximal", self.make(node, full=True))]
        branches = self._branches(node)
        for i in range(len(branches)):
            for full in (False, True):
                label = f"variant{i}-{'max' if full else 'min'}"
                out.append((label, self.make(node, full=full, pick=i)))
        unique: list[tuple[str, Any]] = []
        for label, value in out:
            if all(value != v for _, v in unique):
                unique.append((label, value))
        return unique

    # -- generation --------------------------------------------------------------------
    def _resolve(self, node: dict[str, Any]) -> dict[str, Any]:
        while "$ref" in node and len(node) == 1:
            node = self.defs[node["$ref"].rsplit("/", 1)[-1]]
        return node

    def _branches(self, node: dict[str, Any]) -> list[dict[str, Any]]:
        node = self._resolve(node)
        for key in ("oneOf", "anyOf"):
            if key in node:
                return [b for b in node[key] if b.get("type") != "null"]
        return []

    def make(self, node: Any, *, full: bool, pick: int | None = None, depth: int = 0) -> Any:
        if node is True or node == {}:
            return {"any": [1, "json"]} if full else "json"
        assert isinstance(node, dict)
        if depth > _MAX_DEPTH:
            full = False
        if "$ref" in node:
            target = self.defs[node["$ref"].rsplit("/", 1)[-1]]
            rest = {k: v for k, v in node.items() if k not in ("$ref", "description")}
            value = self.make(target, full=full, pick=pick, depth=depth + 1)
            return (
                self._merge(value, self.make(rest, full=full, depth=depth + 1))
                if self._is_object(rest)
                else value
            )
        if "const" in node:
            return node["const"]
        if "enum" in node:
            return node["enum"][0]
        value: Any = None
        has_value = False
        if "allOf" in node:
            for part in node["allOf"]:
                part_value = self.make(part, full=full, depth=depth + 1)
                value = self._merge(value, part_value) if has_value else part_value
                has_value = True
        for key in ("oneOf", "anyOf"):
            if key in node:
                branches = [b for b in node[key] if b.get("type") != "null"] or node[key]
                index = pick if pick is not None else (len(branches) - 1 if full else 0)
                branch_value = self.make(
                    branches[index % len(branches)], full=full, depth=depth + 1
                )
                value = self._merge(value, branch_value) if has_value else branch_value
                has_value = True
        if "type" in node or "properties" in node:
            own = self._typed(node, full=full, depth=depth)
            value = self._merge(value, own) if has_value else own
            has_value = True
        return value if has_value else "json"

    def _typed(self, node: dict[str, Any], *, full: bool, depth: int) -> Any:
        types = node.get("type", "object")
        if isinstance(types, list):
            types = next((t for t in types if t != "null"), "null")
        if types == "null":
            return None
        if types == "boolean":
            return True
        if types == "integer":
            low = node.get("minimum", -3 if full else 0)
            return max(int(low), min(7, int(node.get("maximum", 7))))
        if types == "number":
            if not full:
                return 0.5  # a float
            return int(
                max(node.get("minimum", 0), min(2, node.get("maximum", 2)))
            )  # integral: must stay an int
        if types == "string":
            return self._string(node)
        if types == "array":
            count = max(node.get("minItems", 0), 1 if full else node.get("minItems", 0))
            items = node.get("items", {})
            return [self.make(items, full=full, depth=depth + 1) for _ in range(count)]
        return self._object(node, full=full, depth=depth)

    def _object(self, node: dict[str, Any], *, full: bool, depth: int) -> dict[str, Any]:
        props: dict[str, Any] = node.get("properties", {})
        required = set(node.get("required", []))
        out: dict[str, Any] = {}
        for name, sub in props.items():
            if name in required or full:
                out[name] = self.make(sub, full=full, depth=depth + 1)
        if full and "_meta" in props:
            out["_meta"] = {"vendor.example/trace": "t-1"}
        extra = node.get("additionalProperties")
        if full and isinstance(extra, dict):
            out.setdefault("key", self.make(extra, full=False, depth=depth + 1))
        return out

    @staticmethod
    def _string(node: dict[str, Any]) -> str:
        pattern = node.get("pattern")
        if pattern is not None:
            for candidate in ("USD", "abc", "a1", "0"):
                if re.search(pattern, candidate):
                    return candidate
            raise ValueError(f"no sample string for pattern {pattern!r}")
        fmt = node.get("format")
        if fmt == "uri":
            return "https://example.com"  # no trailing slash: a URL type would add one
        if fmt == "date-time":
            return "2026-01-02T03:04:05.120Z"
        return EXT

    @staticmethod
    def _is_object(node: dict[str, Any]) -> bool:
        return bool(node.get("properties")) or "allOf" in node

    @staticmethod
    def _merge(a: Any, b: Any) -> Any:
        if isinstance(a, dict) and isinstance(b, dict):
            return {**a, **b}
        return b if a is None or a == "json" else a
