"""``vN.unstable`` extends ``vN``: every stable name is there, and what the unstable schema does
not change is the very same object (codegen/sharing.py), so a stable instance is an unstable
one. The names it does change are listed here: a schema bump that changes more (or fewer)
shows up as a diff of these lists."""

from __future__ import annotations

import importlib
import typing
from types import ModuleType

import pytest

from acp_generated import v1, v2
from acp_generated.v1 import unstable as v1_unstable
from acp_generated.v2 import unstable as v2_unstable

CHANGED = {
    "v1": """
        AgentAuthCapabilities AgentCapabilities AgentHandler ClientCapabilities ClientHandler
        INITIALIZE InitializeRequest InitializeResponse ListSessionsRequest ListSessionsResponse
        LoadSessionRequest McpCapabilities McpServer McpServerKnown NOTIFICATIONS
        NewSessionRequest PromptRequest PromptResponse REQUESTS RemoteAgent RemoteClient
        ResumeSessionRequest SESSION_LIST SESSION_LOAD SESSION_NEW SESSION_PROMPT SESSION_RESUME
        SESSION_UPDATE SessionCapabilities SessionInfo SessionNotification SessionUpdate
    """,
    "v2": """
        AgentAuthCapabilities AgentCapabilities AgentHandler BackgroundWork BackgroundWorkKnown
        CancelledIdleStateUpdate CancelledIdleStateUpdateSessionUpdate
        CancelledIdleStateUpdateVariant ClientHandler EndTurnIdleStateUpdate
        EndTurnIdleStateUpdateSessionUpdate EndTurnIdleStateUpdateVariant ErrorIdleStateUpdate
        ErrorIdleStateUpdateSessionUpdate ErrorIdleStateUpdateVariant INITIALIZE IdleStateUpdate
        IdleStateUpdateKnown IdleStateUpdateSessionUpdate IdleStateUpdateSessionUpdateKnown
        IdleStateUpdateVariant IdleStateUpdateVariantKnown InitializeRequest InitializeResponse
        ListSessionsRequest ListSessionsResponse MaxTokensIdleStateUpdate
        MaxTokensIdleStateUpdateSessionUpdate MaxTokensIdleStateUpdateVariant
        MaxTurnRequestsIdleStateUpdate MaxTurnRequestsIdleStateUpdateSessionUpdate
        MaxTurnRequestsIdleStateUpdateVariant McpCapabilities McpServer McpServerKnown
        NOTIFICATIONS NewSessionRequest NoneIdleStateUpdate NoneIdleStateUpdateSessionUpdate
        NoneIdleStateUpdateVariant OtherBackgroundWork OtherIdleStateUpdate
        OtherIdleStateUpdateSessionUpdate OtherIdleStateUpdateVariant OtherMcpServer
        OtherPlanUpdateContent OtherSessionUpdate OtherStateUpdate OtherStateUpdateSessionUpdate
        PlanUpdate PlanUpdateContent PlanUpdateSessionUpdate REQUESTS RefusalIdleStateUpdate
        RefusalIdleStateUpdateSessionUpdate RefusalIdleStateUpdateVariant RemoteAgent RemoteClient
        RequiresActionStateUpdate RequiresActionStateUpdateSessionUpdate
        RequiresActionStateUpdateVariant ResumeSessionRequest RunningStateUpdate
        RunningStateUpdateSessionUpdate RunningStateUpdateVariant SESSION_LIST SESSION_NEW
        SESSION_RESUME SESSION_UPDATE SessionCapabilities SessionInfo SessionUpdate
        SessionUpdateKnown StateUpdate StateUpdateKnown StateUpdateSessionUpdate
        StateUpdateSessionUpdateKnown UpdateSessionNotification
    """,
}
"""Stable names the unstable package defines anew (the handler classes and facades are
generated per package; the rest changed in the unstable schema, or refers to what did)."""

PAIRS = [pytest.param(v1, v1_unstable, id="v1"), pytest.param(v2, v2_unstable, id="v2")]


@pytest.mark.parametrize(("stable", "unstable"), PAIRS)
def test_every_stable_name_is_unstable_too_and_the_unchanged_are_the_same_object(
    stable: ModuleType, unstable: ModuleType
) -> None:
    assert sorted(set(stable.__all__) - set(unstable.__all__)) == []
    changed = {n for n in stable.__all__ if getattr(stable, n) is not getattr(unstable, n)}
    version = stable.__name__.rsplit(".", 1)[-1]
    assert sorted(changed) == sorted(CHANGED[version].split())
    reused = set(stable.__all__) - changed
    assert len(reused) > 2 * len(changed)  # most of the stable package is shared


@pytest.mark.parametrize(("stable", "unstable"), PAIRS)
def test_a_stable_instance_is_an_unstable_one(stable: ModuleType, unstable: ModuleType) -> None:
    assert unstable.TextContentBlock is stable.TextContentBlock
    block = stable.TextContentBlock(text="hi")
    assert isinstance(block, unstable.TextContentBlock)
    assert isinstance(block, unstable.AcpModel)
    # The unstable request (changed in v1, shared in v2) takes the stable block.
    request = unstable.PromptRequest(session_id="s", prompt=[block])
    assert isinstance(request.prompt[0], stable.TextContentBlock)
    assert request.model_dump(by_alias=True, exclude_none=True)["prompt"] == [
        {"type": "text", "text": "hi"}
    ]


@pytest.mark.parametrize(("stable", "unstable"), PAIRS)
def test_a_shared_params_class_has_one_binding(stable: ModuleType, unstable: ModuleType) -> None:
    """Its ``__acp_method__`` is a binding both packages list (the unstable one reuses it), so
    importing either package, or both, links it the same way."""
    linked = [
        cls
        for n in stable.__all__
        if isinstance(cls := getattr(stable, n), type)
        and "__acp_method__" in vars(cls)
        and getattr(unstable, n) is cls
    ]
    assert len(linked) > 5
    for cls in linked:
        binding = cls.__acp_method__
        assert any(binding is b for b in stable.REQUESTS + stable.NOTIFICATIONS), cls
        assert any(binding is b for b in unstable.REQUESTS + unstable.NOTIFICATIONS), cls


def test_importing_unstable_builds_none_of_the_stable_package_s_own_models() -> None:
    """The shared definitions live in ``v1/_models`` (``_shared_models`` is their facade):
    ``unstable`` never imports the stable ``models`` module (import cost stays what it was)."""
    import subprocess
    import sys

    code = (
        "import sys\n"
        "from acp_generated.v1.unstable import PromptRequest, TextContentBlock\n"
        "print('acp_generated.v1.models' in sys.modules,\n"
        "      TextContentBlock.__module__.startswith('acp_generated.v1._models.'))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["False", "True"]


def test_the_shared_modules_are_private() -> None:
    for package in ("acp_generated.v1", "acp_generated.v2"):
        module = importlib.import_module(package)
        assert not any(n.startswith("_shared") for n in module.__all__)


@pytest.mark.parametrize("version", ["v1", "v2"])
def test_the_builders_of_shared_models_are_shared(version: str) -> None:
    stable = importlib.import_module(f"acp_generated.{version}.builders")
    unstable = importlib.import_module(f"acp_generated.{version}.unstable.builders")
    # v2.unstable's PlanUpdateContent has other variants: no stable "items" variant to build.
    missing = {"v1": [], "v2": ["items_plan_update_content"]}
    assert sorted(set(stable.__all__) - set(unstable.__all__)) == missing[version]
    assert unstable.text is stable.text
    assert unstable.tool_diff is stable.tool_diff
    package = importlib.import_module(f"acp_generated.{version}")
    superset = importlib.import_module(f"acp_generated.{version}.unstable")
    shared = [n for n in stable.__all__ if getattr(unstable, n, None) is getattr(stable, n)]
    assert len(shared) > len(stable.__all__) / 2
    for name in shared:  # a shared builder builds a shared model
        model = typing.get_type_hints(getattr(stable, name))["return"].__name__
        assert getattr(package, model) is getattr(superset, model), name
