"""How ``codegen/lazy_models.py`` splits a models module into modules created on first use."""

from __future__ import annotations

from codegen.lazy_models import Home, plan_parts

SOURCE = """from __future__ import annotations

from pydantic import BaseModel, Field


class Leaf(BaseModel):
    on: bool = False


class Holder(BaseModel):
    leaf: Leaf = Field(default_factory=lambda: Leaf.model_construct(on=False))


class Message(BaseModel):
    holder: Holder = Field(
        default_factory=lambda: Holder.model_construct(leaf=Leaf.model_construct(on=True))
    )
"""


def test_what_only_a_default_names_stays_with_the_type_that_holds_it() -> None:
    """A schema default builds the models one level down (``codegen/postprocess.py``), so
    a message's default names ``Leaf`` as well as its field's type ``Holder`` does. Only
    the type counts for grouping: ``Leaf`` stays in ``Holder``'s module instead of being
    split into its own, an import more for every agent (issue 34)."""
    home = Home(
        package="pkg._models",
        source=SOURCE,
        names=frozenset({"Leaf", "Holder", "Message"}),
        methods_module="pkg.methods",
    )
    parts = plan_parts([home], messages=frozenset({"Message"}))
    assert sorted((p.module, p.names) for p in parts) == [
        ("holder", ("Leaf", "Holder")),
        ("message", ("Message",)),
    ]
