"""The agent's ``acp`` MCP capability in an ``initialize`` response, v1 and v2.

An agent that accepts ``{"type": "acp"}`` servers says so: v1
``agentCapabilities.mcpCapabilities.acp = true``, v2 ``capabilities.session.mcp.acp = {}``.
These helpers work on the generated ``InitializeResponse`` of either version (or its
JSON), so the runtime needs no generated package.
"""

from __future__ import annotations

from typing import Any, TypeVar, cast

from pydantic import BaseModel

from .._methods import JsonValue

M = TypeVar("M", bound=BaseModel)


def advertise_mcp_over_acp(response: M) -> M:
    """A copy of ``response`` (an ``InitializeResponse``) that advertises ``acp`` servers."""
    data = response.model_dump(mode="json", by_alias=True, exclude_unset=True)
    if data.get("protocolVersion") == 1:
        capabilities = data.setdefault("agentCapabilities", {}).setdefault("mcpCapabilities", {})
        capabilities["acp"] = True
    else:
        session = data.setdefault("capabilities", {}).setdefault("session", {})
        session.setdefault("mcp", {})["acp"] = {}
    return type(response).model_validate(data)


def accepts_mcp_over_acp(response: BaseModel | JsonValue) -> bool:
    """Whether an ``initialize`` response advertises ``acp`` servers (v1 or v2)."""
    data: Any = (
        response.model_dump(mode="json", by_alias=True)
        if isinstance(response, BaseModel)
        else response
    )
    if _at(data, "protocolVersion") == 1:
        return _at(data, "agentCapabilities", "mcpCapabilities", "acp") is True
    return isinstance(_at(data, "capabilities", "session", "mcp", "acp"), dict)


def _at(data: Any, *keys: str) -> Any:
    """``data[k1][k2]...``, or ``None`` where the path is not there."""
    for key in keys:
        if not isinstance(data, dict):
            return None
        data = cast("dict[str, Any]", data).get(key)
    return data
