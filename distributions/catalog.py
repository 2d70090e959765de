"""What to build: the distributions listed in ``distributions.toml``."""

from __future__ import annotations

import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any, cast

if sys.version_info >= (3, 11):
    import tomllib
else:  # hatchling, needed to build anyway, brings tomli on 3.10
    import tomli as tomllib  # type: ignore[import-not-found, unused-ignore]  # pyright: ignore[reportMissingImports]

CATALOG = Path(__file__).with_name("distributions.toml")


@dataclass(frozen=True)
class Distribution:
    """One distribution built from this repository."""

    key: str
    """Table name in ``distributions.toml`` (``runtime``, ``v1``, ...)."""
    name: str
    summary: str
    packages: tuple[str, ...]
    """Package directories under ``src/``, e.g. ``acp_generated/v1``."""
    requires: tuple[str, ...]
    """Names of root-project dependencies this distribution imports."""
    protocol: str | None = None
    """Protocol version of a generated package; ``None`` for the runtime."""
    post: int = 0
    """Post-release number for a rebuild of the same schema release (generator fixes)."""
    extras: tuple[str, ...] = ()
    """Optional-dependency groups of the root project this distribution offers as its own
    extras (``acp-typed-runtime[mcp]``), copied with their version ranges."""

    @property
    def is_generated(self) -> bool:
        return self.protocol is not None


def read_toml(path: Path) -> dict[str, Any]:
    with path.open("rb") as f:
        data = tomllib.load(f)  # pyright: ignore[reportUnknownMemberType, reportUnknownVariableType, unused-ignore]
    return cast("dict[str, Any]", data)


def load_catalog(path: Path = CATALOG) -> list[Distribution]:
    """Read every distribution, in file order; exactly one must be the runtime."""
    tables = read_toml(path)
    dists = [
        Distribution(
            key=key,
            name=table["name"],
            summary=table["summary"],
            packages=tuple(table["packages"]),
            requires=tuple(table.get("requires", ())),
            protocol=table.get("protocol"),
            post=int(table.get("post", 0)),
            extras=tuple(table.get("extras", ())),
        )
        for key, table in tables.items()
    ]
    runtimes = [d for d in dists if not d.is_generated]
    if len(runtimes) != 1:
        raise ValueError(f"{path}: expected one runtime distribution, found {len(runtimes)}")
    return dists


def runtime_of(dists: list[Distribution]) -> Distribution:
    """The one non-generated distribution, which every generated package depends on."""
    return next(d for d in dists if not d.is_generated)
