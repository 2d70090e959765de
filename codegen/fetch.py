"""Download the locked npm release with ``npm pack`` and unpack its schema files into the cache.

Every byte is checked against the lock before anything is written to the cache, so a
tampered or republished tarball is refused with a message naming both hashes.
"""

from __future__ import annotations

import os
import subprocess
import tarfile
import tempfile
from pathlib import Path

from .lock import LockedRelease, LockError, sha256_bytes


def _npm_pack(spec: str, dest: Path) -> Path:
    proc = subprocess.run(
        ["npm", "pack", spec, "--pack-destination", str(dest), "--silent"],
        capture_output=True,
        text=True,
        check=False,
    )
    if proc.returncode != 0:
        raise LockError(f"`npm pack {spec}` failed:\n{proc.stderr.strip()}")
    return dest / proc.stdout.strip().splitlines()[-1]


def unpack_verified(release: LockedRelease, tarball: Path) -> list[Path]:
    """Check ``tarball`` and its schema files against the lock, then write them to the cache."""
    data = tarball.read_bytes()
    actual = sha256_bytes(data)
    if actual != release.tarball_sha256:
        raise LockError(
            f"sha256 mismatch for {release.package}@{release.version} tarball: "
            f"lock says {release.tarball_sha256}, downloaded {actual}. Refusing to use it."
        )
    contents: dict[str, bytes] = {}
    with tarfile.open(tarball, "r:gz") as tar:
        for key, locked in release.files.items():
            member = tar.extractfile(locked.tarball_path)
            if member is None:
                raise LockError(f"{locked.tarball_path} not found in {tarball.name}")
            blob = member.read()
            got = sha256_bytes(blob)
            if got != locked.sha256:
                raise LockError(
                    f"sha256 mismatch for {key} ({locked.tarball_path}) "
                    f"in release {release.version}: "
                    f"lock says {locked.sha256}, tarball has {got}. Refusing to use it."
                )
            contents[key] = blob
    written = []
    for key, blob in contents.items():
        path = release.files[key].cache_path
        path.parent.mkdir(parents=True, exist_ok=True)
        # whole or absent: test processes fetching at once never read half a file
        partial = path.with_name(f".{path.name}.{os.getpid()}.partial")
        partial.write_bytes(blob)
        os.replace(partial, path)
        written.append(path)
    return written


def is_cached(release: LockedRelease) -> bool:
    """True when every file of ``release`` is in the cache with the locked hash."""
    for locked in release.files.values():
        path = locked.cache_path
        if not path.exists() or sha256_bytes(path.read_bytes()) != locked.sha256:
            return False
    return True


def fetch(release: LockedRelease, tarball: Path | None = None) -> list[Path]:
    """Fill the cache for ``release`` (from ``tarball`` if given, else ``npm pack``)."""
    if tarball is not None:
        return unpack_verified(release, tarball)
    if is_cached(release):
        return [f.cache_path for f in release.files.values()]
    with tempfile.TemporaryDirectory() as tmp:
        packed = _npm_pack(f"{release.package}@{release.version}", Path(tmp))
        return unpack_verified(release, packed)
