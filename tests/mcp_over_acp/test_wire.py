"""The binding's wire values agree with the generated ACP models, the capability helpers
read both protocol versions, and nothing of it needs the MCP SDK until it is used."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest

from acp_generated.v1.unstable import InitializeResponse as V1Initialize
from acp_generated.v1.unstable import MessageMcpNotification as V1Notification
from acp_generated.v1.unstable import MessageMcpRequest as V1Request
from acp_generated.v1.unstable import methods as v1_methods
from acp_generated.v2.unstable import Implementation as V2Implementation
from acp_generated.v2.unstable import InitializeResponse as V2Initialize
from acp_generated.v2.unstable import MessageMcpNotification as V2Notification
from acp_generated.v2.unstable import MessageMcpRequest as V2Request
from acp_generated.v2.unstable import methods as v2_methods
from acp_runtime.mcp import McpError, accepts_mcp_over_acp, advertise_mcp_over_acp
from acp_runtime.mcp._wire import (
    MCP_MESSAGE,
    error_carrier,
    result_carrier,
    stateless_message,
    with_request_meta,
)

GENERATED = [
    (V1Request, V1Notification, v1_methods.MCP_MESSAGE),
    (V2Request, V2Notification, v2_methods.MCP_MESSAGE),
]


@pytest.mark.parametrize(("request_model", "notification_model", "binding"), GENERATED)
def test_our_envelopes_and_carriers_are_the_generated_mcp_message(
    request_model: type, notification_model: type, binding: object
) -> None:
    envelope = stateless_message("srv", "r1", "tools/list", {"_meta": {"k": 1}}, {"outer": 1})
    for model in (request_model, notification_model):
        parsed = model.model_validate(envelope)  # type: ignore[attr-defined]
        assert parsed.model_dump(mode="json", by_alias=True, exclude_unset=True) == envelope
    assert binding.name == MCP_MESSAGE  # type: ignore[attr-defined]
    results = binding.result  # type: ignore[attr-defined]
    for carrier in (
        result_carrier(None),
        result_carrier({"tools": []}),
        error_carrier(McpError(-32602, "bad", {"x": 1})),
        error_carrier(McpError(-32601, "no data")),
    ):
        assert results.dump(results.load(carrier)) == carrier


def test_request_meta_is_added_without_overriding_the_callers_keys() -> None:
    given = {"a": 1, "_meta": {"io.modelcontextprotocol/protocolVersion": "x", "progressToken": 3}}
    assert with_request_meta(given, {"c": {}}, {"name": "n"}) == {
        "a": 1,
        "_meta": {
            "io.modelcontextprotocol/protocolVersion": "x",
            "progressToken": 3,
            "io.modelcontextprotocol/clientCapabilities": {"c": {}},
            "io.modelcontextprotocol/clientInfo": {"name": "n"},
        },
    }
    assert with_request_meta(None, {}, None) == {
        "_meta": {
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientCapabilities": {},
        }
    }


def test_the_acp_capability_is_advertised_and_read_in_v1_and_v2() -> None:
    v1 = V1Initialize(protocol_version=1)
    v2 = V2Initialize(protocol_version=2, info=V2Implementation(name="a", version="1"))
    assert not accepts_mcp_over_acp(v1) and not accepts_mcp_over_acp(v2)
    v1_on, v2_on = advertise_mcp_over_acp(v1), advertise_mcp_over_acp(v2)
    assert isinstance(v1_on, V1Initialize) and isinstance(v2_on, V2Initialize)
    assert v1_on.agent_capabilities.mcp_capabilities.acp is True
    assert v2_on.model_dump(mode="json", by_alias=True, exclude_unset=True)["capabilities"] == {
        "session": {"mcp": {"acp": {}}}
    }
    assert accepts_mcp_over_acp(v1_on) and accepts_mcp_over_acp(v2_on)
    assert accepts_mcp_over_acp(
        {"protocolVersion": 1, "agentCapabilities": {"mcpCapabilities": {"acp": True}}}
    )
    assert not accepts_mcp_over_acp({"protocolVersion": 2, "capabilities": {"session": None}})
    assert not accepts_mcp_over_acp("junk")


def test_the_runtime_and_the_binding_import_without_the_mcp_sdk() -> None:
    """With ``mcp`` unimportable, ``import acp_runtime`` and a plain handler work; an MCP
    SDK server or a ClientSession is what needs the extra."""
    script = textwrap.dedent(
        """
        import sys
        sys.modules["mcp"] = None  # as if the extra were not installed
        import acp_runtime
        import acp_runtime.mcp as binding
        assert "mcp_types" not in sys.modules
        from acp_runtime import ConnectionBuilder
        binding.McpProvider().attach(ConnectionBuilder(role="client"))
        binding.McpCaller().attach(ConnectionBuilder(role="agent"))
        try:
            import acp_runtime.mcp._sdk_server
        except ImportError:
            print("needs-extra")
        """
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, check=False
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "needs-extra"


def test_the_cancel_latency_benchmark_runs() -> None:
    """``bench/mcp_cancel_bench.py --quick`` runs and its JSON parses (no timing asserts)."""
    import json
    from pathlib import Path

    bench = Path(__file__).resolve().parents[2] / "bench" / "mcp_cancel_bench.py"
    done = subprocess.run(
        [sys.executable, str(bench), "--quick", "--backend", "trio"],
        capture_output=True,
        text=True,
        check=False,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    record = json.loads(done.stdout)
    assert record["benchmark"] == "mcp_cancel" and record["rounds"] == 10
    assert set(record) >= {"plain", "turn_request", "turn_mcp_call"}
