"""The runtime is layered: no module of ``acp_runtime`` is part of an import cycle.

Every import counts, including those under ``TYPE_CHECKING`` and inside functions: a
reader follows them all. ``docs/architecture.md`` draws the layers this keeps true.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
RUNTIME = ROOT / "src" / "acp_runtime"
GENERATED = ROOT / "src" / "acp_generated"
ARCHITECTURE = ROOT / "docs" / "architecture.md"
PACKAGE = "acp_runtime"


def module_name(path: Path, root: Path) -> str:
    parts = path.relative_to(root.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imported_modules(path: Path, root: Path, modules: set[str]) -> set[str]:
    """The ``acp_runtime`` modules ``path`` imports, resolved against ``modules``."""
    name = module_name(path, root)
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*anchor, base] if base else anchor)
            # ``from pkg import name`` names the submodule ``pkg.name`` if there is one,
            # else something defined in ``pkg`` itself.
            targets = [
                f"{base}.{alias.name}" if f"{base}.{alias.name}" in modules else base
                for alias in node.names
            ]
        else:
            continue
        found |= {target for target in targets if target in modules}
    return found - {name}


def import_graph(root: Path = RUNTIME) -> dict[str, set[str]]:
    paths = sorted(root.rglob("*.py"))
    modules = {module_name(path, root) for path in paths}
    return {module_name(path, root): imported_modules(path, root, modules) for path in paths}


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for successor in sorted(graph[node]):
            if successor not in index:
                visit(successor)
                low[node] = min(low[node], low[successor])
            elif successor in on_stack:
                low[node] = min(low[node], index[successor])
        if low[node] == index[node]:
            component: list[str] = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


def test_no_module_of_the_runtime_is_in_an_import_cycle() -> None:
    graph = import_graph()
    assert len(graph) > 20, "the runtime's modules were not found"
    assert cycles(graph) == []


def test_the_package_init_is_imported_by_no_runtime_module() -> None:
    """Modules import their siblings, never ``acp_runtime`` itself (that is a cycle too)."""
    graph = import_graph()
    assert [name for name, targets in graph.items() if PACKAGE in targets] == []


def documented_layers() -> dict[str, int]:
    """Module -> layer number, from the table in docs/architecture.md ("## Layers ...")."""
    section = ARCHITECTURE.read_text(encoding="utf-8").split("## Layers of the runtime")[1]
    section = section.split("\n## ")[0]
    layers: dict[str, int] = {}
    for number, modules in re.findall(r"^\| (\d+) [^|]*\| ([^|]*) \|", section, re.MULTILINE):
        for name in re.findall(r"`([\w.]+)`", modules):
            layers[name if name == PACKAGE else f"{PACKAGE}.{name}"] = int(number)
    return layers


def layer_of(module: str, layers: dict[str, int]) -> int | None:
    """A subpackage's modules (``acp_runtime.remote.http``) sit in the layer of the package;
    None for a module the table does not place."""
    while module not in layers and module != PACKAGE:
        module = module.rpartition(".")[0]
    return layers.get(module)


def test_every_module_is_in_the_documented_layer_table() -> None:
    layers = documented_layers()
    graph = import_graph()
    top_level = [name for name in graph if name.count(".") == 1]  # subpackages inherit
    unplaced = [name for name in top_level if name not in layers]
    assert unplaced == [], "add them to the table in docs/architecture.md"
    assert sorted(set(layers) - set(graph)) == [], "the table names modules that do not exist"


def test_modules_import_only_their_own_layer_or_lower_ones() -> None:
    layers = documented_layers()
    upward = [
        f"{name} (layer {layer_of(name, layers)}) imports {target} "
        f"(layer {layer_of(target, layers)})"
        for name, targets in import_graph().items()
        for target in sorted(targets)
        if (layer_of(target, layers) or 0) > (layer_of(name, layers) or 0)
    ]
    assert upward == []


def test_generated_models_and_bindings_need_only_the_runtimes_first_layer() -> None:
    layers = documented_layers()
    for path in sorted(GENERATED.rglob("*.py")):
        if path.name not in ("models.py", "methods.py"):
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        imported = {
            node.module
            for node in ast.walk(tree)
            if isinstance(node, ast.ImportFrom) and (node.module or "").startswith(PACKAGE)
        }
        assert imported, path
        assert {layer_of(module or "", layers) for module in imported} == {1}, path


@pytest.mark.parametrize("lower", ["_response_slot", "_sent_request", "_settlement", "_outbox"])
def test_the_layers_below_the_connection_do_not_reach_it(lower: str) -> None:
    """Answering, sending and queuing are readable (and testable) without the connection."""
    assert f"{PACKAGE}._connection" not in reachable(import_graph(), f"{PACKAGE}.{lower}")


@pytest.mark.parametrize("upper", ["_responder", "_handlers", "_proxied", "_builder"])
def test_the_connection_does_not_reach_the_layers_above_it(upper: str) -> None:
    """The connection dispatches to routes; it does not know handlers or responders."""
    assert f"{PACKAGE}.{upper}" not in reachable(import_graph(), f"{PACKAGE}._connection")


def reachable(graph: dict[str, set[str]], start: str) -> set[str]:
    seen: set[str] = set()
    todo = [start]
    while todo:
        for successor in graph[todo.pop()]:
            if successor not in seen:
                seen.add(successor)
                todo.append(successor)
    return seen


@pytest.mark.parametrize(
    ("sources", "expected"),
    [
        ({"a.py": "from . import b\n", "b.py": "x = 1\n"}, []),
        (
            {
                "a.py": "from .b import x\n",
                "b.py": "import typing\nif typing.TYPE_CHECKING:\n    from .a import y\n",
            },
            [["acp_runtime.a", "acp_runtime.b"]],
        ),
        (
            {"a.py": "def f():\n    from .b import x\n", "b.py": "import acp_runtime.a\n"},
            [["acp_runtime.a", "acp_runtime.b"]],
        ),
        (
            {"__init__.py": "from .a import x\n", "a.py": "from . import b\n", "b.py": ""},
            [],
        ),
        (
            {"__init__.py": "from .a import x\n", "a.py": "from acp_runtime import b\n"},
            [["acp_runtime", "acp_runtime.a"]],
        ),
    ],
)
def test_the_cycle_finder_sees_every_kind_of_import(
    tmp_path: Path, sources: dict[str, str], expected: list[list[str]]
) -> None:
    """The check itself: type-only, function-level and package imports all count."""
    root = tmp_path / PACKAGE
    root.mkdir()
    sources = {"__init__.py": "", **sources}
    for name, text in sources.items():
        (root / name).write_text(text, encoding="utf-8")
    assert cycles(import_graph(root)) == expected
