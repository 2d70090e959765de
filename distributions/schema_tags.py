"""Which spec release tag holds each locked schema file, byte for byte.

``python -m distributions.schema_tags --mirror DIR [--write]``: ``DIR`` is a git clone (bare
is fine) of agentclientprotocol/agent-client-protocol; the locked files must be fetched
(``python -m codegen fetch --all``). For every file of every locked release it compares the
sha256 with ``schema/vN/<file>`` at each ``schema-v*`` tag. A match is the release the file
belongs to, and a generated package is numbered after it (``distributions.versions``). With
no match it names the nearest tag (fewest differing lines), so the lock can say how far off
the bundled file is. ``--write`` records the result in the lock: ``github_asset.tag`` (the
match, or ``null``) and ``tag_search`` (what was compared, the nearest tag).
"""

from __future__ import annotations

import argparse
import difflib
import hashlib
import json
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from packaging.version import InvalidVersion, Version

from distributions.versions import SCHEMA_LOCK

SCHEMA_CACHE = SCHEMA_LOCK.parent / "cache"
TAG_PREFIX = "schema-v"


@dataclass(frozen=True)
class TagSearch:
    """The outcome for one locked file."""

    release: str
    key: str
    """``v1``, ``v1/unstable``, ..."""
    tag: str | None
    """The tag whose file has exactly the locked sha256, if any."""
    nearest: str
    differing_lines: int
    compared: tuple[str, ...]
    head: str
    """The mirror's default branch when searched, ``main 0123abcd 2026-08-22``."""

    def record(self) -> dict[str, Any]:
        """What goes into the lock's ``tag_search``."""
        found = f"matches {self.tag}" if self.tag else "no tag matches"
        return {
            "result": found,
            "tags_compared": f"{len(self.compared)}: {', '.join(self.compared)}",
            "nearest": f"{self.nearest} ({self.differing_lines} lines differ)",
            "mirror_head": self.head,
        }


def spec_path(key: str) -> str:
    """Where the spec repository keeps the file locked as ``key`` (``v1/unstable``)."""
    version, _, variant = key.partition("/")
    return f"schema/{version}/schema.{variant}.json" if variant else f"schema/{version}/schema.json"


def _git(mirror: Path, *args: str) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(["git", "-C", str(mirror), *args], capture_output=True, check=False)


def release_tags(mirror: Path) -> list[str]:
    """The ``schema-v*`` tags, oldest release first."""
    names = _git(mirror, "tag", "--list", f"{TAG_PREFIX}*").stdout.decode().split()

    def order(tag: str) -> tuple[int, Version | str]:
        try:
            return (0, Version(tag.removeprefix(TAG_PREFIX)))
        except InvalidVersion:
            return (1, tag)

    return sorted(names, key=order)


def _head(mirror: Path) -> str:
    shown = _git(mirror, "log", "-1", "--format=%h %cs", "HEAD").stdout.decode().strip()
    branch = _git(mirror, "symbolic-ref", "--short", "HEAD").stdout.decode().strip()
    return f"{branch or 'HEAD'} {shown}"


def _differing_lines(a: bytes, b: bytes) -> int:
    diff = difflib.unified_diff(a.decode().splitlines(), b.decode().splitlines(), n=0)
    return sum(1 for line in diff if line[:1] in "+-" and line[:3] not in ("+++", "---"))


def search(
    mirror: Path, lock_path: Path = SCHEMA_LOCK, cache: Path = SCHEMA_CACHE
) -> list[TagSearch]:
    """Compare every locked file with the same file at every ``schema-v*`` tag."""
    lock: dict[str, Any] = json.loads(lock_path.read_text(encoding="utf-8"))
    tags = release_tags(mirror)
    head = _head(mirror)
    results: list[TagSearch] = []
    for release, entry in lock["releases"].items():
        for key, locked in entry["files"].items():
            local = (cache / release / key.split("/")[0] / Path(locked["path"]).name).read_bytes()
            if hashlib.sha256(local).hexdigest() != locked["sha256"]:
                raise ValueError(f"{release} {key}: the cached file is not the locked one")
            own_line = TAG_PREFIX + key.split("/")[0].removeprefix("v") + "."
            # (differing lines, other protocol's tag, older): one commit is often tagged for
            # both protocols, so ties go to this protocol's tag, then to the newest.
            ranked: list[tuple[int, bool, int, str]] = []
            for position, tag in enumerate(tags):
                shown = _git(mirror, "show", f"{tag}:{spec_path(key)}")
                if shown.returncode != 0:
                    continue
                same = hashlib.sha256(shown.stdout).hexdigest() == locked["sha256"]
                lines = 0 if same else _differing_lines(shown.stdout, local)
                ranked.append((lines, not tag.startswith(own_line), -position, tag))
            if not ranked:
                raise ValueError(f"no {TAG_PREFIX}* tag in {mirror} has {spec_path(key)}")
            lines, _, _, nearest = min(ranked)
            match = nearest if lines == 0 else None
            results.append(TagSearch(release, key, match, nearest, lines, tuple(tags), head))
    return results


def write(results: list[TagSearch], lock_path: Path = SCHEMA_LOCK) -> None:
    """Record each file's tag (or ``null``) and the search in the lock."""
    lock: dict[str, Any] = json.loads(lock_path.read_text(encoding="utf-8"))
    for result in results:
        asset: dict[str, Any] = lock["releases"][result.release]["files"][result.key][
            "github_asset"
        ]
        asset["tag"] = result.tag
        asset["tag_search"] = result.record()
    lock_path.write_text(json.dumps(lock, indent=2) + "\n", encoding="utf-8")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m distributions.schema_tags", description=__doc__
    )
    parser.add_argument("--mirror", type=Path, required=True, help="git dir of the spec repository")
    parser.add_argument("--lock", type=Path, default=SCHEMA_LOCK)
    parser.add_argument("--cache", type=Path, default=SCHEMA_CACHE)
    parser.add_argument("--write", action="store_true", help="record the result in the lock")
    args = parser.parse_args(argv)
    results = search(args.mirror, args.lock, args.cache)
    for r in results:
        found = r.tag or "no tag matches"
        print(
            f"{r.release} {r.key}: {found}; nearest {r.nearest} ({r.differing_lines} lines differ)"
        )
    if args.write:
        write(results, args.lock)
    return 0


if __name__ == "__main__":
    sys.exit(main())
