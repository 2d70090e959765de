"""What the client declared in ``initialize``, and the check of a method that needs it.

The agent's connection sees the client's ``initialize`` request; its capabilities stay on
the connection, and a typed request to the client whose binding names a capability
(``RequestMethod.requires``, from the generator: ``fs/read_text_file`` needs
``fs.readTextFile``) is refused locally, before it is sent, when the client did not
declare it. Before any ``initialize`` (a connection without one), nothing is refused.
"""

from __future__ import annotations

from typing import Final

from ._methods import JsonValue

INITIALIZE_METHOD: Final = "initialize"

_CAPABILITY_KEYS = ("clientCapabilities", "capabilities")  # v1, v2


def declared_capabilities(params: JsonValue) -> dict[str, JsonValue]:
    """The capabilities object of a client's ``initialize`` params (empty if none)."""
    if isinstance(params, dict):
        for key in _CAPABILITY_KEYS:
            value = params.get(key)
            if isinstance(value, dict):
                return value
    return {}


def declares(capabilities: dict[str, JsonValue], path: str) -> bool:
    """Whether ``path`` (``"fs.readTextFile"``) is declared: ``true``, or an object."""
    node: JsonValue = capabilities
    for key in path.split("."):
        if not isinstance(node, dict):
            return False
        node = node.get(key)
    return node is True or isinstance(node, dict)
