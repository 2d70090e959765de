"""Each optional extra of the runtime installs alone and every module it covers imports.

The runtime wheel is built once; for each extra, ``wheel[extra]`` goes alone into an empty
virtual environment and every module of that extra's subpackage is imported there. The plain
wheel must import every other module. This is what caught the ``[http]`` extra missing a
package its WebSocket modules imported (sniffio).
"""

from __future__ import annotations

import json
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from distributions.catalog import load_catalog
from distributions.resolve import Resolved, resolve_all
from tests.packaging.fresh_env import run_isolated, skip_without_index, venv_with

REPO_ROOT = Path(__file__).resolve().parents[2]

EXTRA_MODULES = {
    "mcp": "acp_runtime.mcp",
    "otel": "acp_runtime.otel",
    "http": "acp_runtime.remote",
}
"""The module (or package, with everything under it) each extra of the runtime exists for."""

NEEDS_GENERATED = ("acp_runtime.testing", "acp_runtime.check")
"""The test client and the conformance check speak a protocol version: they import the
generated packages (and the test client's fixture imports pytest), so they are imported
where those are installed, not with the plain runtime."""

pytestmark = pytest.mark.dist


@pytest.fixture(scope="module")
def runtime() -> Resolved:
    return next(r for r in resolve_all(load_catalog()) if not r.dist.is_generated)


@pytest.fixture(scope="module")
def runtime_wheel(runtime: Resolved, tmp_path_factory: pytest.TempPathFactory) -> Path:
    skip_without_index()
    out = tmp_path_factory.mktemp("dist")
    build = subprocess.run(
        [sys.executable, "-m", "distributions", "--only", runtime.dist.key, "--out", str(out)],
        cwd=REPO_ROOT,
        capture_output=True,
        text=True,
        check=False,
    )
    assert build.returncode == 0, build.stdout + build.stderr
    (wheel,) = out.glob("*.whl")
    return wheel


def _modules(wheel: Path) -> list[str]:
    """Every module in the wheel, dotted (packages by their name, not ``__init__``)."""
    with zipfile.ZipFile(wheel) as zf:
        files = [n for n in zf.namelist() if n.endswith(".py")]
    return sorted(n.removesuffix(".py").removesuffix("/__init__").replace("/", ".") for n in files)


def _under(module: str, root: str) -> bool:
    return module == root or module.startswith(root + ".")


def _covered_by(module: str, extra: str) -> bool:
    return _under(module, EXTRA_MODULES[extra])


def _needs_generated(module: str) -> bool:
    return any(_under(module, root) for root in NEEDS_GENERATED)


def _import_all(python: Path, modules: list[str]) -> list[str]:
    """Import each module in a fresh interpreter of ``python``; return the failures."""
    code = (
        "import importlib, json, sys\n"
        "failed = []\n"
        f"for name in {modules!r}:\n"
        "    try:\n"
        "        importlib.import_module(name)\n"
        "    except Exception as error:\n"
        "        failed.append(f'{name}: {type(error).__name__}: {error}')\n"
        "print(json.dumps(failed))\n"
    )
    result = run_isolated(python, code)
    assert result.returncode == 0, result.stderr
    failed: list[str] = json.loads(result.stdout.splitlines()[-1])
    return failed


def test_every_extra_names_the_modules_it_is_for(runtime: Resolved) -> None:
    assert sorted(runtime.extras) == sorted(EXTRA_MODULES)


def test_the_plain_wheel_imports_every_core_module(
    runtime_wheel: Path, tmp_path_factory: pytest.TempPathFactory
) -> None:
    python = venv_with(tmp_path_factory, "core", str(runtime_wheel))
    core = [
        m
        for m in _modules(runtime_wheel)
        if not any(_covered_by(m, e) for e in EXTRA_MODULES) and not _needs_generated(m)
    ]
    assert "acp_runtime._connection" in core
    assert _import_all(python, core) == []


@pytest.mark.parametrize("extra", sorted(EXTRA_MODULES))
def test_each_extra_alone_imports_every_module_it_covers(
    runtime_wheel: Path, tmp_path_factory: pytest.TempPathFactory, extra: str
) -> None:
    python = venv_with(tmp_path_factory, extra, f"{runtime_wheel}[{extra}]")
    covered = [m for m in _modules(runtime_wheel) if _covered_by(m, extra)]
    assert covered, f"the wheel has no module for the {extra!r} extra"
    assert _import_all(python, covered) == []


def test_the_test_client_and_the_check_import_beside_the_generated_packages(
    runtime_wheel: Path, tmp_path_factory: pytest.TempPathFactory
) -> None:
    out = tmp_path_factory.mktemp("generated")
    keys = [r.dist.key for r in resolve_all(load_catalog()) if r.dist.is_generated]
    only = [arg for key in keys for arg in ("--only", key)]
    build = subprocess.run(
        [sys.executable, "-m", "distributions", *only, "--out", str(out)],
        cwd=REPO_ROOT,
        capture_output=True,
        text=True,
        check=False,
    )
    assert build.returncode == 0, build.stdout + build.stderr
    wheels = map(str, sorted(out.glob("*.whl")))
    python = venv_with(tmp_path_factory, "testing", str(runtime_wheel), *wheels, "pytest")
    versioned = [m for m in _modules(runtime_wheel) if _needs_generated(m)]
    assert "acp_runtime.testing.v1" in versioned and "acp_runtime.check" in versioned
    assert _import_all(python, versioned) == []
