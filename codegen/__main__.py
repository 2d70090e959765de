"""``python -m codegen generate|check|diff|fetch``."""

from __future__ import annotations

import argparse
import importlib
import sys
import time
from pathlib import Path

from .lock import CACHE_DIR, LockError, load_lock


def _fetch(args: argparse.Namespace) -> int:
    from .fetch import fetch

    current, releases = load_lock()
    wanted = list(releases) if args.all else [args.release or current]
    for version in wanted:
        if version not in releases:
            print(f"release {version} is not in schema/lock.json", file=sys.stderr)
            return 2
        for path in fetch(releases[version], Path(args.tarball) if args.tarball else None):
            print(f"ok {path}")
    return 0


def _generate(args: argparse.Namespace) -> int:
    from .pipeline import generate_all, write

    start = time.perf_counter()
    changed = write(generate_all(args.release))
    for path in changed:
        print(f"wrote src/{path}")
    print(f"generated in {time.perf_counter() - start:.1f}s ({len(changed)} files changed)")
    return 0


def _check(args: argparse.Namespace) -> int:
    from .pipeline import differences, generate_all

    stale = differences(generate_all(args.release))
    if stale:
        print("generated code is out of date; run `python -m codegen generate`:", file=sys.stderr)
        for path in stale:
            print(f"  src/{path}", file=sys.stderr)
        return 1
    print("generated code is up to date")
    return 0


def _diff(args: argparse.Namespace) -> int:
    try:
        apidiff = importlib.import_module("codegen.apidiff")
    except ModuleNotFoundError:
        print("codegen.apidiff is not available in this checkout", file=sys.stderr)
        return 2
    rest = list(args.rest)
    if not [a for a in rest if not a.startswith("-")]:  # no paths: older locked -> current
        current, releases = load_lock()
        older = [v for v in releases if v != current]
        if not older:
            print("only one release is locked; pass OLD NEW paths", file=sys.stderr)
            return 2
        rest += [str(CACHE_DIR / older[0]), str(CACHE_DIR / current)]
    return int(apidiff.main(rest))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m codegen", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser(
        "fetch", help="download the locked schemas into schema/cache/ (hash-checked)"
    )
    p.add_argument("--release", help="npm release from schema/lock.json (default: current)")
    p.add_argument("--all", action="store_true", help="every locked release")
    p.add_argument("--tarball", help="use this local npm tarball instead of `npm pack`")
    p.set_defaults(run=_fetch)
    for name, run, text in (
        ("generate", _generate, "regenerate src/acp_generated from the locked schemas"),
        ("check", _check, "exit 1 if src/acp_generated differs from a fresh generation"),
    ):
        p = sub.add_parser(name, help=text)
        p.add_argument("--release", help="npm release from schema/lock.json (default: current)")
        p.set_defaults(run=run)
    p = sub.add_parser(
        "diff",
        help="API diff between two schema sets (codegen.apidiff); default: older locked -> current",
    )
    p.add_argument("rest", nargs=argparse.REMAINDER)
    p.set_defaults(run=_diff)
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["diff"]:  # everything after "diff" belongs to codegen.apidiff
        args = argparse.Namespace(run=_diff, rest=argv[1:])
    else:
        args = parser.parse_args(argv)
    try:
        return int(args.run(args))
    except LockError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
