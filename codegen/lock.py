"""The schema lock: which schema files we generate from, where they come from, their sha256."""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent.parent
LOCK_PATH = REPO_ROOT / "schema" / "lock.json"
CACHE_DIR = REPO_ROOT / "schema" / "cache"

#: The four generated packages, keyed like the lock: (lock key, python package, stable key).
VARIANTS: tuple[tuple[str, str, str | None], ...] = (
    ("v1", "acp_generated.v1", None),
    ("v1/unstable", "acp_generated.v1.unstable", "v1"),
    ("v2", "acp_generated.v2", None),
    ("v2/unstable", "acp_generated.v2.unstable", "v2"),
)


@dataclass(frozen=True)
class LockedFile:
    """One schema file of one release."""

    release: str
    key: str  # "v1", "v1/unstable", ...
    tarball_path: str
    sha256: str

    @property
    def cache_path(self) -> Path:
        return (
            CACHE_DIR
            / self.release
            / self.key.replace("/unstable", "")
            / Path(self.tarball_path).name
        )


@dataclass(frozen=True)
class LockedRelease:
    """One npm release of ``@agentclientprotocol/sdk`` and its schema files."""

    version: str
    package: str
    tarball_sha256: str
    files: dict[str, LockedFile]


class LockError(Exception):
    """The lock is unusable or a file does not match it."""


def load_lock(path: Path = LOCK_PATH) -> tuple[str, dict[str, LockedRelease]]:
    """Return (current release, all releases) from the lock file."""
    raw = json.loads(path.read_text(encoding="utf-8"))
    releases: dict[str, LockedRelease] = {}
    for version, rel in raw["releases"].items():
        files = {
            key: LockedFile(version, key, f["path"], f["sha256"]) for key, f in rel["files"].items()
        }
        npm = rel["npm"]
        releases[version] = LockedRelease(version, npm["package"], npm["tarball_sha256"], files)
    return raw["current"], releases


def sha256_bytes(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def read_verified(locked: LockedFile) -> bytes:
    """The cached schema bytes, refusing a missing file or a hash mismatch."""
    path = locked.cache_path
    if not path.exists():
        raise LockError(
            f"{path} is missing: run `python -m codegen fetch --release {locked.release}` first"
        )
    data = path.read_bytes()
    actual = sha256_bytes(data)
    if actual != locked.sha256:
        raise LockError(
            f"sha256 mismatch for {path}: lock says {locked.sha256}, file has {actual}. "
            "Delete schema/cache/ and fetch again; "
            "if the release really changed, update schema/lock.json."
        )
    return data
