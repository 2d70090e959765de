"""``codegen.ordering.dependency_order``: dependencies first, docstrings kept, cycles tolerated."""

from __future__ import annotations

import ast

from codegen.ordering import dependency_order

SOURCE = '''from __future__ import annotations


class A(Base):
    b: B
    c: list[C] = Field(default_factory=lambda: [Z()])


Alias = TypeAliasType("Alias", A | C)
"""Alias docs."""


class Base:
    pass


class B(Base):
    a: A | None = None


class C(Base):
    pass


class Z(Base):
    pass


tail = 1
'''


def _order(source: str) -> list[str]:
    names: list[str] = []
    for node in ast.parse(source).body:
        if isinstance(node, ast.ClassDef):
            names.append(node.name)
        elif isinstance(node, ast.Assign) and isinstance(node.targets[0], ast.Name):
            names.append(node.targets[0].id)
    return names


def test_dependencies_come_first_and_docstrings_stay_attached() -> None:
    out = dependency_order(SOURCE)
    # A and B form a cycle: the walk from A puts B first; lambda bodies are not dependencies
    assert _order(out) == ["Base", "B", "C", "A", "Alias", "Z", "tail"]
    assert 'Alias = TypeAliasType("Alias", A | C)\n"""Alias docs."""' in out
    assert out.endswith("tail = 1\n")
    assert dependency_order(SOURCE) == out  # deterministic
    assert sorted(_order(out)) == sorted(_order(SOURCE))


def test_generated_models_define_every_model_before_use() -> None:
    from acp_generated.v1 import models as v1
    from acp_generated.v2 import models as v2

    for module in (v1, v2):
        pending = [
            name
            for name, obj in vars(module).items()
            if isinstance(obj, type)
            and issubclass(obj, module.AcpModel)
            # Field types resolved at class creation: nothing refers forward. (The schema
            # itself is built on first use, ``defer_build``, so ``__pydantic_complete__``
            # is not the test.)
            and not getattr(obj, "__pydantic_fields_complete__")  # noqa: B009 (untyped for pyright on a subclass)
        ]
        assert pending == []
