"""codegen.sharing on small models modules: what a stable package and its superset share."""

from __future__ import annotations

import textwrap

from codegen.method_table import Method
from codegen.sharing import ModelsSource, Sharing, find_sharing, split_models

HEAD = '''# header
"""Models."""

from __future__ import annotations

import importlib
from typing import Any, Literal

from acp_runtime.codegen_support import AcpModel as AcpModel

'''
FOOTER = '\n\nimportlib.import_module(f"{__package__}.methods")\n'


def module(body: str) -> str:
    return HEAD + textwrap.dedent(body).strip("\n") + FOOTER


STABLE = module('''
    class Text(AcpModel):
        """See [docs](https://agentclientprotocol.com/protocol/v1/content)."""
        text: str


    class Block(AcpModel):
        content: Text


    class Caps(AcpModel):
        fs: bool


    class Init(AcpModel):
        caps: Caps
''')
UNSTABLE = module('''
    class Text(AcpModel):
        """See [docs](https://agentclientprotocol.com/protocol/v1/draft/content)."""
        text: str


    class Block(AcpModel):
        content: Text


    class Caps(AcpModel):
        fs: bool
        terminal: Literal["yes"]


    class Init(AcpModel):
        caps: Caps
''')


def test_identical_definitions_with_shared_references_are_shared() -> None:
    """``Text`` differs only in its doc link; ``Init`` is identical but refers to ``Caps``,
    which changed, so it is not shared (the fixpoint)."""
    sharing = find_sharing(ModelsSource(STABLE, [], set()), ModelsSource(UNSTABLE, [], set()))
    assert sharing.names == {"Text", "Block"}


def test_a_linked_params_class_is_shared_only_with_its_binding() -> None:
    def init(side: str) -> Method:
        return Method("initialize", "request", side, "Block", "Text", "", "initialize", "INIT")

    stable = ModelsSource(STABLE, [init("agent")], {"Block"})
    assert find_sharing(stable, ModelsSource(UNSTABLE, [init("agent")], {"Block"})) == Sharing(
        frozenset({"Text", "Block"}), frozenset({("initialize", "request")})
    )
    other_side = find_sharing(stable, ModelsSource(UNSTABLE, [init("client")], {"Block"}))
    assert other_side == Sharing(frozenset({"Text"}), frozenset())


def test_split_moves_the_shared_definitions_and_keeps_the_stable_text() -> None:
    sharing = Sharing(frozenset({"Text", "Block"}), frozenset())
    shared = split_models(STABLE, sharing, "", header='"""Shared."""\n')
    own = split_models(UNSTABLE, sharing, ".._shared_models")
    assert "class Text(" in shared and "class Caps(" not in shared
    assert "/protocol/v1/content" in shared  # the stable text
    assert "._shared_methods" in shared and "Literal" not in shared  # unused import dropped
    assert "class Text(" not in own and "class Caps(" in own
    assert "from .._shared_models import (\n    Block as Block,\n    Text as Text,\n)" in own
    compile(shared, "shared", "exec")
    compile(own, "own", "exec")
