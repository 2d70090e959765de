"""Proxies and routing: components between a client and an agent (the conductor's chain)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ._lazy import lazy_exports

if TYPE_CHECKING:
    from ._peer import COUNTERPART as COUNTERPART
    from ._peer import Peer as Peer
    from ._proxied import ProxiedMessage as ProxiedMessage
    from ._proxied import ProxiedNotification as ProxiedNotification
    from ._proxied import ProxiedRequest as ProxiedRequest
    from ._proxy import ConductedProxy as ConductedProxy
    from ._proxy import Proxy as Proxy
    from ._successor import SUCCESSOR as SUCCESSOR
    from ._successor import SuccessorPeer as SuccessorPeer
    from ._version_router import Routed as Routed
    from ._version_router import VersionRouter as VersionRouter

_EXPORTS: dict[str, str] = {
    "COUNTERPART": "_peer",
    "ConductedProxy": "_proxy",
    "Peer": "_peer",
    "ProxiedMessage": "_proxied",
    "ProxiedNotification": "_proxied",
    "ProxiedRequest": "_proxied",
    "Proxy": "_proxy",
    "Routed": "_version_router",
    "SUCCESSOR": "_successor",
    "SuccessorPeer": "_successor",
    "VersionRouter": "_version_router",
}
"""Each public name and the private module that defines it."""


if not TYPE_CHECKING:  # checkers see the imports above, so a misspelt name is an error
    __getattr__, __dir__ = lazy_exports(__name__, _EXPORTS, base="acp_runtime")

__all__ = [
    "COUNTERPART",
    "SUCCESSOR",
    "ConductedProxy",
    "Peer",
    "ProxiedMessage",
    "ProxiedNotification",
    "ProxiedRequest",
    "Proxy",
    "Routed",
    "SuccessorPeer",
    "VersionRouter",
]
