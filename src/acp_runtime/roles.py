"""Roles: which side of the protocol a connection plays, checked against bindings.

An agent handles the methods whose binding says ``side="agent"`` and calls the ones
marked ``"client"``, and the other way round; ``$/``-level methods (``"protocol"``) and
``"both"`` are fine everywhere. The ``"untyped"`` role checks nothing (tests, proxies,
tools).
"""

from __future__ import annotations

from typing import Any, Literal, TypeAlias

from .methods import NotificationMethod, RequestMethod

Role = Literal["agent", "client", "untyped"]

_PEER = {"agent": "client", "client": "agent"}
_ANYWHERE = ("protocol", "both")

Binding: TypeAlias = RequestMethod[Any, Any] | NotificationMethod[Any]


def check_handles(role: Role, binding: Binding) -> None:
    """Raise ``ValueError`` if ``role`` does not handle ``binding`` (at registration)."""
    if role == "untyped" or binding.side in _ANYWHERE or binding.side == role:
        return
    raise ValueError(
        f"{binding.name!r} is handled by the {binding.side} side; a {role} cannot register it"
    )


def check_peer_handles(role: Role, binding: Binding) -> None:
    """Raise ``ValueError`` if ``role``'s peer does not handle ``binding`` (at send)."""
    if role == "untyped" or binding.side in _ANYWHERE or binding.side == _PEER[role]:
        return
    raise ValueError(
        f"{binding.name!r} is handled by the {binding.side} side; a {role} cannot send it"
    )


def validate_role(role: str) -> Role:
    if role not in ("agent", "client", "untyped"):
        raise ValueError(f"unknown role {role!r}: expected 'agent', 'client' or 'untyped'")
    return role  # type: ignore[return-value]
