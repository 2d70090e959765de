"""Package layout of acp_generated: namespace package, lazy re-exports, py.typed, headers."""

from __future__ import annotations

import importlib
import json
import subprocess
import sys
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[2] / "src"
PACKAGES = [
    "acp_generated.v1",
    "acp_generated.v1.unstable",
    "acp_generated.v2",
    "acp_generated.v2.unstable",
]


def _run(code: str) -> dict[str, object]:
    proc = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60
    )
    return json.loads(proc.stdout)


def test_acp_generated_is_a_namespace_package() -> None:
    assert not (SRC / "acp_generated" / "__init__.py").exists()
    for package in PACKAGES:
        directory = SRC / package.replace(".", "/")
        expected = {"__init__.py", "models.py", "methods.py", "handlers.py", "py.typed"}
        expected |= {"builders.py", "remote.py"}
        assert expected <= {p.name for p in directory.iterdir()}


def test_importing_a_package_builds_no_models_until_a_name_is_used() -> None:
    result = _run(
        "import json, sys\n"
        "import acp_generated.v1.unstable as u\n"
        "before = sorted(m for m in sys.modules if m.startswith('acp_generated'))\n"
        "u.PromptRequest\n"
        "after = sorted(m for m in sys.modules if m.startswith('acp_generated'))\n"
        "print(json.dumps({'before': before, 'after': after}))\n"
    )
    assert result["before"] == ["acp_generated", "acp_generated.v1", "acp_generated.v1.unstable"]
    after = result["after"]
    assert isinstance(after, list)
    assert "acp_generated.v1.unstable.models" in after
    assert (
        "acp_generated.v1.models" not in after
    )  # the unstable superset does not pay for stable v1


@pytest.mark.parametrize("package", PACKAGES)
def test_every_exported_name_resolves(package: str) -> None:
    module = importlib.import_module(package)
    missing = [name for name in module.__all__ if getattr(module, name, None) is None]
    assert missing == []
    assert sorted(dir(module)) == sorted(module.__all__)
    with pytest.raises(AttributeError):
        module.NoSuchName  # noqa: B018


def test_import_time_of_one_version_is_bounded() -> None:
    """Generous bound (shared 2-core CI): building every model of v1 stable."""
    result = _run(
        "import json, time\n"
        "t = time.perf_counter()\n"
        "import acp_generated.v1.models\n"
        "print(json.dumps({'seconds': time.perf_counter() - t}))\n"
    )
    seconds = result["seconds"]
    assert isinstance(seconds, float) and seconds < 3.0


@pytest.mark.parametrize("package", PACKAGES)
def test_no_numbered_class_names(package: str) -> None:
    """dcg numbers colliding names (``Foo1``, ``Foo2``); the preprocessing names them all."""
    models = importlib.import_module(f"{package}.models")
    numbered = [name for name in dir(models) if name[:1].isupper() and name[-1].isdigit()]
    assert numbered == []


def test_the_model_base_is_defined_once_in_the_runtime() -> None:
    """Every generated package builds on ``acp_runtime._model.AcpModel``; none keeps a copy."""
    from acp_runtime.codegen_support import AcpModel

    defining = sorted(
        str(path.relative_to(SRC))
        for path in SRC.rglob("*.py")
        if "class AcpModel(" in path.read_text(encoding="utf-8")
    )
    assert defining == ["acp_runtime/_model.py"]
    for package in PACKAGES:
        module = importlib.import_module(package)
        assert module.AcpModel is AcpModel
        assert issubclass(module.PromptRequest, AcpModel)
