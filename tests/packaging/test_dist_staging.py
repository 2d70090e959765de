"""A staged distribution holds exactly its packages plus metadata built from the templates."""

from __future__ import annotations

from pathlib import Path

import pytest

from distributions.catalog import Distribution, read_toml
from distributions.resolve import Resolved
from distributions.staging import StagingError, stage

GENERATED = Distribution(
    key="v1",
    name="acp-typed-v1",
    summary="Typed v1",
    packages=("acp_generated/v1",),
    requires=("pydantic",),
    protocol="v1",
)


def _resolved(dist: Distribution) -> Resolved:
    return Resolved(
        dist,
        version="1.25.0",
        dependencies=["acp-typed-runtime>=0.1.0,<0.2", "pydantic>=2.12,<3"],
        requires_python=">=3.10",
        runtime_range=">=0.1.0,<0.2",
        schema_release="1.25.0",
        schema_origin="schema 1.25.0 (tag schema-v1.25.0)",
    )


def _fake_src(tmp_path: Path) -> Path:
    src = tmp_path / "src"
    for package in ("acp_generated/v1", "acp_generated/v1/unstable", "acp_generated/v2"):
        (src / package).mkdir(parents=True)
        (src / package / "__init__.py").write_text("", encoding="utf-8")
        (src / package / "py.typed").write_text("", encoding="utf-8")
    (src / "acp_generated/v1/__pycache__").mkdir()
    (src / "acp_generated/v1/__pycache__/models.cpython-311.pyc").write_bytes(b"")
    return src


def test_generated_distribution_stages_its_version_only_with_unstable_inside(
    tmp_path: Path,
) -> None:
    src = _fake_src(tmp_path)
    root = stage(_resolved(GENERATED), tmp_path / "out", src)
    staged = sorted(p.relative_to(root).as_posix() for p in root.rglob("*") if p.is_file())
    assert staged == [
        "README.md",
        "pyproject.toml",
        "src/acp_generated/v1/__init__.py",
        "src/acp_generated/v1/py.typed",
        "src/acp_generated/v1/unstable/__init__.py",
        "src/acp_generated/v1/unstable/py.typed",
    ]
    project = read_toml(root / "pyproject.toml")
    assert project["project"]["name"] == "acp-typed-v1"
    assert project["project"]["version"] == "1.25.0"
    assert project["project"]["dependencies"] == [
        "acp-typed-runtime>=0.1.0,<0.2",
        "pydantic>=2.12,<3",
    ]
    assert project["tool"]["hatch"]["build"]["targets"]["wheel"]["only-include"] == [
        "src/acp_generated/v1"
    ]
    readme = (root / "README.md").read_text(encoding="utf-8")
    assert "protocol v1, schema 1.25.0 (tag schema-v1.25.0)" in readme
    assert "acp_generated.v1.unstable" in readme


def test_a_namespace_init_is_refused(tmp_path: Path) -> None:
    src = _fake_src(tmp_path)
    (src / "acp_generated/__init__.py").write_text("", encoding="utf-8")
    with pytest.raises(StagingError, match="must stay a namespace package"):
        stage(_resolved(GENERATED), tmp_path / "out", src)


def test_a_package_without_py_typed_is_refused(tmp_path: Path) -> None:
    src = _fake_src(tmp_path)
    (src / "acp_generated/v1/py.typed").unlink()
    with pytest.raises(StagingError, match=r"no py\.typed"):
        stage(_resolved(GENERATED), tmp_path / "out", src)


def test_the_runtime_offers_the_root_projects_optional_groups_as_its_extras(
    tmp_path: Path,
) -> None:
    """``acp-typed-runtime[mcp]`` installs what ``acp-typed[mcp]`` does; no extras, no table."""
    src = tmp_path / "src"
    (src / "acp_runtime").mkdir(parents=True)
    for name in ("__init__.py", "py.typed"):
        (src / "acp_runtime" / name).write_text("", encoding="utf-8")
    runtime = Distribution(
        key="runtime",
        name="acp-typed-runtime",
        summary="Runtime",
        packages=("acp_runtime",),
        requires=("anyio",),
        extras=("mcp",),
    )
    resolved = Resolved(
        runtime,
        version="0.2.0",
        dependencies=["anyio>=4.6,<5"],
        requires_python=">=3.10",
        runtime_range=">=0.2.0,<0.3",
        extras={"mcp": ["mcp>=2.3,<3"], "http": ["httpx>=0.28", "httpx-ws>=0.9"]},
    )
    project = read_toml(stage(resolved, tmp_path / "out", src) / "pyproject.toml")["project"]
    assert project["optional-dependencies"] == {
        "mcp": ["mcp>=2.3,<3"],
        "http": ["httpx>=0.28", "httpx-ws>=0.9"],
    }
    generated = read_toml(
        stage(_resolved(GENERATED), tmp_path / "gen", _fake_src(tmp_path)) / "pyproject.toml"
    )
    assert "optional-dependencies" not in generated["project"]
