"""Run inside an environment where the built wheels are installed: a client and an agent in
one process over the in-memory transport, for the protocol version given as argv[1].

Also checks that everything imported comes from that environment's site-packages (not a
source tree), and which generated packages are installed: all of them side by side, or with
``--alone`` only the one under test.
"""

from __future__ import annotations

import importlib
import importlib.util
import sys
import sysconfig
from pathlib import Path
from typing import Any

import anyio

import acp_runtime
from acp_runtime import ConnectionBuilder, memory_pair

# Wire payloads that differ between protocol versions; everything else is shared code.
_INFO = {"name": "roundtrip", "version": "0"}
INITIALIZE: dict[str, dict[str, Any]] = {
    "v1": {"protocolVersion": 1, "clientInfo": _INFO},
    "v2": {"protocolVersion": 2, "info": _INFO},
}
# v2: a prompt response only says the user message was inserted; the turn goes on.
PROMPTED: dict[str, dict[str, Any]] = {"v1": {"stopReason": "end_turn"}, "v2": {"messageId": "u1"}}
CHUNK_EXTRA: dict[str, dict[str, Any]] = {"v1": {}, "v2": {"messageId": "m1"}}
INITIALIZED: dict[str, dict[str, Any]] = {
    "v1": {"protocolVersion": 1, "agentInfo": _INFO},
    "v2": {"protocolVersion": 2, "info": _INFO},
}


GENERATED = ("v1", "v2")


def check_installed(protocols: list[str]) -> None:
    """The runtime and ``protocols`` import from site-packages; other versions are absent."""
    site = Path(sysconfig.get_paths()["purelib"]).resolve()
    modules = [acp_runtime]
    for protocol in protocols:
        modules.append(importlib.import_module(f"acp_generated.{protocol}"))
        modules.append(importlib.import_module(f"acp_generated.{protocol}.unstable"))
    for module in modules:
        location = Path(module.__file__ or "").resolve()
        assert location.is_relative_to(site), f"{module.__name__} imported from {location}"
    for absent in set(GENERATED) - set(protocols):
        assert importlib.util.find_spec(f"acp_generated.{absent}") is None, absent


async def round_trip(protocol: str) -> None:
    acp: Any = importlib.import_module(f"acp_generated.{protocol}")
    methods: Any = importlib.import_module(f"acp_generated.{protocol}.methods")
    updates: list[str] = []
    session_updated = anyio.Event()

    class Agent(acp.AgentHandler):  # type: ignore[misc]
        async def initialize(self, params: Any, responder: Any) -> Any:
            assert params.protocol_version == INITIALIZE[protocol]["protocolVersion"]
            return acp.InitializeResponse.model_validate(INITIALIZED[protocol])

        async def new_session(self, params: Any, responder: Any) -> Any:
            return acp.NewSessionResponse(session_id=f"session-in-{params.cwd}")

        async def prompt(self, params: Any, responder: Any) -> Any:
            [block] = params.prompt
            chunk = {
                "sessionUpdate": "agent_message_chunk",
                "content": {"type": "text", "text": block.text.upper()},
                **CHUNK_EXTRA[protocol],
            }
            update = {"sessionId": params.session_id, "update": chunk}
            responder.connection.send_notification(
                methods.SESSION_UPDATE, methods.SESSION_UPDATE.params.load(update)
            )
            return acp.PromptResponse.model_validate(PROMPTED[protocol])

    class Client(acp.ClientHandler):  # type: ignore[misc]
        async def session_update(self, params: Any, cx: Any) -> None:
            updates.append(params.update.content.text)
            session_updated.set()

    agent_builder = ConnectionBuilder(role="agent")
    Agent().attach(agent_builder)
    client_builder = ConnectionBuilder(role="client")
    Client().attach(client_builder)

    client_end, agent_end = memory_pair()
    with anyio.fail_after(10):
        async with anyio.create_task_group() as tg:
            tg.start_soon(agent_builder.serve, agent_end)
            async with client_builder.connect(client_end) as cx:
                init = await cx.send_request(
                    acp.InitializeRequest.model_validate(INITIALIZE[protocol])
                )
                assert init.protocol_version == INITIALIZE[protocol]["protocolVersion"]
                session = await cx.send_request(acp.NewSessionRequest(cwd="/tmp", mcp_servers=[]))
                assert session.session_id == "session-in-/tmp"
                prompt = acp.PromptRequest(
                    session_id=session.session_id,
                    prompt=[acp.TextContentBlock(type="text", text="hello")],
                )
                response = await cx.send_request(prompt)
                await session_updated.wait()
    assert response.model_dump(by_alias=True, exclude_unset=True) == PROMPTED[protocol]
    assert updates == ["HELLO"], updates


def main() -> None:
    """``roundtrip_installed.py [--alone] PROTOCOL``: without ``--alone``, every generated
    package must be installed (side by side); with it, only PROTOCOL's."""
    args = sys.argv[1:]
    alone = args[0] == "--alone"
    protocol = args[-1]
    check_installed([protocol] if alone else list(GENERATED))
    anyio.run(round_trip, protocol)
    print(f"{protocol}: round trip ok")


if __name__ == "__main__":
    main()
