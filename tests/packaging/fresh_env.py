"""Empty virtual environments for install tests, filled by uv (fast, with its own cache).

uv reads neither pip's configuration nor this repository's (``--no-config``): it installs
from the default public index, so the tests see what a user would. When that index cannot be
reached, the tests that need it skip, saying so.
"""

from __future__ import annotations

import functools
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest


def uv() -> list[str]:
    """The uv command: the one on PATH, else the dev extra's ``python -m uv``."""
    found = shutil.which("uv")
    return [found] if found else [sys.executable, "-m", "uv"]


def clean_env() -> dict[str, str]:
    """This process's environment without pip's or uv's settings (indexes, constraints)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PIP_", "UV_"))}
    env["PIP_CONFIG_FILE"] = os.devnull
    env["PIP_DISABLE_PIP_VERSION_CHECK"] = "1"
    return env


@functools.cache
def index_unreachable() -> str:
    """Why the default package index cannot be reached, or ``""`` when it can.

    Asks pip (its default index, no configuration) for the versions of anyio, a package every
    install here needs anyway."""
    probe = subprocess.run(
        [sys.executable, "-m", "pip", "index", "versions", "anyio"],
        capture_output=True,
        text=True,
        env=clean_env(),
        timeout=120,
        check=False,
    )
    if probe.returncode == 0:
        return ""
    return f"the default package index is unreachable: {probe.stderr.strip()[-300:]}"


def skip_without_index() -> None:
    reason = index_unreachable()
    if reason:
        pytest.skip(reason)


def new_venv(path: Path) -> Path:
    """An empty virtual environment (no pip) at ``path``, on this interpreter; its python."""
    subprocess.run(
        [*uv(), "venv", "--quiet", "--no-config", "--python", sys.executable, str(path)],
        check=True,
        env=clean_env(),
        cwd=path.parent,
    )
    return path / "bin" / "python"


def uv_install(python: Path, *requirements: str) -> None:
    """Install ``requirements`` into ``python``'s environment; fail with uv's output."""
    command = [*uv(), "pip", "install", "--quiet", "--no-config", "--python", str(python)]
    result = subprocess.run(
        [*command, *requirements],
        capture_output=True,
        text=True,
        env=clean_env(),
        cwd=python.parent,
        timeout=600,
        check=False,
    )
    assert result.returncode == 0, f"{' '.join(requirements)}:\n{result.stdout}{result.stderr}"


def venv_with(tmp_path_factory: pytest.TempPathFactory, name: str, *requirements: str) -> Path:
    """A new environment in a fresh temporary folder named after ``name``, with
    ``requirements`` (and their dependencies) installed; its python."""
    python = new_venv(tmp_path_factory.mktemp(name) / "venv")
    uv_install(python, *requirements)
    return python


def run_isolated(python: Path, code: str) -> subprocess.CompletedProcess[str]:
    """Run ``code`` in ``python`` with ``-I``: no script directory, no PYTHONPATH, no user site."""
    return subprocess.run(
        [str(python), "-I", "-c", code],
        capture_output=True,
        text=True,
        cwd=python.parent,
        timeout=120,
        check=False,
    )
