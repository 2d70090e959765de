"""What the handler set of the chosen protocol version sees of the first ``initialize``.

The version router (:mod:`acp_runtime._version_router`) hands that request to the
builder of the version it chose, with the params rewritten as the TypeScript SDK's
``agentProtocolRouter`` rewrites them, so a handler sees the same request behind either
SDK's router:

* the requested version is the chosen one: unchanged, except that ``protocolVersion``
  is written as that version's integer (``1.0`` becomes ``1``; a v1-only router serving
  a request for ``0`` says ``1``), so a handler that answers the version it was asked
  for answers what the specification wants;
* v2 chosen for a newer request (3 and up): read as v2, leniently, since a newer client
  may send what v2 does not know: an ``info`` that is not an implementation becomes
  ``{"name": "unknown", "version": "unknown"}``, ``capabilities`` and ``_meta`` are
  kept only if they are objects, other fields are dropped;
* v1 chosen for a v2-shaped request (a v1-only router asked for 2 or more): translated
  to v1, ``info`` to ``clientInfo`` (left out if invalid) and ``capabilities`` to
  ``clientCapabilities``. v2 clients advertise no file system or terminal
  capabilities, so those are ``false``; ``auth.terminal`` becomes a boolean, and
  ``elicitation`` and ``_meta`` are carried over.

Plain JSON, no generated models: the runtime knows no schema version, and these few
fields are all the router needs. Everything else is validated by the chosen handlers.
"""

from __future__ import annotations

from typing import Final

from ._methods import JsonValue

PROTOCOL_V1: Final = 1
PROTOCOL_V2: Final = 2

JsonObject = dict[str, JsonValue]


def initialize_params_for(params: JsonObject, requested: int, selected: int) -> JsonObject:
    """The params the ``selected`` version's handlers get (``params`` itself if unchanged)."""
    if selected == PROTOCOL_V1 and requested >= PROTOCOL_V2:
        return _v2_as_v1(params)
    if selected == PROTOCOL_V2 and requested > PROTOCOL_V2:
        return _newer_as_v2(params)
    version = params.get("protocolVersion")
    if type(version) is int and version == selected:
        return params
    return {**params, "protocolVersion": selected}


def unknown_implementation() -> JsonObject:
    """What stands in for a missing or invalid ``info`` of a newer client."""
    return {"name": "unknown", "version": "unknown"}


def _newer_as_v2(params: JsonObject) -> JsonObject:
    result: JsonObject = {
        "protocolVersion": PROTOCOL_V2,
        "info": _implementation(params.get("info")) or unknown_implementation(),
    }
    _copy_objects(params, result, "capabilities", "_meta")
    return result


def _v2_as_v1(params: JsonObject) -> JsonObject:
    capabilities = _object(params.get("capabilities")) or {}
    auth = _object(capabilities.get("auth")) or {}
    v1_auth: JsonObject = {"terminal": _object(auth.get("terminal")) is not None}
    _copy_objects(auth, v1_auth, "_meta")
    v1_capabilities: JsonObject = {
        "fs": {"readTextFile": False, "writeTextFile": False},
        "terminal": False,
        "session": {"configOptions": {"boolean": {}}},
        "plan": {},
        "auth": v1_auth,
    }
    _copy_objects(capabilities, v1_capabilities, "elicitation", "_meta")
    result: JsonObject = {"protocolVersion": PROTOCOL_V1, "clientCapabilities": v1_capabilities}
    info = _implementation(params.get("info"))
    if info is not None:
        result["clientInfo"] = info
    _copy_objects(params, result, "_meta")
    return result


def _implementation(value: JsonValue) -> JsonObject | None:
    """``{name, version, title?, _meta?}`` if ``value`` is an implementation, else None."""
    fields = _object(value)
    if fields is None:
        return None
    name, version = fields.get("name"), fields.get("version")
    if not isinstance(name, str) or not isinstance(version, str):
        return None
    result: JsonObject = {"name": name, "version": version}
    title = fields.get("title")
    if isinstance(title, str):
        result["title"] = title
    _copy_objects(fields, result, "_meta")
    return result


def _object(value: JsonValue) -> JsonObject | None:
    return value if isinstance(value, dict) else None


def _copy_objects(source: JsonObject, target: JsonObject, *keys: str) -> None:
    """Copy the fields of ``keys`` that are JSON objects (the others are dropped)."""
    for key in keys:
        value = source.get(key)
        if isinstance(value, dict):
            target[key] = value
