"""``python -m distributions``: build every distribution's sdist and wheel into one folder.

Each distribution is staged in a scratch directory, then ``python -m build`` makes the sdist
and builds the wheel *from that sdist*, so a file missing from the sdist breaks the build
instead of a user's install. Builds run without isolation: the build backend (hatchling)
comes from the ``dev`` extra, so ``make dist`` needs no network.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
from pathlib import Path

from distributions.catalog import load_catalog
from distributions.resolve import Resolved, resolve_all
from distributions.staging import StagingError, stage
from distributions.versions import SCHEMA_LOCK, VersionSourceError


class BuildError(Exception):
    """The build backend failed; carries its output."""


def build_one(resolved: Resolved, out: Path, scratch: Path) -> list[Path]:
    """Stage and build one distribution; return the new artifacts in ``out``."""
    root = stage(resolved, scratch)
    before = set(out.iterdir()) if out.exists() else set[Path]()
    build = subprocess.run(
        [sys.executable, "-m", "build", "--no-isolation", "--outdir", str(out), str(root)],
        capture_output=True,
        text=True,
        check=False,
    )
    if build.returncode != 0:
        raise BuildError(f"building {resolved.dist.name} failed:\n{build.stdout}{build.stderr}")
    return sorted(set(out.iterdir()) - before)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m distributions", description=__doc__)
    parser.add_argument(
        "--out", type=Path, default=Path("dist"), help="output folder (default: dist)"
    )
    parser.add_argument(
        "--only", action="append", metavar="KEY", help="build only this catalog entry (repeatable)"
    )
    parser.add_argument(
        "--lock", type=Path, default=SCHEMA_LOCK, help="codegen lock to read schema releases from"
    )
    parser.add_argument(
        "--list",
        action="store_true",
        help="print resolved names, versions, requirements; build nothing",
    )
    args = parser.parse_args(argv)

    dists = load_catalog()
    unknown = set(args.only or ()) - {d.key for d in dists}
    if unknown:
        parser.error(f"unknown distribution(s): {', '.join(sorted(unknown))}")
    try:
        selected = resolve_all(dists, args.only or (), lock=args.lock)
    except VersionSourceError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2

    for r in selected:
        origin = r.schema_origin or "pyproject.toml"
        print(f"{r.dist.name} {r.version} (from {origin}) requires {', '.join(r.dependencies)}")
        for extra, requirements in r.extras.items():
            print(f"  [{extra}] requires {', '.join(requirements)}")
    if args.list:
        return 0

    args.out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="acp-dist-") as scratch:
        for r in selected:
            try:
                artifacts = build_one(r, args.out, Path(scratch))
            except (StagingError, BuildError) as error:
                print(f"error: {error}", file=sys.stderr)
                return 2
            for artifact in artifacts:
                print(f"  built {artifact}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
