"""``python -m distributions.release``: build every distribution and check it is fit to upload.

The release workflow (``.github/workflows/release.yml``, through ``make release-check``) and
the local-index round trip (``tests/packaging/test_release_roundtrip.py``) run this same
command, so what the test uploads is what a release would. The checks:

- ``twine check --strict``: the metadata and the README render as the index will show them;
- ``check-wheel-contents``: no bytecode, duplicates or stray top-level entries in a wheel;
- every catalog distribution has exactly one wheel and one sdist, at its resolved version;
- every ``Requires-Dist`` names a distribution built here or a third-party package the root
  ``pyproject.toml`` declares (``distributions.dependency_names``).
"""

from __future__ import annotations

import argparse
import email
import subprocess
import sys
import tarfile
import zipfile
from pathlib import Path

from distributions.__main__ import main as build_main
from distributions.catalog import load_catalog
from distributions.dependency_names import known_names, problems
from distributions.resolve import Resolved, resolve_all
from distributions.versions import root_project


def artifact_stem(r: Resolved) -> str:
    """The file name stem of a distribution's wheel and sdist: ``acp_typed_v1-2.4.0``."""
    return f"{r.dist.name.replace('-', '_')}-{r.version}"


def _metadata(artifact: Path) -> str:
    """The core metadata of a wheel (``METADATA``) or an sdist (``PKG-INFO``)."""
    if artifact.suffix == ".whl":
        with zipfile.ZipFile(artifact) as zf:
            (name,) = [n for n in zf.namelist() if n.endswith(".dist-info/METADATA")]
            return zf.read(name).decode()
    with tarfile.open(artifact) as tf:
        member = tf.extractfile(f"{artifact.name.removesuffix('.tar.gz')}/PKG-INFO")
        assert member is not None
        return member.read().decode()


def _run(*command: str) -> str:
    """Run a checker; its output when it fails, else ``""``."""
    result = subprocess.run(command, capture_output=True, text=True, check=False)
    return "" if result.returncode == 0 else f"{' '.join(command)}:\n{result.stdout}{result.stderr}"


def check(out: Path) -> list[str]:
    """Everything wrong with the artifacts in ``out``, as messages; empty when fit to upload."""
    dists = load_catalog()
    found: list[str] = []
    artifacts = sorted(p for p in out.iterdir() if p.name.endswith((".whl", ".tar.gz")))
    expected = set[str]()
    for r in resolve_all(dists):
        stem = artifact_stem(r)
        expected |= {f"{stem}-py3-none-any.whl", f"{stem}.tar.gz"}
    names = {p.name for p in artifacts}
    if names != expected:
        found.append(f"{out}: expected {sorted(expected)}, found {sorted(names)}")
    if not artifacts:
        return found
    found.append(_run(sys.executable, "-m", "twine", "check", "--strict", *map(str, artifacts)))
    wheels = [str(p) for p in artifacts if p.suffix == ".whl"]
    found.append(_run(sys.executable, "-m", "check_wheel_contents", *wheels))
    known = known_names(dists, root_project())
    for artifact in artifacts:
        requires = email.message_from_string(_metadata(artifact)).get_all("Requires-Dist") or []
        found.extend(f"{artifact.name}: {p}" for p in problems(known, requires))
    return [message for message in found if message]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m distributions.release", description=__doc__)
    parser.add_argument("--out", type=Path, default=Path("dist"), help="folder (default: dist)")
    parser.add_argument(
        "--no-build", action="store_true", help="check the artifacts already in --out"
    )
    args = parser.parse_args(argv)
    if not args.no_build:
        if args.out.exists() and any(args.out.iterdir()):
            parser.error(f"{args.out} is not empty: remove it, or check it with --no-build")
        status = build_main(["--out", str(args.out)])
        if status != 0:
            return status
    messages = check(args.out)
    for message in messages:
        print(f"error: {message}", file=sys.stderr)
    if messages:
        return 1
    print(f"ok: {len(list(args.out.iterdir()))} artifacts in {args.out} are fit to upload")
    return 0


if __name__ == "__main__":
    sys.exit(main())
