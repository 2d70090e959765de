"""Print each direct dependency's declared range beside the version a resolution picked.

Usage: ``python .ci/bounds.py RESOLVED.txt`` (the output of ``uv pip compile``). Reads
``pyproject.toml``: the runtime dependencies and every optional extra. The CI leg that
resolves with ``--resolution lowest-direct`` prints this, so the log shows which lower
bound each test run actually exercised.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

import tomllib
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

ROOT = Path(__file__).resolve().parents[1]
PIN = re.compile(r"^([A-Za-z0-9][A-Za-z0-9._-]*)==([^\s;\\]+)")


def direct_requirements() -> list[tuple[str, Requirement]]:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    own = canonicalize_name(project["name"])
    found = [("runtime", Requirement(line)) for line in project["dependencies"]]
    for extra, lines in project.get("optional-dependencies", {}).items():
        found += [(extra, Requirement(line)) for line in lines]
    return [(where, req) for where, req in found if canonicalize_name(req.name) != own]


def resolved_versions(path: Path) -> dict[str, str]:
    pins: dict[str, str] = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        match = PIN.match(line)
        if match:
            pins[canonicalize_name(match[1])] = match[2]
    return pins


def main(argv: list[str]) -> int:
    pins = resolved_versions(Path(argv[1]))
    rows = [
        (where, req.name, str(req.specifier) or "(any)", pins.get(canonicalize_name(req.name), "-"))
        for where, req in direct_requirements()
    ]
    widths = [max(len(row[i]) for row in rows) for i in range(3)]
    for row in rows:
        print(
            "  ".join(cell.ljust(width) for cell, width in zip(row[:3], widths, strict=True))
            + "  -> "
            + row[3]
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv))
