"""Roles: which side of the protocol a connection plays, checked against bindings.

An agent handles the methods whose binding says ``side="agent"`` and calls the ones
marked ``"client"``, and the other way round; ``$/``-level methods (``"protocol"``) and
``"both"`` are fine everywhere. The ``"untyped"`` role checks nothing (tests, proxies,
tools).
"""

from __future__ import annotations

from typing import Any, Literal, TypeAlias, get_args

from ._methods import NotificationMethod, RequestMethod, Side

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
    if _peer_handles(role, binding.side):
        return
    raise ValueError(
        f"{binding.name!r} is handled by the {binding.side} side; a {role} cannot send it"
    )


def sides_peer_handles(role: Role) -> frozenset[str]:
    """The binding sides ``role``'s peer handles: a connection tests a send against this
    set and calls :func:`check_peer_handles` only for the others (a call less per send)."""
    return frozenset(side for side in get_args(Side) if _peer_handles(role, side))


def _peer_handles(role: Role, side: str) -> bool:
    return role == "untyped" or side in _ANYWHERE or side == _PEER[role]


def validate_role(role: str) -> Role:
    if role not in ("agent", "client", "untyped"):
        raise ValueError(f"unknown role {role!r}: expected 'agent', 'client' or 'untyped'")
    return role  # type: ignore[return-value]
