"""One agent for v1 and v2, over real pipes: examples/router_agent.py (our VersionRouter)
and peers/router_agent.mjs (the TypeScript SDK's agentProtocolRouter) answer the same.

* the TypeScript v1 and v2 clients drive our router agent through their flows;
* the Python client drives both router agents with protocol versions 1, 2, 3, "1" and 0
  and the traffic a router must answer before ``initialize``;
* with the reporting agents (``--report``), both routers must hand the chosen version
  the same ``initialize`` params.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import anyio
import pytest

from acp_generated import v1, v2
from acp_generated.v1 import CancelNotification
from acp_runtime import (
    ConnectionBuilder,
    JsonValue,
    RequestError,
    Responder,
    Transport,
    memory_pair,
    spawn_agent,
)
from acp_runtime.proxies import VersionRouter
from acp_runtime.testing import notification, request, result

from .node_peers import (
    router_agent_command,
    run_ts_client,
    run_ts_v2_client,
    ts_agent_command,
    ts_router_agent_command,
)
from .scenarios import NOTES_PATH, NOTES_TEXT, V2_LONG_PROMPT, V2_PROMPT, WORKSPACE
from .test_python_client_vs_agents import STARTUP_TIMEOUT, STEP_TIMEOUT, session
from .test_ts_client_vs_echo_agent import comparable
from .test_v2_interop import by_kind, check_v2_turns, run_v2_turns

ROUTERS: dict[str, Callable[..., list[str]]] = {
    "ts-router": ts_router_agent_command,
    "python-router": router_agent_command,
}
INFO: dict[str, JsonValue] = {"name": "interop", "version": "1.0"}


@pytest.fixture(params=sorted(ROUTERS))
def router(request: pytest.FixtureRequest) -> str:
    if request.param == "ts-router":
        request.getfixturevalue("node")  # skips without Node.js
    return str(request.param)


def initialize(request_id: JsonValue, version: JsonValue, **params: JsonValue) -> dict[str, Any]:
    return request(request_id, "initialize", {"protocolVersion": version, **params})


async def exchange(transport: Transport, message: JsonValue) -> dict[str, Any]:
    await transport.send(json.dumps(message).encode())
    with anyio.fail_after(STARTUP_TIMEOUT):
        reply: dict[str, Any] = json.loads(await transport.receive())
    return reply


# -- the TypeScript clients drive our router agent -----------------------------------------


ROUTED_V1_FLOW = {
    "cwd": WORKSPACE,
    "files": {NOTES_PATH: NOTES_TEXT},
    "steps": [
        {"op": "prompt", "text": "hello through the router"},
        {"op": "prompt", "text": "permission"},
        {"op": "prompt", "text": f"read {NOTES_PATH}"},
        {"op": "prompt", "text": "sleep 10000", "as": "sleep", "wait": False},
        {"op": "cancel"},
        {"op": "await", "target": "sleep"},
        {"op": "prompt", "text": "sleep 10000", "as": "aborted", "wait": False},
        {"op": "abort", "target": "aborted"},
        {"op": "await", "target": "aborted"},
        {"op": "request", "method": "_echo/ping", "params": {"n": 1}},
    ],
}
"""Streaming, a permission round trip, a file read, both cancellations, an extension."""


def test_ts_v1_client_sees_the_router_agent_as_the_ts_agent(node: str) -> None:
    ours = run_ts_client(router_agent_command("--quiet"), ROUTED_V1_FLOW)
    theirs = run_ts_client(ts_agent_command("--quiet"), ROUTED_V1_FLOW)
    assert comparable(ours) == comparable(theirs)
    outcomes = {e["as"]: e for e in ours if "as" in e}
    assert outcomes["sleep"]["result"] == {"stopReason": "cancelled"}
    assert outcomes["aborted"]["error"]["code"] == -32800
    assert [e["event"] for e in ours].count("permission_request") == 1
    assert NOTES_TEXT in [
        e["update"]["content"].get("text") for e in ours if e["event"] == "update"
    ]


def test_ts_v2_client_gets_the_v2_agent_behind_the_router(node: str) -> None:
    events = run_ts_v2_client(
        router_agent_command("--quiet"), V2_PROMPT, V2_LONG_PROMPT, cwd=WORKSPACE
    )
    init = events[0]["result"]
    assert (init["protocolVersion"], init["info"]["name"]) == (2, "python-v2-agent")
    seen = by_kind(events)
    assert seen["chunks"] == ["hello", " v2", " from", " ts"]
    assert seen["states"] == [
        ("running", None),
        ("idle", "end_turn"),
        ("running", None),
        ("idle", "cancelled"),
    ]


# -- the Python client drives both router agents -----------------------------------------------


@pytest.mark.anyio
async def test_v1_flow_behind_the_router(router: str, tmp_path: Path) -> None:
    """initialize 1, session/new, permission round trip, a file read, both cancellations."""
    notes = tmp_path / "notes.txt"
    notes.write_text("routed \u2603\n")
    async with session(ROUTERS[router]("--quiet")) as s:
        with anyio.fail_after(STEP_TIMEOUT):
            permission = await s.prompt("permission")
            await s.prompt(f"read {notes}")
            turn = s.prompt("sleep 20000")
            s.cx.send_notification(CancelNotification(session_id=s.session_id))
            cancelled = await turn
            turn = s.prompt("sleep 20000")
            turn.cancel()
            with pytest.raises(RequestError) as aborted:
                await turn
            after = await s.prompt("after")
    assert permission.stop_reason == "end_turn" and cancelled.stop_reason == "cancelled"
    assert aborted.value.code == -32800
    assert after.stop_reason == "end_turn"
    texts = s.client.texts()
    assert texts[:2] == ["permission:selected:allow", "routed \u2603\n"]
    assert "".join(texts[2:]) == "after"


@pytest.mark.anyio
@pytest.mark.parametrize("version", [2, 3])
async def test_v2_flow_behind_the_router(router: str, version: int) -> None:
    check_v2_turns(await run_v2_turns(ROUTERS[router]("--quiet"), protocol_version=version))


@pytest.mark.anyio
async def test_rejected_initializes_leave_the_connection_usable(router: str) -> None:
    builder = ConnectionBuilder(role="client")
    rejected: list[RequestError] = []
    async with spawn_agent(ROUTERS[router]("--quiet"), stderr="discard") as process:
        async with builder.connect(process) as cx:
            with anyio.fail_after(STARTUP_TIMEOUT):
                for attempt in [
                    cx.send_raw_request("initialize", {"protocolVersion": "1"}),
                    cx.send_raw_request("initialize", {"protocolVersion": 0}),
                    cx.send_request(v1.NewSessionRequest(cwd="/", mcp_servers=[])),
                ]:
                    with pytest.raises(RequestError) as caught:
                        await attempt
                    rejected.append(caught.value)
                init = await cx.send_request(v1.InitializeRequest(protocol_version=1))
                new = await cx.send_request(v1.NewSessionRequest(cwd="/", mcp_servers=[]))
    assert [(e.code, e.data) for e in rejected] == [
        (-32602, "initialize.protocolVersion must be a valid ACP protocol version"),
        (-32022, {"requested": 0, "supported": [1, 2]}),
        (-32600, "first ACP request must be initialize"),
    ]
    assert init.protocol_version == 1 and new.session_id == "sess-1"


def invalid_request(data: str) -> dict[str, JsonValue]:
    return {"code": -32600, "message": "Invalid request", "data": data}


TS_WORDING = {
    "batch": {"code": -32600, "message": "Invalid request: JSON-RPC batches are not supported"},
    "v2 id": {
        "code": -32600,
        "message": "Invalid request: ACP v2 request IDs must be strings or integers",
    },
    "fractional id": {
        "code": -32600,
        "message": "Invalid request: ACP v2 request IDs must be strings or integers",
    },
}
OUR_WORDING = {
    "batch": invalid_request("empty batch"),
    "v2 id": invalid_request("ACP v2 request IDs must be strings or integers"),
    "fractional id": invalid_request('"id" must be a string, an integer or null'),
}
"""The replies whose wording differs (the code and the id do not; docs/version-router.md).
A fractional id is refused by our runtime on every route; the TS router passes it to v1."""


@pytest.mark.anyio
async def test_traffic_before_initialize_gets_the_same_answers(router: str) -> None:
    """Every reply exactly, in order; then initialize for 3 gets v2."""
    wording = OUR_WORDING if router == "python-router" else TS_WORDING
    sent: list[tuple[JsonValue, JsonValue, JsonValue]] = [  # message, reply id, error
        (
            request(1, "session/new", {"cwd": "/", "mcpServers": []}),
            1,
            invalid_request("first ACP request must be initialize"),
        ),
        (notification("session/cancel", {"sessionId": "s"}), None, None),
        (notification("$/cancel_request", {"requestId": 1}), None, None),
        (result(7, None), None, None),
        ([], None, wording["batch"]),
        (
            initialize(2, 0),
            2,
            {
                "code": -32022,
                "message": "Unsupported protocol version",
                "data": {"requested": 0, "supported": [1, 2]},
            },
        ),
        (
            initialize(3, "1"),
            3,
            {
                "code": -32602,
                "message": "Invalid params",
                "data": "initialize.protocolVersion must be a valid ACP protocol version",
            },
        ),
        (initialize(None, 2, info=INFO), None, wording["v2 id"]),
        (initialize(1.5, 2, info=INFO), None, wording["fractional id"]),
    ]
    expected = [
        {"jsonrpc": "2.0", "id": reply_id, "error": error}
        for _, reply_id, error in sent
        if error is not None
    ]
    async with spawn_agent(ROUTERS[router]("--quiet"), stderr="discard") as process:
        for message, _, _ in sent:
            await process.send(json.dumps(message).encode())
        with anyio.fail_after(STARTUP_TIMEOUT):
            replies = [json.loads(await process.receive()) for _ in expected]
        init = await exchange(process, initialize(4, 3, info=INFO))
    assert replies == expected
    assert init["id"] == 4 and init["result"]["protocolVersion"] == 2


# -- both routers hand the chosen version the same initialize --------------------------------

REWRITES: list[tuple[str, dict[str, JsonValue]]] = [
    (
        "1,2",
        {
            "protocolVersion": 1,
            "clientCapabilities": {"fs": {"readTextFile": True}},
            "clientInfo": INFO,
        },
    ),
    ("1,2", {"protocolVersion": 2, "info": INFO, "capabilities": {"auth": {"terminal": {}}}}),
    (
        "1,2",
        {
            "protocolVersion": 3,
            "info": {"name": "no version"},
            "capabilities": 5,
            "_meta": {"m": 1},
        },
    ),
    ("1", {"protocolVersion": 0}),
    (
        "1",
        {
            "protocolVersion": 2,
            "info": {**INFO, "title": "Interop"},
            "capabilities": {
                "auth": {"terminal": {}, "_meta": {"a": 1}},
                "elicitation": {"form": {}},
                "_meta": {"c": 1},
            },
            "_meta": {"t": 1},
        },
    ),
    ("1", {"protocolVersion": 3, "info": 5, "capabilities": {"auth": {"terminal": True}}}),
    ("2", {"protocolVersion": 7, "info": INFO, "capabilities": {"elicitation": {}}}),
]


def reporter(version: int) -> ConnectionBuilder:
    """Our twin of the agents of ``router_agent.mjs --report``."""

    async def report(method: str, params: JsonValue, responder: Responder[JsonValue]) -> JsonValue:
        return {
            "protocolVersion": version,
            "agentInfo" if version == 1 else "info": {"name": f"v{version}", "version": "1"},
            "_meta": {"initializeParams": params},
        }

    return ConnectionBuilder(role="agent").on_raw_request(report)


def reporting_router(versions: str) -> VersionRouter:
    chosen = {int(v) for v in versions.split(",")}
    return VersionRouter(
        v1=reporter(1) if 1 in chosen else None, v2=reporter(2) if 2 in chosen else None
    )


def as_handlers_read_it(answer: dict[str, Any]) -> JsonValue:
    """The initialize params in ``answer`` as the chosen version's typed model reads them
    (the TS v2 agent shows them after its own parse, which fills in defaults)."""
    version = answer["result"]["protocolVersion"]
    params = answer["result"]["_meta"]["initializeParams"]
    model = v1.InitializeRequest if version == 1 else v2.InitializeRequest
    return model.model_validate(params).model_dump(mode="json", by_alias=True, exclude_none=True)


async def ts_router_answer(versions: str, message: JsonValue) -> dict[str, Any]:
    command = ts_router_agent_command("--report", "--versions", versions)
    async with spawn_agent(command, stderr="discard") as process:
        return await exchange(process, message)


async def our_router_answer(versions: str, message: JsonValue) -> dict[str, Any]:
    ours, theirs = memory_pair()
    async with anyio.create_task_group() as tg:
        tg.start_soon(reporting_router(versions).serve, ours)
        reply = await exchange(theirs, message)
        theirs.close_send()
    return reply


@pytest.mark.anyio
async def test_both_routers_hand_the_chosen_version_the_same_initialize(node: str) -> None:
    messages = [request(1, "initialize", params) for _, params in REWRITES]
    theirs: list[dict[str, Any]] = [{}] * len(REWRITES)

    async def ask_ts(i: int) -> None:
        theirs[i] = await ts_router_answer(REWRITES[i][0], messages[i])

    async with anyio.create_task_group() as tg:  # one TS process per case, all at once
        for i in range(len(REWRITES)):
            tg.start_soon(ask_ts, i)
    for (versions, params), message, their in zip(REWRITES, messages, theirs, strict=True):
        ours = await our_router_answer(versions, message)
        case = f"{versions}: {params}"
        assert ours["result"]["protocolVersion"] == their["result"]["protocolVersion"], case
        assert as_handlers_read_it(ours) == as_handlers_read_it(their), case
        requested = params["protocolVersion"]
        if their["result"]["protocolVersion"] == 1 and isinstance(requested, int) and requested > 1:
            # translated for v1 by both routers (a v1-only one), and the TS reporting v1
            # agent shows the params as they came: they match exactly
            assert ours["result"]["_meta"] == their["result"]["_meta"], case
