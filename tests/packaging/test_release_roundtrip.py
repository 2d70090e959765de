"""The release steps against a real package index on loopback, then an install by name.

``python -m distributions.release`` (what the release workflow runs) builds and checks every
distribution; twine uploads them to a pypiserver on 127.0.0.1; then each generated package is
installed *by name* into an empty virtual environment with pip, from that index together with
the default public one, as a user would once it is published. The environment must hold this
repository's runtime (its files, its version), never another project's ``acp-runtime``.

Needs the public index for pydantic and anyio (skips, saying so, when it is unreachable).
"""

from __future__ import annotations

import json
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
import zipfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from packaging.version import Version

from distributions import release
from distributions.catalog import load_catalog
from distributions.dependency_names import RETIRED_NAMES
from distributions.resolve import Resolved, resolve_all
from tests.packaging.fresh_env import clean_env, new_venv, run_isolated, skip_without_index

HERE = Path(__file__).resolve().parent
REPO_ROOT = HERE.parents[1]
ROUND_TRIP = HERE / "roundtrip_installed.py"

pytestmark = pytest.mark.dist


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


def _wait_until_serving(url: str, server: subprocess.Popen[bytes], seconds: float = 30) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if server.poll() is not None:
            raise AssertionError(f"pypiserver exited with {server.returncode}")
        try:
            with urllib.request.urlopen(url, timeout=2):
                return
        except OSError:
            time.sleep(0.2)
    raise AssertionError(f"pypiserver did not answer {url} within {seconds} s")


@pytest.fixture(scope="module")
def released(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The artifacts the release workflow would upload, built and checked by its command."""
    skip_without_index()
    out = tmp_path_factory.mktemp("release") / "dist"
    result = subprocess.run(
        [sys.executable, "-m", "distributions.release", "--out", str(out)],
        cwd=REPO_ROOT,
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    return out


@pytest.fixture(scope="module")
def local_index(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A pypiserver on loopback taking uploads without a password; its base URL."""
    packages = tmp_path_factory.mktemp("index-packages")
    port = _free_port()
    command = [sys.executable, "-m", "pypiserver", "run", "-i", "127.0.0.1", "-p", str(port)]
    server = subprocess.Popen(
        [*command, "-a", ".", "-P", ".", "--disable-fallback", str(packages)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        base = f"http://127.0.0.1:{port}/"
        _wait_until_serving(base + "simple/", server)
        yield base
    finally:
        server.terminate()
        try:
            server.wait(timeout=10)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait()


@pytest.fixture(scope="module")
def uploaded(released: Path, local_index: str) -> str:
    """Every released artifact uploaded with twine; the index's simple URL."""
    upload = subprocess.run(
        [sys.executable, "-m", "twine", "upload", "--non-interactive", "--disable-progress-bar"]
        + ["--repository-url", local_index, "-u", "x", "-p", "x"]
        + [str(p) for p in sorted(released.iterdir())],
        capture_output=True,
        text=True,
        env={k: v for k, v in clean_env().items() if not k.startswith("TWINE_")},
        check=False,
    )
    assert upload.returncode == 0, upload.stdout + upload.stderr
    return local_index + "simple/"


INSTALLED_FACTS = """
import importlib.metadata as md, json, pathlib, sys
import acp_runtime, acp_generated.{protocol} as generated
def owns(dist, module):
    target = pathlib.Path(module.__file__).resolve()
    return any(pathlib.Path(f.locate()).resolve() == target for f in md.distribution(dist).files)
print(json.dumps({{
    "names": sorted(d.metadata["Name"].lower() for d in md.distributions()),
    "runtime": md.version("{runtime}"),
    "generated": md.version("{generated}"),
    "runtime_owns_acp_runtime": owns("{runtime}", acp_runtime),
    "generated_owns_its_package": owns("{generated}", generated),
}}))
"""


@pytest.mark.parametrize("protocol", ["v1", "v2"])
def test_a_generated_package_installed_by_name_brings_this_repositorys_runtime(
    uploaded: str, tmp_path_factory: pytest.TempPathFactory, protocol: str
) -> None:
    resolved = {r.dist.key: r for r in resolve_all(load_catalog())}
    runtime: Resolved = next(r for r in resolved.values() if not r.dist.is_generated)
    generated = resolved[protocol]
    python = new_venv(tmp_path_factory.mktemp(f"by-name-{protocol}") / "venv")
    pre = ["--pre"] if Version(generated.version).is_prerelease else []
    pip = [sys.executable, "-m", "pip", "--python", str(python), "install", "--quiet"]
    install = subprocess.run(
        [*pip, "--no-cache-dir", "--extra-index-url", uploaded, *pre, generated.dist.name],
        capture_output=True,
        text=True,
        env=clean_env(),
        timeout=600,
        check=False,
    )
    assert install.returncode == 0, install.stdout + install.stderr

    code = INSTALLED_FACTS.format(
        protocol=protocol, runtime=runtime.dist.name, generated=generated.dist.name
    )
    facts_run = run_isolated(python, code)
    assert facts_run.returncode == 0, facts_run.stderr
    facts = json.loads(facts_run.stdout.splitlines()[-1])
    assert not set(facts["names"]) & RETIRED_NAMES, facts["names"]
    assert facts["runtime"] == runtime.version
    assert facts["generated"] == generated.version
    assert facts["runtime_owns_acp_runtime"]
    assert facts["generated_owns_its_package"]

    trip = subprocess.run(
        [str(python), "-I", str(ROUND_TRIP), "--alone", protocol],
        cwd=python.parent,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert trip.returncode == 0, trip.stderr
    assert trip.stdout.splitlines()[-1] == f"{protocol}: round trip ok"


def test_the_release_check_refuses_a_wheel_requiring_a_name_another_project_holds(
    released: Path, tmp_path: Path
) -> None:
    """What the old generated packages did: require ``acp-runtime``."""
    copy = tmp_path / "dist"
    shutil.copytree(released, copy)
    (wheel,) = copy.glob("acp_typed_v1-*.whl")
    with zipfile.ZipFile(wheel) as zf:
        entries = {name: zf.read(name) for name in zf.namelist()}
    (metadata,) = [name for name in entries if name.endswith(".dist-info/METADATA")]
    entries[metadata] = entries[metadata].replace(
        b"Requires-Dist: acp-typed-runtime", b"Requires-Dist: acp-runtime", 1
    )
    with zipfile.ZipFile(wheel, "w") as zf:
        for name, data in entries.items():
            zf.writestr(name, data)
    assert release.check(released) == []
    messages = release.check(copy)
    assert any("acp-runtime" in m and "another project holds" in m for m in messages), messages
