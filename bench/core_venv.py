"""A virtual environment like a user's: this checkout installed as a wheel with its core
dependencies (pydantic, anyio, typing-extensions and theirs), and nothing else.

``python -m bench.cold_start --core-venv`` runs the Python agents in it. The development
environment holds over a hundred distributions, and pydantic reads the entry points of every
installed distribution (looking for its plugins) when it builds its first model: there,
that costs every Python agent, the floor included, several milliseconds more than in an
environment holding what ``pip install acp-typed`` installs. The versions are those of the
running environment (pinned as constraints), so only the environment around them changes.
"""

from __future__ import annotations

import importlib.metadata
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
DEFAULT_PATH = REPO / ".bench" / "core-venv"


def _uv() -> str:
    beside = Path(sys.executable).with_name("uv")
    found = str(beside) if beside.exists() else shutil.which("uv")
    if found is None:
        raise SystemExit("bench.core_venv needs uv (`make setup` installs it into .venv)")
    return found


def _constraints() -> str:
    """Every distribution of the running environment at its installed version."""
    pins = {
        dist.name.lower(): dist.version
        for dist in importlib.metadata.distributions()
        if dist.name and dist.name.lower() != "acp-typed"
    }
    return "".join(f"{name}=={version}\n" for name, version in sorted(pins.items()))


def core_venv(path: Path = DEFAULT_PATH) -> Path:
    """(Re)create the environment at ``path`` and return its interpreter."""
    uv = _uv()
    shutil.rmtree(path, ignore_errors=True)
    subprocess.run([uv, "venv", "--quiet", "--python", sys.executable, str(path)], check=True)
    python = path / "bin" / "python"
    with tempfile.NamedTemporaryFile("w", suffix=".txt") as constraints:
        constraints.write(_constraints())
        constraints.flush()
        install = [uv, "pip", "install", "--quiet", "--python", str(python)]
        subprocess.run([*install, "--constraint", constraints.name, str(REPO)], check=True)
    return python


def distributions(python: Path) -> list[str]:
    """The distributions installed in the environment of ``python``."""
    code = "import importlib.metadata as m; print(*sorted(d.name for d in m.distributions()))"
    done = subprocess.run([str(python), "-c", code], check=True, capture_output=True, text=True)
    return done.stdout.split()
