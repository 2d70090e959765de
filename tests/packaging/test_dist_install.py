"""Build every distribution, install the wheels into a fresh virtual environment (not
editable, no source tree on the path) and run a client against an agent for v1 and v2 with
both generated packages installed side by side.

Needs the package index (or uv's cache) for pydantic and anyio in the fresh environment;
building and installing take a few seconds each.
"""

from __future__ import annotations

import email
import subprocess
import sys
import tarfile
import zipfile
from pathlib import Path

import pytest
from packaging.requirements import Requirement

from distributions.catalog import load_catalog
from distributions.resolve import Resolved, resolve_all
from tests.packaging.fresh_env import skip_without_index, venv_with

HERE = Path(__file__).resolve().parent
REPO_ROOT = HERE.parents[1]
ROUND_TRIP = HERE / "roundtrip_installed.py"

# One build of every distribution per process: keep the module in one worker.
pytestmark = [pytest.mark.dist, pytest.mark.xdist_group("dist-install")]


@pytest.fixture(scope="module")
def dist_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("dist")
    build = subprocess.run(
        [sys.executable, "-m", "distributions", "--out", str(out)],
        cwd=REPO_ROOT,
        capture_output=True,
        text=True,
    )
    assert build.returncode == 0, build.stdout + build.stderr
    return out


def _wheel(dist_dir: Path, r: Resolved) -> Path:
    return dist_dir / f"{r.dist.name.replace('-', '_')}-{r.version}-py3-none-any.whl"


def _fresh_env(tmp_path_factory: pytest.TempPathFactory, wheels: list[Path]) -> Path:
    """A new virtual environment with ``wheels`` (and their dependencies); returns its python."""
    skip_without_index()
    return venv_with(tmp_path_factory, "venv", *map(str, wheels))


def _round_trip(python: Path, *args: str) -> str:
    # -I: no script directory, no PYTHONPATH, no user site: only what was installed.
    result = subprocess.run(
        [str(python), "-I", str(ROUND_TRIP), *args],
        cwd=python.parent,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 0, result.stderr
    return result.stdout.splitlines()[-1]


@pytest.fixture(scope="module")
def resolved() -> dict[str, Resolved]:
    return {r.dist.key: r for r in resolve_all(load_catalog())}


@pytest.fixture(scope="module")
def installed(dist_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A fresh environment with every wheel installed; returns its python."""
    return _fresh_env(tmp_path_factory, sorted(dist_dir.glob("*.whl")))


def test_every_distribution_has_a_wheel_and_an_sdist_named_after_its_version(
    dist_dir: Path,
) -> None:
    for r in resolve_all(load_catalog()):
        stem = f"{r.dist.name.replace('-', '_')}-{r.version}"
        wheel = dist_dir / f"{stem}-py3-none-any.whl"
        sdist = dist_dir / f"{stem}.tar.gz"
        assert wheel.is_file() and sdist.is_file(), sorted(p.name for p in dist_dir.iterdir())
        with zipfile.ZipFile(wheel) as zf:
            names = zf.namelist()
            metadata = zf.read(f"{stem}.dist-info/METADATA").decode()
        for package in r.dist.packages:
            assert f"{package}/__init__.py" in names
            assert f"{package}/py.typed" in names
        assert "acp_generated/__init__.py" not in names  # namespace: v1 and v2 coexist
        message = email.message_from_string(metadata)
        requires = [Requirement(x) for x in message.get_all("Requires-Dist") or []]
        assert {x for x in requires if x.marker is None} == {Requirement(x) for x in r.dependencies}
        assert sorted(message.get_all("Provides-Extra") or []) == sorted(r.extras)
        for extra, group in r.extras.items():
            assert {
                str(x).split(";")[0] for x in requires if x.marker and extra in str(x.marker)
            } == {str(Requirement(x)) for x in group}
        with tarfile.open(sdist) as tf:
            assert f"{stem}/pyproject.toml" in tf.getnames()


def test_generated_packages_ship_their_unstable_superset(dist_dir: Path) -> None:
    for r in resolve_all(load_catalog()):
        if not r.dist.is_generated:
            continue
        stem = f"{r.dist.name.replace('-', '_')}-{r.version}"
        with zipfile.ZipFile(dist_dir / f"{stem}-py3-none-any.whl") as zf:
            names = zf.namelist()
        assert f"acp_generated/{r.dist.protocol}/unstable/__init__.py" in names
        assert f"acp_generated/{r.dist.protocol}/unstable/py.typed" in names


@pytest.mark.parametrize("protocol", ["v1", "v2"])
def test_installed_client_and_agent_round_trip(installed: Path, protocol: str) -> None:
    assert _round_trip(installed, protocol) == f"{protocol}: round trip ok"


@pytest.mark.parametrize("protocol", ["v1", "v2"])
def test_each_generated_package_works_with_only_the_runtime(
    dist_dir: Path,
    resolved: dict[str, Resolved],
    tmp_path_factory: pytest.TempPathFactory,
    protocol: str,
) -> None:
    """No generated package leans on another one (or on a shared module only one ships)."""
    wheels = [_wheel(dist_dir, resolved["runtime"]), _wheel(dist_dir, resolved[protocol])]
    python = _fresh_env(tmp_path_factory, wheels)
    assert _round_trip(python, "--alone", protocol) == f"{protocol}: round trip ok"
