"""Cold start budget (issue #17): an agent imports and builds only what its first messages
need. Deterministic checks first (what is imported, what is built), then a CPU-time budget
relative to ``import pydantic`` measured in the same run, so a slow machine moves both."""

from __future__ import annotations

import importlib
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

# The first-messages run happens once per process
pytestmark = pytest.mark.xdist_group("cold-start")

REPO = Path(__file__).resolve().parents[2]

ENV = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
"""Installed code runs from bytecode; the first run below writes it."""

FIRST_MESSAGES = """
import json, sys, time
start = time.process_time()
import acp_runtime
from acp_generated import v1
from acp_generated.v1 import models
request = models.InitializeRequest.model_validate({"protocolVersion": 1})
models.InitializeResponse(protocol_version=request.protocol_version).model_dump(mode="json")
elapsed = time.process_time() - start
created, bases = set(), [models.AcpModel]  # every class the first messages created
while bases:
    created.update(new := set(bases.pop().__subclasses__()) - created)
    bases += new
classes = [getattr(models, n) for n in models.__all__]  # creates the others, built none
classes = [c for c in classes if isinstance(c, type) and issubclass(c, models.AcpModel)]
print(json.dumps({
    "seconds": elapsed,
    "created": len(created),
    "built": sum(1 for c in classes if c.__pydantic_complete__),
    "classes": len(classes),
    "modules": sorted(m for m in ("trio", "mcp", "httpx", "opentelemetry") if m in sys.modules),
    "runtime": sorted(m for m in sys.modules if m.startswith("acp_runtime.")),
}))
"""

PYDANTIC = """
import json, time
start = time.process_time()
from pydantic import BaseModel
class M(BaseModel):
    x: int
M(x=1)
print(json.dumps({"seconds": time.process_time() - start}))
"""


def run(code: str, cwd: Path | None = None) -> Any:
    """What ``code`` prints (JSON), run in a fresh interpreter."""
    done = subprocess.run(
        [sys.executable, "-c", code],
        cwd=cwd,
        env=ENV,
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    return json.loads(done.stdout)


@pytest.fixture(scope="module")
def first_messages() -> dict[str, object]:
    run(FIRST_MESSAGES)  # writes the bytecode caches
    first: dict[str, object] = run(FIRST_MESSAGES)
    return first


def test_an_asyncio_agent_imports_no_optional_backend_or_extra(
    first_messages: dict[str, object],
) -> None:
    assert first_messages["modules"] == []


UNUSED_BY_A_PLAIN_AGENT = (
    "acp_runtime._salvage_walk",
    "acp_runtime._memory",
    "acp_runtime._process",
    "acp_runtime._proxied",
    "acp_runtime._proxy",
    "acp_runtime._run",
    "acp_runtime._salvage",
    "acp_runtime._trace",
    "acp_runtime._version_router",
)


def test_the_runtime_package_loads_its_names_on_first_access(
    first_messages: dict[str, object],
) -> None:
    """``acp_runtime/__init__`` is lazy (PEP 562): answering ``initialize`` imports no
    proxy, version router, process, trace or memory-transport module, and salvaging
    (``acp_runtime._lenient``) is imported once some input fails strict validation."""
    runtime = first_messages["runtime"]
    assert isinstance(runtime, list)
    assert "acp_runtime._lenient" in runtime
    assert [m for m in UNUSED_BY_A_PLAIN_AGENT if m in runtime] == []


@pytest.mark.parametrize(
    ("package", "typo"), [("acp_runtime", "Conection"), ("acp_runtime.remote", "websocket_ap")]
)
def test_every_public_name_of_a_lazy_package_still_resolves(package: str, typo: str) -> None:
    """Both packages load their names on first access (``acp_runtime._lazy``)."""
    module = importlib.import_module(package)
    for name in module.__all__:
        assert getattr(module, name) is not None, name
    assert set(module.__all__) <= set(dir(module))
    with pytest.raises(AttributeError, match=f"no attribute '{typo}'"):
        getattr(module, typo)


def test_models_are_built_on_first_use_only(first_messages: dict[str, object]) -> None:
    """``defer_build``: answering ``initialize`` builds a few of the ~180 v1 models."""
    built, classes = first_messages["built"], first_messages["classes"]
    assert isinstance(built, int) and isinstance(classes, int)
    assert classes > 100 and built < classes // 10, (built, classes)


def test_answering_initialize_creates_only_the_classes_it_uses(
    first_messages: dict[str, object],
) -> None:
    """The models are modules created on first access (``codegen/lazy_models.py``, issue
    34): ``initialize`` creates its request's and answer's classes and those they refer to
    (about 30 of the ~180 v1 models), where importing ``models`` used to create them all."""
    created, classes = first_messages["created"], first_messages["classes"]
    assert isinstance(created, int) and isinstance(classes, int)
    assert created < classes // 4, (created, classes)


def test_first_messages_cost_at_most_2_5_pydantic_starts() -> None:
    """CPU time against importing pydantic and creating one model, the fastest of 5
    interleaved runs each. Measured 2026-12-04 on 2-core VMs: 1.52-1.58x quiet, 1.70x with
    both cores busy, 1.91x wall-clock on a CI machine; about 5x without deferred building.
    The deterministic tests above catch the finer regressions (an eager import, an eager
    build); this one catches a cost nobody named."""
    run(FIRST_MESSAGES)
    ours: list[float] = []
    base: list[float] = []
    for _ in range(5):
        ours.append(float(run(FIRST_MESSAGES)["seconds"]))
        base.append(float(run(PYDANTIC)["seconds"]))
    assert min(ours) < 2.5 * min(base), (
        f"first messages {min(ours) * 1000:.0f} ms CPU, pydantic {min(base) * 1000:.0f} ms"
    )


ECHO_IMPORT = """
import json, sys
sys.path.insert(0, "examples")
import echo_agent
from acp_generated.v1 import models
classes = [getattr(models, n) for n in models.__all__]  # creates the others, built none
classes = [c for c in classes if isinstance(c, type) and issubclass(c, models.AcpModel)]
print(json.dumps([c.__name__ for c in classes if c.__pydantic_complete__]))
"""


def test_importing_the_echo_example_builds_no_validator() -> None:
    """Its canned updates and permission options are built when a prompt asks for them:
    built at import, they cost its cold start 9 validators (issue 34)."""
    assert run(ECHO_IMPORT, cwd=REPO) == []


@pytest.mark.parametrize("agent", ["this", "floor", "deps_floor", "echo", "tutorial"])
def test_each_cold_start_agent_answers_initialize_then_streams(agent: str) -> None:
    """``python -m bench.cold_start`` times these; ``deps_floor`` is the bound this SDK's
    dependencies (anyio on asyncio, pydantic) put under its cold start; ``echo`` and
    ``tutorial`` are the examples users start from."""
    code = f"from bench.cold_start import agents, one_start; print(*one_start(agents()[{agent!r}]))"
    done = subprocess.run(
        [sys.executable, "-c", code],
        cwd=REPO,
        env=ENV,
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    initialized, first_update, cpu = map(float, done.stdout.split())
    assert 0 < initialized <= first_update
    assert cpu > 0


RUN_AGENT_IMPORTS = """
import json, sys
from acp_generated.v1 import AgentHandler, InitializeRequest, InitializeResponse
from acp_runtime import ConnectionBuilder, Responder, run_agent

class Agent(AgentHandler):
    async def initialize(
        self, params: InitializeRequest, responder: Responder[InitializeResponse]
    ) -> InitializeResponse:
        return InitializeResponse(protocol_version=1)

Agent().attach(ConnectionBuilder(role="agent"))
InitializeResponse(protocol_version=1)
LAZY = ("difflib", "acp_runtime._process", "acp_runtime._whatwg_url", "pydantic.type_adapter")
print(json.dumps({"imported": sorted(m for m in LAZY if m in sys.modules)}))
"""


def test_an_agent_on_run_agent_imports_no_process_spawning_typo_hints_or_url_parser() -> None:
    """``run_agent``'s module spawns no process (``connect_to_agent`` imports
    ``acp_runtime._process`` when it spawns one), ``difflib`` words only a refused handler
    method or a constructor's typo, the WHATWG URL parser checks only a URI the plain
    pattern does not take, and a method binding needs pydantic's ``TypeAdapter`` only for
    params or a result that is not a model: an agent's start pays for none of them (issue 34)."""
    assert run(RUN_AGENT_IMPORTS)["imported"] == []


REGISTER_THEN_USE = """
import json, sys
from acp_generated import v1
from acp_runtime import ConnectionBuilder

class Agent(v1.AgentHandler):
    async def initialize(self, params, responder): ...
    async def new_session(self, params, responder): ...
    async def prompt(self, params, responder): ...
    async def cancel(self, params): ...

Agent().attach(ConnectionBuilder(role="agent"))
registered = sorted(m for m in sys.modules if "._models." in m)
prompt = v1.methods.SESSION_PROMPT.params.type  # a binding's first use creates its class
created_first = v1.InitializeRequest  # and a class created first links its binding
print(json.dumps({
    "registered": registered,
    "prompt_linked": prompt.__acp_method__ is v1.methods.SESSION_PROMPT,
    "initialize_linked": created_first.__acp_method__ is v1.methods.INITIALIZE,
}))
"""


def test_registering_a_handler_creates_no_model_class_and_either_side_links_the_other() -> None:
    """A binding names its params and result classes (``ModelRef``) and imports them on
    their first use, so attaching a handler of four methods creates none of the ~50 classes
    they refer to (issue 34); the params class is linked to its binding (``__acp_method__``)
    whichever of the two is made first."""
    assert run(REGISTER_THEN_USE) == {
        "registered": [],
        "prompt_linked": True,
        "initialize_linked": True,
    }


ECHO_REGISTERED = """
import json, sys
sys.path.insert(0, "examples")
from acp_runtime import ConnectionBuilder
import echo_agent
echo_agent.EchoAgent().attach(ConnectionBuilder(role="agent"))
print(json.dumps(sorted(m for m in sys.modules if "._models." in m)))
"""


def test_the_echo_example_creates_no_model_class_before_its_first_message() -> None:
    """It names its models as ``v1.X`` where it uses them, so importing it and registering
    its handler imports no model module: the 26 names it imported at the top created 108
    classes, about 30 ms of its start (issue 34)."""
    assert run(ECHO_REGISTERED, cwd=REPO) == []


HELPERS_ALONE = """
import json, sys
from acp_generated import v1
v1.PermissionOption, v1.SelectedRequestPermissionOutcome, v1.AgentCapabilities
print(json.dumps(sorted(m.rsplit(".", 1)[1] for m in sys.modules if "._models." in m)))
"""


def test_a_model_a_handler_builds_alone_creates_no_message_class() -> None:
    """A message's module (a method's params or result) holds no other definition, so the
    permission options and the outcome the tutorial builds at import, or an agent's
    capabilities, do not create ``RequestPermissionRequest`` and the tool call, content
    block and capability classes it refers to (27 classes, issue 34)."""
    modules = run(HELPERS_ALONE)
    assert "request_permission_response" not in modules
    assert "initialize_response" not in modules
    helpers = {"permission_option", "selected_request_permission_outcome", "agent_capabilities"}
    assert helpers <= set(modules)


DEFAULTS_BUILD_NOTHING = """
import json
from acp_generated import v1
v1.InitializeRequest.model_validate({"protocolVersion": 1})  # its capabilities: defaults
v1.AgentCapabilities(load_session=True)  # its prompt, MCP, session and auth ones: too
capabilities = [
    v1.ClientCapabilities, v1.FileSystemCapabilities, v1.AuthCapabilities,
    v1.PromptCapabilities, v1.McpCapabilities, v1.SessionCapabilities, v1.AgentAuthCapabilities,
]
print(json.dumps(sorted(c.__name__ for c in capabilities if c.__pydantic_complete__)))
"""


def test_a_schema_default_builds_no_validator() -> None:
    """The capabilities a peer leaves out are filled in with ``model_construct`` calls
    (``codegen/postprocess.py``), not validated from the schema's JSON default: parsing an
    ``initialize`` without capabilities, or constructing ``AgentCapabilities``, builds no
    capability model's validator (issue 34: 5 of the 9 builds before the echo example's
    ``initialize`` answer)."""
    assert run(DEFAULTS_BUILD_NOTHING) == []
