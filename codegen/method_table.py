"""The protocol's methods, read from a raw schema.

A def names its wire method and handling side with ``x-method`` / ``x-side``; whether it is
a request's params, a result or a notification's params comes only from which JSON-RPC
envelope references it (``params`` next to an ``id`` = request, without = notification,
``result`` = result). npm releases ship no ``meta.json``, so nothing else is consulted.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, Literal

Kind = Literal["request", "notification"]

_CAMEL_BOUNDARY = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")


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
    py_name: str  # handler method name, e.g. "session_prompt"

    @property
    def const_name(self) -> str:
        """Binding constant name, e.g. ``SESSION_PROMPT``."""
        return self.py_name.upper()

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


def py_name_of(method: str) -> str:
    """``document/didOpen`` -> ``document_did_open``; ``$/cancel_request`` -> ``cancel_request``."""
    bare = method.removeprefix("$/")
    return _CAMEL_BOUNDARY.sub("_", bare).replace("/", "_").lower()


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
                    py_name=py_name_of(d["x-method"]),
                )
            )
    return _disambiguate(sorted(methods, key=lambda m: (m.side, m.kind, m.name)))


def _disambiguate(methods: list[Method]) -> list[Method]:
    """A wire name that is both a request and a notification (``mcp/message``) gets a suffix."""
    requests = {m.name for m in methods if m.kind == "request"}
    out = []
    for m in methods:
        if m.kind == "notification" and m.name in requests:
            m = Method(
                m.name,
                m.kind,
                m.side,
                m.params,
                m.result,
                m.description,
                m.py_name + "_notification",
            )
        out.append(m)
    return out
