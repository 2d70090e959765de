"""The method table of a schema, read from ``x-method``/``x-side`` and envelope membership.

A def is a request's params, a request's result or a notification's params only
because an envelope references it there: ``*Request.params`` (an envelope with an
``id``), ``*Notification.params`` (no ``id``) or ``*Response.result``. The def
names cannot be trusted for that (``MessageMcpNotification`` and
``MessageMcpRequest`` share ``mcp/message``), so we walk the envelopes from the
root ``anyOf``. npm releases ship no ``meta.json``, so nothing else is read.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from .keywords import JsonObject, arr, obj, ref_name
from .model import MethodEntry

MethodKey = tuple[str, str, str]
"""(method, kind, handler): ``mcp/message`` is a request and a notification on several sides."""


@dataclass(frozen=True)
class MethodTable:
    """The methods of one schema, the envelope defs and the root message branches."""

    entries: dict[MethodKey, MethodEntry]
    envelope_defs: frozenset[str]
    branches: tuple[str, ...]


def read_method_table(schema: JsonObject) -> MethodTable:
    defs: JsonObject = schema.get("$defs", {})
    walker = _EnvelopeWalker(defs)
    branches: list[str] = []
    for index, branch in enumerate(arr(schema.get("anyOf")) or ()):
        node = obj(branch)
        if node is not None:
            branches.append(str(node.get("title", f"#{index}")))
            walker.walk(node, None)
    results: dict[tuple[str, str], str] = {}
    for name in walker.found.get("result", ()):
        method, side = _binding(defs, name)
        results[(method, side)] = name
    entries: dict[MethodKey, MethodEntry] = {}
    for kind in ("request", "notification"):
        for name in walker.found.get(kind, ()):
            method, side = _binding(defs, name)
            result = results.get((method, side)) if kind == "request" else None
            entries[(method, kind, side)] = MethodEntry(method, kind, side, name, result)
    return MethodTable(entries, frozenset(walker.envelopes), tuple(branches))


def _binding(defs: JsonObject, name: str) -> tuple[str, str]:
    node = defs[name]
    return str(node["x-method"]), str(node.get("x-side", "?"))


class _EnvelopeWalker:
    """Follows the root message union down to the defs that carry ``x-method``."""

    def __init__(self, defs: JsonObject) -> None:
        self._defs = defs
        self.found: dict[str, list[str]] = {}
        self.envelopes: set[str] = set()

    def walk(self, value: Any, kind: str | None) -> None:
        node = obj(value)
        if node is None:
            return
        ref = node.get("$ref")
        if isinstance(ref, str):
            self._follow(ref_name(ref), kind)
        for key in ("anyOf", "oneOf", "allOf"):
            for sub in arr(node.get(key)) or ():
                self.walk(sub, kind)
        if kind is not None:
            return
        self.walk(node.get("items"), None)  # JSON-RPC batch branches (v2 alpha)
        props = obj(node.get("properties")) or {}
        if "result" in props:
            self.walk(props["result"], "result")
        if "params" in props:
            self.walk(props["params"], "request" if "id" in props else "notification")

    def _follow(self, name: str, kind: str | None) -> None:
        target = obj(self._defs.get(name))
        if target is None:
            return
        if kind is None:
            if name not in self.envelopes:
                self.envelopes.add(name)
                self.walk(target, None)
        elif "x-method" in target:
            names = self.found.setdefault(kind, [])
            if name not in names:
                names.append(name)
