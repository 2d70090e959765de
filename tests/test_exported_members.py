"""The public surface of ``acp_runtime`` is pinned here, as httpx pins its own.

The root exports what an author needs; plumbing lives in a few public submodules, each a
facade with an ``__all__`` over private (``_``-named) modules. A name added to or dropped
from the surface is a change of API: it fails here until this file says so.
``docs/architecture.md`` ("Public API") says why each name is where it is.
"""

from __future__ import annotations

import ast
import importlib
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
RUNTIME = ROOT / "src" / "acp_runtime"

ROOT_NAMES = [
    "AgentProcess",
    "CancellationMarker",
    "Connection",
    "ConnectionBuilder",
    "DeadlockError",
    "ErrorCode",
    "JsonValue",
    "NotificationMethod",
    "Peer",
    "RequestCancellationHandle",
    "RequestError",
    "RequestId",
    "RequestMethod",
    "Responder",
    "SentRequest",
    "Transport",
    "connect_to_agent",
    "memory_pair",
    "not_a_handler",
    "run_agent",
    "serve_agent",
    "spawn_agent",
    "stdio_transport",
]

SUBMODULE_NAMES: dict[str, list[str]] = {
    "transports": [
        "DEFAULT_HIGH_WATER_BYTES",
        "DEFAULT_MAX_MESSAGE_BYTES",
        "AgentProcess",
        "LineTransport",
        "MemoryTransport",
        "MessageTooLarge",
        "StderrHandling",
        "Transport",
        "memory_pair",
        "spawn_agent",
        "stdio_transport",
    ],
    "proxies": [
        "COUNTERPART",
        "SUCCESSOR",
        "ConductedProxy",
        "Peer",
        "ProxiedMessage",
        "ProxiedNotification",
        "ProxiedRequest",
        "Proxy",
        "Routed",
        "SuccessorPeer",
        "VersionRouter",
    ],
    "tracing": [
        "ConnectionObserver",
        "Instrumentation",
        "RequestSpan",
        "StderrLogHandler",
        "TraceEvent",
        "TraceSink",
        "TracingTransport",
        "jsonl_sink",
        "log_nothing",
        "log_to_stderr",
        "logging_sink",
    ],
    "codegen_support": [
        "AcpModel",
        "DefaultOnError",
        "DefaultOnNull",
        "JsonInt",
        "JsonValue",
        "LazyUnion",
        "LeftToRight",
        "ModelRef",
        "NotNull",
        "NotificationMethod",
        "RequestMethod",
        "SerializeAsAny",
        "SkipInvalidItems",
        "Tagged",
        "TypedNotification",
        "TypedRequest",
        "UriFormat",
        "given",
        "lazy_bindings",
        "lazy_exports",
        "listed",
        "refuse_unknown_methods",
        "unknown_tag",
    ],
    "contrib": [
        "Message",
        "PermissionBroker",
        "PermissionDecision",
        "PromptTurns",
        "SessionAccumulator",
        "SessionState",
        "ToolCallState",
        "ToolCallTracker",
        "TrackedToolCall",
        "Turn",
    ],
    "otel": ["TRACER_NAME", "Tracing", "instrument"],
    "mcp": [
        "MCP_PROTOCOL_VERSION",
        "Binding",
        "BindingErrorCode",
        "DeclaredServer",
        "McpCaller",
        "McpConnection",
        "McpError",
        "McpHandler",
        "McpNotification",
        "McpProvider",
        "McpRequest",
        "McpServerRegistration",
        "ServerBackend",
        "accepts_mcp_over_acp",
        "acp_servers",
        "advertise_mcp_over_acp",
    ],
    "remote": [
        "AcpApp",
        "Authenticate",
        "CookieStore",
        "HandlerFactory",
        "HttpConnection",
        "HttpLimits",
        "HttpTransport",
        "Refusal",
        "Servable",
        "StreamableHttpApp",
        "WebSocketApp",
        "WebSocketOptions",
        "WebSocketTransport",
        "WebSocketUpgradeError",
        "acp_app",
        "connect_http",
        "connect_remote",
        "connect_to_remote_agent",
        "connect_websocket",
        "http_app",
        "serve_websocket",
        "websocket_app",
    ],
}

UNPINNED = ["testing", "testing.v1", "testing.v2", "testing.pytest_plugin", "check"]
"""Public, their ``__all__`` not pinned yet: the test helpers (``acp_runtime.testing``; a
user's tests import ``testing.v1``/``v2`` and enable ``testing.pytest_plugin``) and the
conformance check (``python -m acp_runtime.check``), both new."""

PUBLIC_MODULES = {"acp_runtime"} | {f"acp_runtime.{name}" for name in [*SUBMODULE_NAMES, *UNPINNED]}

FOR_GENERATED_CODE = {"acp_runtime.codegen_support"}
"""Public for the generated packages only: hand-written docs and examples do not import it."""

def test_the_root_exports_the_pinned_names() -> None:
    import acp_runtime

    assert sorted(acp_runtime.__all__) == ROOT_NAMES
    assert len(ROOT_NAMES) <= 25


@pytest.mark.parametrize("name", sorted(SUBMODULE_NAMES))
def test_each_public_submodule_exports_its_pinned_names(name: str) -> None:
    module = importlib.import_module(f"acp_runtime.{name}")
    assert sorted(module.__all__) == sorted(SUBMODULE_NAMES[name])


@pytest.mark.parametrize(
    "module_name", sorted(PUBLIC_MODULES - {f"acp_runtime.{n}" for n in UNPINNED})
)
def test_every_exported_name_resolves_and_is_public_or_reexported(module_name: str) -> None:
    """Each name imports, and what defines it is the module itself or a private one."""
    module = importlib.import_module(module_name)
    for name in module.__all__:
        value = getattr(module, name)
        defined_in = getattr(value, "__module__", None)
        if not isinstance(defined_in, str) or not defined_in.startswith("acp_runtime"):
            continue  # a constant, an alias, or a value of another package
        private = any(part.startswith("_") for part in defined_in.split("."))
        assert defined_in == module_name or private or defined_in.startswith(module_name + "."), (
            f"{module_name}.{name} is defined in {defined_in}, a public module"
        )


@pytest.mark.parametrize("name", ["transports", "proxies", "tracing"])
def test_the_root_and_the_facades_agree_on_shared_names(name: str) -> None:
    import acp_runtime

    module = importlib.import_module(f"acp_runtime.{name}")
    for shared in set(module.__all__) & set(acp_runtime.__all__):
        assert getattr(module, shared) is getattr(acp_runtime, shared)


def public_runtime_modules() -> set[str]:
    """Every module of ``acp_runtime`` no part of whose dotted name starts with ``_``."""
    found: set[str] = set()
    for path in RUNTIME.rglob("*.py"):
        parts = path.relative_to(RUNTIME.parent).with_suffix("").parts
        parts = parts[:-1] if parts[-1] == "__init__" else parts
        name = ".".join(parts)
        if any(part.startswith("_") for part in parts):
            continue
        found.add(name)
    return found


def test_no_public_module_exists_beyond_the_listed_ones() -> None:
    assert public_runtime_modules() == PUBLIC_MODULES


# What docs and examples may import: the root and the documented public submodules.
_IMPORT = re.compile(
    r"^\s*(?:from\s+(acp_runtime[\w.]*)\s+import|import\s+(acp_runtime[\w.]*))", re.M
)


def imported_runtime_modules(text: str) -> set[str]:
    return {from_ or plain for from_, plain in _IMPORT.findall(text)}


def documented_sources() -> list[Path]:
    docs = sorted((ROOT / "docs").rglob("*.md"))
    return [ROOT / "README.md", *docs, *sorted((ROOT / "examples").rglob("*.py"))]


@pytest.mark.parametrize("path", documented_sources(), ids=lambda p: str(p.relative_to(ROOT)))
def test_docs_and_examples_import_only_the_public_surface(path: Path) -> None:
    allowed = PUBLIC_MODULES - FOR_GENERATED_CODE
    text = path.read_text(encoding="utf-8")
    if path.suffix == ".py":
        ast.parse(text)  # a real module, so the pattern sees every import line
    bad = sorted(imported_runtime_modules(text) - allowed)
    assert bad == [], f"{path.name} imports private or undocumented modules: {bad}"


def test_the_import_scan_sees_private_and_submodule_imports() -> None:
    text = (
        "from acp_runtime._stdio import x\n"
        "    import acp_runtime.remote._sse\n"
        "from acp_runtime import y\n"
    )
    assert imported_runtime_modules(text) == {
        "acp_runtime._stdio",
        "acp_runtime.remote._sse",
        "acp_runtime",
    }
