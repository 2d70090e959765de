"""A package's public names imported on first access (PEP 562), for ``__init__`` modules.

Importing a package then costs nothing but its ``__init__``: an agent that never proxies
does not import the proxy, and a server that mounts ``websocket_app`` does not import the
HTTP client (httpx, httpcore, trio). Checkers see the package's ``TYPE_CHECKING`` imports.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable, Mapping
from typing import Any


def lazy_exports(
    package: str, exports: Mapping[str, str], *, base: str | None = None
) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """The ``__getattr__`` and ``__dir__`` of ``package``, whose public names are the keys
    of ``exports``, each defined in the submodule it maps to. A name is imported on its
    first access and then kept in the package, so later reads cost a dict lookup.

    A facade module (``acp_runtime.transports``) re-exports from its siblings: ``base``
    is the package its table's modules are in (default: ``package`` itself)."""
    base = base or package

    def __getattr__(name: str) -> Any:
        module = exports.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(f"{base}.{module}"), name)
        setattr(sys.modules[package], name, value)
        return value

    def __dir__() -> list[str]:
        return sorted({*vars(sys.modules[package]), *exports})

    return __getattr__, __dir__
