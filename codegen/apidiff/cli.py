"""``python -m codegen diff OLD NEW``: print the API change between two schema sets."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from .inputs import InputError, diff_paths
from .render import dumps, to_text

DESCRIPTION = """\
Print the API change between two ACP schema sets: methods, types (defs), fields,
enum values and union variants added, removed or changed, each classified as
wire-breaking, python-api, wire-additive, annotation-only or description-only,
and the semantic version bump they call for.

OLD and NEW are schema files, or directories holding schema*.json files paired
by relative path (e.g. schema/cache/2.0.0 and schema/cache/2.4.0).
"""


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m codegen diff",
        description=DESCRIPTION,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("old", type=Path, help="old schema file or directory")
    parser.add_argument("new", type=Path, help="new schema file or directory")
    parser.add_argument("--json", action="store_true", help="print JSON for machines")
    parser.add_argument(
        "--verbose",
        action="store_true",
        help="list every description/annotation change instead of folding them",
    )
    parser.add_argument(
        "--fail-on",
        choices=("major", "minor", "patch"),
        help="exit 1 when the suggested bump is at least this large (for CI)",
    )
    return parser


_RANK = {"none": 0, "patch": 1, "minor": 2, "major": 3}


def main(argv: list[str] | None = None) -> int:
    """Run the diff; 0 on success, 1 when ``--fail-on`` trips, 2 on bad input."""
    args = build_parser().parse_args(argv)
    try:
        report = diff_paths(args.old, args.new)
    except InputError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    print(dumps(report) if args.json else to_text(report, verbose=args.verbose))
    if args.fail_on is not None and _RANK[report.bump.value] >= _RANK[args.fail_on]:
        return 1
    return 0
