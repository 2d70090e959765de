"""A package's public names imported on first access (PEP 562), for ``__init__`` modules.

Importing a package then costs nothing but its ``__init__``: an agent that never proxies
does not import the proxy, and a server that mounts ``websocket_app`` does not import the
HTTP client (httpx, httpcore, trio). Checkers see the package's ``TYPE_CHECKING`` imports.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable, Collection, Mapping
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

    return __getattr__, _dir_of(package, exports)


def lazy_bindings(
    module: str,
    factories: Mapping[str, Callable[[], Any]],
    *,
    shared: Mapping[str, str] | None = None,
) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """The ``__getattr__`` and ``__dir__`` of a generated ``methods`` module: each binding
    is made by its factory on first access (its params and result models are imported on
    their first use, see ``ModelRef``). ``shared`` maps the bindings defined in another
    module (``_shared_methods``) to it."""
    shared = shared or {}
    names = {*factories, *shared}

    def __getattr__(name: str) -> Any:
        namespace = vars(sys.modules[module])
        factory = factories.get(name)
        if factory is not None:
            value = namespace[name] = factory()
            return value
        source = shared.get(name)
        if source is None:
            raise AttributeError(f"module {module!r} has no attribute {name!r}")
        value = namespace[name] = getattr(importlib.import_module(source), name)
        return value

    return __getattr__, _dir_of(module, names)


def _dir_of(module: str, names: Collection[str]) -> Callable[[], list[str]]:
    """A lazy module's ``__dir__``: what it holds so far and every name it can load."""

    def __dir__() -> list[str]:
        return sorted({*vars(sys.modules[module]), *names})

    return __dir__
