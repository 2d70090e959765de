"""The protocol's methods, read from a raw schema.

A def names its wire method and handling side with ``x-method`` / ``x-side``; whether it is
a request's params, a result or a notification's params comes only from which JSON-RPC
envelope references it (``params`` next to an ``id`` = request, without = notification,
``result`` = result). npm releases ship no ``meta.json``, so nothing else is consulted.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, replace
from typing import Any, Literal

from .method_names import check_names, python_name, snake_wire_name

Kind = Literal["request", "notification"]


_REQUIRES = re.compile(r"Only available if the client supports the `([\w.]+)` capability")

CLIENT_CAPABILITIES: dict[str, str] = {
    "terminal/create": "terminal",
    "terminal/kill": "terminal",
    "terminal/output": "terminal",
    "terminal/release": "terminal",
    "terminal/wait_for_exit": "terminal",
}
"""Client methods whose capability the schema's description does not state (v1's
``clientCapabilities.terminal`` covers every ``terminal/*`` method)."""


@dataclass(frozen=True)
class Method:
    """One protocol method of one kind, as the generator binds it."""

    name: str  # wire name, e.g. "session/prompt"
    kind: Kind
    side: str  # handling side: agent | client | protocol | proxy | both
    params: str  # def name of the params
    result: str | None  # def name of the result (requests only)
    description: str
    py_name: str  # the handler method and the facade call, e.g. "prompt" (method_names.py)
    const_name: str  # the binding constant, e.g. "SESSION_PROMPT"

    @property
    def requires(self) -> str | None:
        """The client capability this client method needs (``"fs.readTextFile"``): what
        its description says ("Only available if the client supports the `...`
        capability"), else :data:`CLIENT_CAPABILITIES`; None for the agent's methods."""
        if self.side != "client" or self.kind != "request":
            return None
        stated = _REQUIRES.search(self.description)
        if stated:
            return stated[1]
        return CLIENT_CAPABILITIES.get(self.name)

    def handled_by(self, side: str) -> bool:
        """Whether ``side`` handles it; ``$/`` (protocol) methods reach every side."""
        return self.side in (side, "both", "protocol")


def _refs(node: Any) -> Iterator[str]:
    """Every def name referenced under ``node`` (not following refs)."""
    if isinstance(node, dict):
        ref = node.get("$ref")
        if isinstance(ref, str):
            yield ref.rsplit("/", 1)[-1]
        for value in node.values():
            yield from _refs(value)
    elif isinstance(node, list):
        for item in node:
            yield from _refs(item)


def _envelope_roles(node: Any, out: dict[str, set[str]]) -> None:
    """Record which defs appear as request params, notification params or results."""
    if isinstance(node, dict):
        props = node.get("properties")
        if isinstance(props, dict):
            if "params" in props and "method" in props:
                role = "request" if "id" in props else "notification"
                out[role].update(_refs(props["params"]))
            if "result" in props and "id" in props:
                out["result"].update(_refs(props["result"]))
        for value in node.values():
            _envelope_roles(value, out)
    elif isinstance(node, list):
        for item in node:
            _envelope_roles(item, out)


def envelope_defs(schema: dict[str, Any]) -> set[str]:
    """Defs that are JSON-RPC envelopes (referenced from the root message union)."""
    names: set[str] = set()
    for branch in schema.get("anyOf", []):
        for sub in branch.get("anyOf", []):
            names.update(_refs(sub))
    return names


def build_method_table(schema: dict[str, Any]) -> list[Method]:
    """All methods of ``schema`` in a stable order (side, kind, wire name)."""
    defs: dict[str, Any] = schema["$defs"]
    roles: dict[str, set[str]] = {"request": set(), "notification": set(), "result": set()}
    _envelope_roles(schema, roles)
    results = {
        (d["x-method"], d["x-side"]): n
        for n, d in defs.items()
        if n in roles["result"] and "x-method" in d
    }
    methods: list[Method] = []
    for kind in ("request", "notification"):
        for def_name in sorted(roles[kind]):
            d = defs.get(def_name, {})
            if "x-method" not in d:
                continue  # Ext* catch-alls: extension methods stay untyped
            result = results.get((d["x-method"], d["x-side"])) if kind == "request" else None
            if kind == "request" and result is None:
                raise ValueError(f"no result def for request {d['x-method']} ({def_name})")
            methods.append(
                Method(
                    name=d["x-method"],
                    kind=kind,
                    side=d["x-side"],
                    params=def_name,
                    result=result,
                    description=d.get("description", ""),
                    py_name=python_name(d["x-method"]),
                    const_name=snake_wire_name(d["x-method"]).upper(),
                )
            )
    return _disambiguate(sorted(methods, key=lambda m: (m.side, m.kind, m.name)))


def _disambiguate(methods: list[Method]) -> list[Method]:
    """A wire name that is both a request and a notification (``mcp/message``): the
    notification's binding constant gets a ``_NOTIFICATION`` suffix, and its Python name a
    ``_notification`` one where the same side handles both (``proxy/successor``). Then the
    Python names of every side are checked (:func:`~codegen.method_names.check_names`)."""
    requests = {(m.name, m.side) for m in methods if m.kind == "request"}
    request_names = {name for name, _ in requests}
    out = []
    for m in methods:
        if m.kind == "notification" and m.name in request_names:
            suffix = "_notification" if (m.name, m.side) in requests else ""
            m = replace(m, py_name=m.py_name + suffix, const_name=m.const_name + "_NOTIFICATION")
        out.append(m)
    for side in sorted({m.side for m in out} - {"protocol", "both"}):
        check_names(side, [m for m in out if m.handled_by(side)])
    return out
