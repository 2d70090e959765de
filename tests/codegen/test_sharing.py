"""codegen.sharing on small models modules: what a stable package and its superset share."""

from __future__ import annotations

import textwrap

from codegen.method_table import Method
from codegen.sharing import ModelsSource, Sharing, find_sharing

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
