"""Typed layer under hostile params: the example agent (generated v1 handlers) fed real
client requests whose params hypothesis has mutated.

Whatever the params, the request gets exactly one response with its id: a result, or
-32602 with a validation summary when the v1 models refuse the params, never a crashed
handler (-32603) and never a dead connection. The agent's own requests to the client
are refused with -32601 by the rig.
"""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from anyio.from_thread import start_blocking_portal
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from acp_runtime import ConnectionBuilder
from acp_runtime.testing import WirePeer, wire_connection

from .wire_strategies import corpus, json_values

EXAMPLE_AGENT = Path(__file__).parents[2] / "examples" / "echo_agent.py"
METHODS = ("initialize", "session/new", "session/prompt", "_echo/ping")
SLOW_COMMANDS = ("sleep", "permission")
"""Prompts that wait for time or for the client: left out, the rig answers at once."""
QUICK_EXAMPLES = 100
SLOW_EXAMPLES = 3_000


def load_example_agent() -> ModuleType:
    spec = importlib.util.spec_from_file_location("reliability_echo_agent", EXAMPLE_AGENT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def client_requests() -> list[dict[str, Any]]:
    messages = [json.loads(line) for line in corpus()]
    return [
        m
        for m in messages
        if m.get("method") in METHODS
        and "id" in m
        and not any(word in json.dumps(m) for word in SLOW_COMMANDS)
    ]


@st.composite
def mutated(draw: st.DrawFn, value: Any) -> Any:
    """``value`` with one node replaced, dropped, or given an unknown key."""
    if isinstance(value, dict) and value and draw(st.booleans()):
        key = draw(st.sampled_from(sorted(value)))
        copy = dict(value)
        action = draw(st.sampled_from(["recurse", "replace", "drop", "extra"]))
        if action == "recurse":
            copy[key] = draw(mutated(copy[key]))
        elif action == "replace":
            copy[key] = draw(json_values)
        elif action == "drop":
            del copy[key]
        else:
            copy[draw(st.text(max_size=8))] = draw(json_values)
        return copy
    if isinstance(value, list) and value and draw(st.booleans()):
        index = draw(st.integers(0, len(value) - 1))
        return [*value[:index], draw(mutated(value[index])), *value[index + 1 :]]
    return draw(json_values)


class TypedRig:
    def __init__(self, peer: WirePeer) -> None:
        self.peer = peer
        self.count = 0
        self.codes: dict[Any, int] = {}

    async def run(self, request: dict[str, Any]) -> None:
        self.count += 1
        request_id = f"typed-{self.count}"
        await self.peer.send({**request, "id": request_id})
        while True:
            message = await self.peer.receive()
            if "method" in message and "id" in message:  # the agent asks the client
                refusal = {"code": -32601, "message": "Method not found"}
                await self.peer.send({"jsonrpc": "2.0", "id": message["id"], "error": refusal})
            elif "method" not in message:
                break
        code = message["error"]["code"] if "error" in message else "result"
        if isinstance(request["params"], (dict, list)) or request["params"] is None:
            assert message["id"] == request_id, message
        else:  # not even a valid envelope: -32600, id null
            assert (message["id"], code) == (None, -32600), message
        assert code != -32603, (request, message)
        self.codes[code] = self.codes.get(code, 0) + 1


def fuzz_typed(backend: str, examples: int) -> dict[Any, int]:
    builder = ConnectionBuilder(role="agent")
    load_example_agent().EchoAgent().attach(builder)
    requests = client_requests()
    with (
        start_blocking_portal(backend) as portal,
        portal.wrap_async_context_manager(wire_connection(builder)) as (cx, peer),
    ):
        rig = TypedRig(peer)

        @settings(
            max_examples=examples,
            deadline=None,
            database=None,
            suppress_health_check=[HealthCheck.too_slow],
        )
        @given(data=st.data())
        def case(data: st.DataObject) -> None:
            request = data.draw(st.sampled_from(requests))
            params = data.draw(mutated(request.get("params")))
            portal.call(rig.run, {**request, "params": params})

        case()
        portal.call(peer.receive_nothing_until_barrier)
        assert cx.pending_request_count == 0
    print(f"\n[typed fuzz {backend}] {rig.count} mutated requests, outcomes {rig.codes}")
    return rig.codes


@pytest.mark.parametrize("backend", ["asyncio", "trio"])
def test_mutated_params_get_one_answer_and_never_crash_a_typed_handler(backend: str) -> None:
    codes = fuzz_typed(backend, QUICK_EXAMPLES)
    assert codes.get("result") and codes.get(-32602)


@pytest.mark.slow
@pytest.mark.parametrize("backend", ["asyncio", "trio"])
def test_long_typed_fuzz(backend: str) -> None:
    fuzz_typed(backend, SLOW_EXAMPLES)
